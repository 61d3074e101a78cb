// ScaledCounts: counts of a duty-cycled interval scaled to the whole interval, with the
// variance of each estimate (thinning, or the drift of the rate between windows).
#include "agent/scaled_counts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <vector>

namespace eacgm::agent {
namespace {

std::shared_ptr<const ProbeInfo> probe(std::uint32_t id) {
  auto p = std::make_shared<ProbeInfo>();
  p->id = id;
  p->counted = p->cycled = true;
  return p;
}

CallCount count(std::uint32_t pid, std::shared_ptr<const ProbeInfo> p, std::uint64_t calls,
                std::uint64_t handle = 0, std::uint64_t bytes = 0) {
  CallCount c;
  c.pid = pid;
  c.probe = std::move(p);
  c.handle = handle;
  c.calls = calls;
  c.bytes = bytes;
  return c;
}

// Process `pid`, which exited in the interval (`lived`: the part of it it lived, where known).
ScaledCounts::ProcessInterval ended(std::uint32_t pid,
                                    std::optional<ScaledCounts::Span> lived = std::nullopt) {
  ScaledCounts::ProcessInterval p;
  p.pid = pid;
  p.exited = true;
  p.lived = lived;
  return p;
}

// Process `pid`, which made its calls `speedup` times faster unseen (with that relative variance).
ScaledCounts::ProcessInterval faster(std::uint32_t pid, double speedup, double variance = 0) {
  ScaledCounts::ProcessInterval p;
  p.pid = pid;
  p.speedup = speedup;
  p.speedup_variance = variance;
  return p;
}

TEST(ScaledCounts, AnIntervalAttachedThroughoutIsExact) {
  ScaledCounts s;
  s.hold(count(7, probe(1), 1234));
  auto out = s.release(1e9, 1e9);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].calls, 1234u);
  EXPECT_FALSE(out[0].estimated);
  EXPECT_EQ(out[0].variance, 0.0);
  EXPECT_TRUE(s.empty());
}

TEST(ScaledCounts, ScalesByTheAttachedShareWithTheThinningVariance) {
  ScaledCounts s;
  s.hold(count(7, probe(1), 1000, 0, 4096));
  // Attached a quarter of the second: 4000 calls, variance n (1 - f) / f^2 = 1000 x 0.75 x 16.
  auto out = s.release(1e9, 0.25e9);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].calls, 4000u);
  EXPECT_EQ(out[0].bytes, 16384u);
  EXPECT_TRUE(out[0].estimated);
  EXPECT_DOUBLE_EQ(out[0].variance, 1000 * 0.75 * 16);
}

TEST(ScaledCounts, ARateThatDriftsBetweenWindowsWidensTheError) {
  ScaledCounts s;
  auto p = probe(1);
  // Windows of 0.1 s: 10,000 calls/s, then 20,000 calls/s. The change (10,000/s)^2 / 2
  // times the 0.9 s unseen, squared, is far above the thinning variance.
  s.hold(count(7, p, 1000));
  (void)s.release(1e9, 0.1e9);
  s.hold(count(7, p, 2000));
  auto out = s.release(1e9, 0.1e9);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].calls, 20000u);
  const double drift = 1e8 / 2 * 0.81;
  EXPECT_DOUBLE_EQ(out[0].variance, drift);
  EXPECT_GT(drift, 2000 * 0.9 / 0.01);
}

TEST(ScaledCounts, CountsSplitByHandleShareTheirProbesVariance) {
  ScaledCounts s;
  auto p = probe(1);
  s.hold(count(7, p, 300, 0xa));
  s.hold(count(7, p, 100, 0xb));
  s.hold(count(8, p, 100));  // another process: its own estimate
  auto out = s.release(1e9, 0.5e9);
  ASSERT_EQ(out.size(), 3u);
  const double whole = 400 * 0.5 / 0.25;  // pid 7's thinning variance
  EXPECT_EQ(out[0].calls, 600u);
  EXPECT_DOUBLE_EQ(out[0].variance, whole * 0.75 * 0.75);
  EXPECT_EQ(out[1].calls, 200u);
  EXPECT_DOUBLE_EQ(out[1].variance, whole * 0.25 * 0.25);
  EXPECT_DOUBLE_EQ(out[2].variance, 100 * 0.5 / 0.25);
}

TEST(ScaledCounts, AnEmptyWindowStillScalesFromItsFloor) {
  ScaledCounts s;
  // Calls counted at the edges of a switch the log places outside the interval: the
  // window is taken as 1 ms, not 0 (no division by zero, a large error).
  s.hold(count(7, probe(1), 3));
  auto out = s.release(1e9, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].calls, 3000u);
  EXPECT_TRUE(out[0].estimated);
  EXPECT_GT(out[0].variance, 1e6);
}

TEST(ScaledCounts, AProcessThatEndedIsScaledOverThePartItLived) {
  ScaledCounts s;
  s.hold(count(7, probe(1), 100));
  s.hold(count(8, probe(1), 100));
  // Pid 7 lived 0.4 s of the second and was counted 0.1 s of it: x4. Pid 8 ended at a
  // moment not known: of the x10 of the whole second, half is added (x5.5), with a wider
  // error than the thinning alone.
  auto out = s.release(1e9, 0.1e9, {ended(7, ScaledCounts::Span{0.4e9, 0.1e9}), ended(8)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].calls, 400u);
  EXPECT_DOUBLE_EQ(out[0].variance, 100 * 0.75 / (0.25 * 0.25));
  EXPECT_EQ(out[1].calls, 550u);
  EXPECT_GT(out[1].variance, 100 * 0.9 / (0.1 * 0.1) + 900.0 * 900.0 / 12 - 1);
}

TEST(ScaledCounts, AMeasuredSpeedupPassesItsErrorOnToTheUnseenCalls) {
  ScaledCounts s;
  s.hold(count(7, probe(1), 1000));
  // Seen a tenth of the second, speedup 1.25 known to ±10% (relative variance 0.01): the
  // 11,250 unseen calls are known to ±1,125 at best.
  auto out = s.release(1e9, 0.1e9, {faster(7, 1.25, 0.01)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].calls, 12250u);
  EXPECT_GE(out[0].variance, 1125.0 * 1125.0);
}

TEST(ScaledCounts, AProcessThatEndedBeforeItsWindowGetsItsLastRates) {
  ScaledCounts s;
  auto p = probe(1);
  // A second seen a tenth of: 1,000 calls scaled to 10,000. Then it ends 0.3 s into an
  // interval whose window would have come later: 3,000, give or take half.
  s.hold(count(7, p, 1000));
  ASSERT_EQ(s.release(1e9, 0.1e9)[0].calls, 10000u);
  auto out = s.release(1e9, 0.1e9, {ended(7, ScaledCounts::Span{0.3e9, 0})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].calls, 3000u);
  EXPECT_TRUE(out[0].estimated);
  EXPECT_DOUBLE_EQ(out[0].variance, 1500.0 * 1500.0);
  // Forgotten once it has ended.
  EXPECT_TRUE(s.release(1e9, 0.1e9, {ended(7, ScaledCounts::Span{0.3e9, 0})}).empty());
}

TEST(ScaledCounts, AnIntervalWithoutAWindowGetsTheLastRatesUntilAWindowSeesNone) {
  // A short window falls in every K-th interval only: in between, a process scaled by
  // time is estimated at its last rates, ± half.
  ScaledCounts s;
  auto p = probe(1);
  s.hold(count(7, p, 2500));
  auto seen = s.release(1e9, 0.25e9);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].calls, 10000u);
  auto between = s.release(1e9, 0);
  ASSERT_EQ(between.size(), 1u);
  EXPECT_EQ(between[0].pid, 7u);
  EXPECT_EQ(between[0].calls, 10000u);
  EXPECT_TRUE(between[0].estimated);
  EXPECT_DOUBLE_EQ(between[0].variance, 5000.0 * 5000.0);
  // A window in which it made no call: it has stopped, and is not made up any more.
  EXPECT_TRUE(s.release(1e9, 0.25e9).empty());
  EXPECT_TRUE(s.release(1e9, 0).empty());
}

TEST(ScaledCounts, TheThreadsSlowdownWhileAttachedIsAddedToTheUnseenTime) {
  ScaledCounts s;
  s.hold(count(7, probe(1), 1000));
  // Attached 0.1 s, in which the thread spent 20% of its time in the traps: the unseen
  // 0.9 s went at 1000 / 0.1 / 0.8 = 12,500 calls a second.
  auto out = s.release(1e9, 0.1e9, {faster(7, 1 / 0.8)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].calls, 1000u + 11250u);
}

// A step of 300 launches and one synchronisation (pinned, counted all the time), 80
// steps a second; windows of a tenth of it.
void step_window(ScaledCounts& s, const std::shared_ptr<const ProbeInfo>& p, std::uint64_t steps_seen,
                 std::uint64_t steps) {
  s.hold(count(7, p, 300 * steps_seen));
  s.hold_pinned(7, steps, steps_seen);
}

// One interval of 1 s of process 7: `seen` calls of `p` counted (0: no row), `pinned` of
// its pinned calls, `windowed` of them inside the window, which lasted `attached_ns`.
std::vector<CallCount> interval(ScaledCounts& s, const std::shared_ptr<const ProbeInfo>& p,
                                std::uint64_t seen, std::uint64_t pinned, std::uint64_t windowed,
                                double attached_ns) {
  if (seen > 0) s.hold(count(7, p, seen));
  s.hold_pinned(7, pinned, windowed);
  return s.release(1e9, attached_ns);
}

// The interval process 7 ends in, as interval() (`wall_ns` long), having lived all of
// it: the calls of its one estimated row (0 and a failure if it has not one).
std::uint64_t last_interval(ScaledCounts& s, const std::shared_ptr<const ProbeInfo>& p, std::uint64_t seen,
                            std::uint64_t pinned, std::uint64_t windowed, double wall_ns,
                            double attached_ns) {
  if (seen > 0) s.hold(count(7, p, seen));
  s.hold_pinned(7, pinned, windowed);
  const auto out = s.release(wall_ns, attached_ns, {ended(7, ScaledCounts::Span{wall_ns, attached_ns})});
  EXPECT_EQ(out.size(), 1u);
  EXPECT_TRUE(out.size() == 1 && out[0].estimated);
  return out.size() == 1 ? out[0].calls : 0;
}

TEST(ScaledCounts, PinnedCallsAreTheYardstickWhereTheProcessHasThem) {
  ScaledCounts s;
  auto p = probe(1);
  // The window saw 16 of 160 steps: 4,800 launches stand for 48,000, whatever the time.
  step_window(s, p, 16, 160);
  auto out = s.release(1e9, 0.1e9, {faster(7, 1.5)});  // a speedup the ratio does not need
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].calls, 48000u);
  EXPECT_TRUE(out[0].estimated);
  EXPECT_GT(out[0].variance, 0.0);
}

TEST(ScaledCounts, AProcessThatStopsBeforeItsWindowIsEstimatedFromItsPinnedCalls) {
  ScaledCounts s;
  auto p = probe(1);
  for (int i = 0; i < 3; ++i) (void)(step_window(s, p, 8, 80), s.release(1e9, 0.1e9));
  // It made 50 steps and stopped; the window came after: nothing seen, 15,000 made.
  s.hold_pinned(7, 50, 0);
  auto out = s.release(1e9, 0.1e9);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].calls, 15000u);
  EXPECT_TRUE(out[0].estimated);
  // Then it idles until it exits, its last interval without a call: nothing is made up.
  s.hold_pinned(7, 0, 0);
  EXPECT_TRUE(s.release(1e9, 0.1e9, {ended(7, ScaledCounts::Span{0.6e9, 0.1e9})}).empty());
}

TEST(ScaledCounts, ARatioUsedForManyIntervalsCarriesTheErrorItGivesThemAll) {
  // The same windows (2,500 and 2,300 launches with 8 synchronisations, in turn), seen
  // every interval or in every third one only: between them, the intervals are scaled by
  // the same pooled ratio, so its error is theirs together, and each one reports it
  // three times as large (in variance) as when every interval has a window of its own.
  const auto last_variance = [](int every) {
    ScaledCounts s;
    auto p = probe(1);
    std::vector<CallCount> out;
    int window = 0;
    for (int i = 0; i < 12 * every; ++i) {
      if (i % every == 0) {
        s.hold(count(7, p, window++ % 2 ? 2300 : 2500));
        s.hold_pinned(7, 80, 8);
        out = s.release(1e9, 0.1e9);
      } else {
        s.hold_pinned(7, 80, 0);
        out = s.release(1e9, 0);
      }
    }
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? 0.0 : out[0].variance;
  };
  const double each = last_variance(1), third = last_variance(3);
  ASSERT_GT(each, 0.0);
  // (80 calls unseen in the windowless intervals, 72 in the others: (80/72)^2 more.)
  EXPECT_NEAR(third / each, 3.0 * (80.0 / 72) * (80.0 / 72), 1e-6);
}

TEST(ScaledCounts, WindowsThatCutStepsAverageOutInThePooledRatio) {
  ScaledCounts s;
  auto p = probe(1);
  // Windows catch partial steps: 2,500 launches with 8 synchronisations, then 2,300, in turn.
  std::vector<CallCount> out;
  double y = 0, x = 0;
  for (std::uint64_t seen : {2500, 2300, 2500, 2300}) {
    s.hold(count(7, p, seen));
    s.hold_pinned(7, 80, 8);
    out = s.release(1e9, 0.1e9);
    y = 0.8 * y + static_cast<double>(seen);
    x = 0.8 * x + 8;
  }
  ASSERT_EQ(out.size(), 1u);
  const double ratio = y / x;  // about 300
  EXPECT_NEAR(static_cast<double>(out[0].calls), 2300 + ratio * 72, 1.0);
  // Their spread sets the error, far below what a Poisson count of 8 a window would give.
  EXPECT_GT(out[0].variance, 0.0);
  EXPECT_LT(out[0].variance, (ratio * 72) * (ratio * 72) / x / 4);
}

TEST(ScaledCounts, AWindowOfAnotherMixStartsTheRatioAfresh) {
  // A process's first window falls in its warm-up: 7,200 launches for 5 synchronisations
  // (autotuning, first allocations). Its steps then make 330 launches each, seen 28 or 29
  // at a time in one window every 10 intervals. Pooled with the warm-up (even at 0.8 a
  // window), the ratio would stay 5-40% high for dozens of windows; the first window of
  // the steady mix differs from the pool by far more than windows that cut steps do, and
  // starts it anew. The intervals after it wait for a second window that agrees.
  ScaledCounts s;
  auto p = probe(1);
  (void)interval(s, p, 7200, 11, 5, 0.5e9);
  double total = 0;
  for (int window = 0; window < 4; ++window) {
    for (int i = 0; i < 10; ++i) {
      std::vector<CallCount> out;
      if (i == 0) {
        // 28 and 29 steps, cut at their edges
        out = interval(s, p, window % 2 ? 9240 : 9570, 35, window % 2 ? 28 : 29, 0.5e9);
      } else {
        out = interval(s, p, 0, 35, 0, 0);
        if (window == 0) {
          EXPECT_TRUE(out.empty()) << "interval " << i;
        } else {
          ASSERT_EQ(out.size(), 1u);
          EXPECT_NEAR(static_cast<double>(out[0].calls), 330.0 * 35, 0.02 * 330 * 35) << "window " << window;
        }
      }
      for (const CallCount& c : out) total += static_cast<double>(c.calls);
    }
  }
  EXPECT_NEAR(total, 330.0 * 35 * 40, 0.01 * 330 * 35 * 40);
}

TEST(ScaledCounts, AnIntervalOfStepsBeforeTheFirstRatioWaitsForIt) {
  // Traced from its start: a window falls before the process's steps begin (114 cycled
  // calls, no synchronisation), the next interval has no window but 14 steps, and the
  // window after it sees 33 of 36 steps (10,941 launches). The 14 steps' calls are not
  // the first window's rates (204) but wait for the ratio: 331.5 a step.
  ScaledCounts s;
  auto p = probe(1);
  (void)interval(s, p, 114, 0, 0, 0.559e9);
  EXPECT_TRUE(interval(s, p, 0, 14, 0, 0).empty());
  auto out = interval(s, p, 10941, 36, 33, 0.9e9);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(static_cast<double>(out[0].calls), 10941 + 10941.0 / 33 * (3 + 14), 1.0);
  EXPECT_TRUE(out[0].estimated);
  // The next windowless interval waits for a second window that agrees (the first
  // might have been the warm-up's), then goes with it; the one after that is scaled by
  // the ratio of both.
  EXPECT_TRUE(interval(s, p, 0, 35, 0, 0).empty());
  out = interval(s, p, 10941, 36, 33, 0.9e9);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(static_cast<double>(out[0].calls), 10941 + 10941.0 / 33 * (3 + 35), 1.0);
  out = interval(s, p, 0, 35, 0, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(static_cast<double>(out[0].calls), 10941.0 / 33 * 35, 1.0);
}

TEST(ScaledCounts, PinnedCallsNoWindowSeesWaitOnlySoLong) {
  // A process whose windows never see one of its few pinned calls: its windowless
  // intervals wait kMaxBacklog intervals, then get its last rates (300 calls a second,
  // from its last window) for all of them at once, and the later ones as before.
  ScaledCounts s;
  auto p = probe(1);
  (void)interval(s, p, 150, 0, 0, 0.5e9);
  std::uint64_t made = 0;
  for (std::uint64_t i = 0; i < ScaledCounts::kMaxBacklog; ++i)
    EXPECT_TRUE(interval(s, p, 0, 1, 0, 0).empty()) << i;
  for (const CallCount& c : interval(s, p, 0, 1, 0, 0)) made += c.calls;
  EXPECT_EQ(made, 300 * (ScaledCounts::kMaxBacklog + 1));
}

TEST(ScaledCounts, PinnedCallsThatWaitAreHandedOnByAnExactIntervalOrTheTracesEnd) {
  // One window (300 launches a step), then steps in windowless intervals that wait for a
  // second window; none comes: the probes stay attached from then on (an exact interval),
  // or the trace ends. Either hands on what waited, at the one window's ratio.
  for (const bool ends : {false, true}) {
    ScaledCounts s;
    auto p = probe(1);
    (void)interval(s, p, 4800, 32, 16, 0.5e9);
    EXPECT_TRUE(interval(s, p, 0, 30, 0, 0).empty());
    std::uint64_t calls = 0;
    if (ends) s.finishing();
    for (const CallCount& c : ends ? interval(s, p, 0, 20, 0, 0) : interval(s, p, 6000, 20, 20, 1e9)) {
      calls += c.calls;
    }
    // Exact: its own 6,000 and the 30 steps that waited; at the end: those 30 and its 20.
    EXPECT_EQ(calls, ends ? 300u * 50 : 6000u + 300 * 30) << (ends ? "end" : "exact");
  }
}

TEST(ScaledCounts, PinnedCallsThatWaitedCarryTheErrorOfTheIntervalsTheyCameFrom) {
  // 80 steps that waited, made over 4 intervals or in 1: the same calls, but spread over
  // 4 intervals they count as 4 intervals of the ratio's error (as if each had been
  // scaled in turn), a quarter of the variance of 80 in one.
  const auto waited_variance = [](int intervals) {
    ScaledCounts s;
    auto p = probe(1);
    (void)interval(s, p, 4800, 16, 16, 0.5e9);
    for (int i = 0; i < intervals; ++i) EXPECT_TRUE(interval(s, p, 0, 80 / intervals, 0, 0).empty());
    s.finishing();
    auto out = interval(s, p, 0, 0, 0, 0);
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(out.empty() ? 0 : out[0].calls, 300u * 80);
    return out.empty() ? 0.0 : out[0].variance;
  };
  const double spread = waited_variance(4), one = waited_variance(1);
  ASSERT_GT(one, 0.0);
  EXPECT_NEAR(spread / one, 0.25, 1e-9);
}

TEST(ScaledCounts, AProcessThatEndsSoonAfterTheFirstDetachIsScaledByItsExactInterval) {
  // 200 launches and memsets a synchronisation. The probes are attached from the start
  // (an exact interval: 10,143 synchronisations, every call counted), then detached; the
  // process ends 0.6 s later, its 1.1 ms window (too short to pool) having seen 9 of its
  // 9,857 synchronisations and 1,721 cycled calls. Its unseen calls are those
  // synchronisations times the exact interval's ratio, not its window's time share times
  // a speedup it never had measured. The exact interval is the first one, before any
  // decision (no length; its counts handed on, not held), a later one with the duty cycle
  // at 100% (handed on), or one held and attached throughout.
  enum class Exact { kFirst, kHandedOn, kHeld };
  for (const Exact kind : {Exact::kFirst, Exact::kHandedOn, Exact::kHeld}) {
    ScaledCounts s;
    auto launch = probe(1), memset = probe(2);
    for (const auto& p : {launch, memset}) {
      if (kind == Exact::kHeld) {
        s.hold(count(7, p, std::uint64_t{100} * 10143));
      } else {
        s.note_exact(count(7, p, std::uint64_t{100} * 10143));
      }
    }
    s.hold_pinned(7, 10143, 10143);
    auto exact = kind == Exact::kFirst ? s.release(0, 0) : s.release(1e9, 1e9);
    EXPECT_EQ(exact.size(), kind == Exact::kHeld ? 2u : 0u);
    for (const CallCount& c : exact) EXPECT_FALSE(c.estimated);
    s.hold(count(7, launch, 861));
    s.hold(count(7, memset, 860));
    s.hold_pinned(7, 9857, 9);
    auto ending = ended(7, ScaledCounts::Span{0.6e9, 1.1e6});
    ending.speedup = 2.0;
    auto out = s.release(0.6e9, 1.1e6, {ending});
    ASSERT_EQ(out.size(), 2u);
    for (const CallCount& c : out) {
      EXPECT_TRUE(c.estimated);
      EXPECT_NEAR(static_cast<double>(c.calls), 100.0 * 9857, 0.001 * 100 * 9857) << static_cast<int>(kind);
      EXPECT_GT(c.variance, 0.0);
    }
  }
}

TEST(ScaledCounts, AShortWindowAfterSettledExactIntervalsTakesTheirRatioAndItsNarrowerError) {
  // Two intervals attached throughout agree on 100 launches a synchronisation (6,000
  // steps each); the probes are detached, and the process ends in the next interval,
  // whose short window saw 250 of its 94,250 steps. The window's ratio is the same, but
  // known from 250 steps; the exact interval's from 6,000: it scales the unseen steps,
  // with an error about sqrt(6000 / 250) times narrower (under 2% of the count, not 6%).
  // Where the window has another mix, its own ratio does.
  for (const bool same_mix : {true, false}) {
    ScaledCounts s;
    auto p = probe(1);
    for (int i = 0; i < 2; ++i) {
      s.note_exact(count(7, p, std::uint64_t{100} * 6000));
      s.hold_pinned(7, 6000, 6000);
      (void)s.release(1e9, 1e9);
    }
    const std::uint64_t per_step = same_mix ? 100 : 300;
    s.hold(count(7, p, per_step * 250));
    s.hold_pinned(7, 94250, 250);
    const auto out = s.release(1e9, 10e6, {ended(7, ScaledCounts::Span{1e9, 10e6})});
    ASSERT_EQ(out.size(), 1u);
    const double calls = static_cast<double>(per_step) * 94250;
    EXPECT_NEAR(static_cast<double>(out[0].calls), calls, 1e-3 * calls) << same_mix;
    const double error = std::sqrt(out[0].variance);
    if (same_mix) {
      EXPECT_LT(error, 0.02 * calls);
      EXPECT_NEAR(error, 100.0 * 94000 / std::sqrt(6000.0), 0.01 * error);
    } else {
      EXPECT_NEAR(error, 300.0 * 94000 / std::sqrt(250.0), 0.01 * error);
    }
  }
}

TEST(ScaledCounts, AnExactIntervalOfAnotherPhaseDoesNotStandInForTheWindows) {
  // Start-up: 98 synchronisations and 200 launches, all counted. Then warm-up steps
  // that launch without synchronising (another mix: the start-up's ratio is dropped),
  // or a long wait; then steps of 735 launches and one synchronisation. The process ends
  // in the first interval with a window, which saw 12 of its 21 steps: that window's
  // ratio scales the rest, not the start-up's 2 launches a synchronisation.
  for (const bool warm_up : {true, false}) {
    ScaledCounts s;
    auto p = probe(1);
    s.note_exact(count(7, p, 200));
    s.hold_pinned(7, 98, 98);
    (void)s.release(1e9, 1e9);
    for (int i = 0; i < (warm_up ? 2 : 5); ++i) {
      if (warm_up) s.note_exact(count(7, p, 20000));
      s.hold_pinned(7, 0, 0);
      (void)s.release(1e9, 1e9);
    }
    EXPECT_EQ(last_interval(s, p, std::uint64_t{735} * 12, 21, 12, 1e9, 0.5e9), 735u * 21)
        << (warm_up ? "after a warm-up" : "long after the start-up");
  }
}

TEST(ScaledCounts, AWindowOfFewPinnedCallsDoesNotScaleTheIntervalAProcessEndsIn) {
  // The window saw the end of the warm-up (launches without a synchronisation) and 3
  // steps: 46,000 launches for 3 synchronisations, 15,333 each where a step makes 1,000.
  // Too few pinned calls to go by: that interval is scaled by time, and so is the
  // windowless one the process ends in, with 23 steps unseen (its last rates, not
  // 23 x 15,333).
  ScaledCounts s;
  auto p = probe(1);
  auto first = interval(s, p, 46000, 17, 3, 0.5e9);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].calls, 92000u);
  EXPECT_EQ(last_interval(s, p, 0, 23, 0, 0.9e9, 0), 82800u);
}

TEST(ScaledCounts, AProcessThatEndsIsScaledByTheWindowsPooledSoFar) {
  // One window pooled (300 launches a step), then the process ends in an interval
  // whose window was too short to pool: its unseen steps take the pool's ratio.
  ScaledCounts s;
  auto p = probe(1);
  (void)interval(s, p, 4800, 32, 16, 0.5e9);
  EXPECT_EQ(last_interval(s, p, 300, 40, 1, 1e9, 2e6), 300u * 40);
}

TEST(ScaledCounts, AProcessThatEndsAfterAFewPinnedCallsIsScaledByTime) {
  // Steps of 1,289 launches a synchronisation counted whole; the process then ends after
  // one more synchronisation, unseen, with 36 launches seen in half the interval (a
  // script's last synchronisation and the few launches near it). One pinned call says
  // little about the calls around it: time scales them (72), not the steps' ratio (1,325).
  ScaledCounts s;
  auto p = probe(1);
  s.note_exact(count(7, p, std::uint64_t{1289} * 20));
  s.hold_pinned(7, 20, 20);
  (void)s.release(1e9, 1e9);
  EXPECT_EQ(last_interval(s, p, 36, 1, 0, 1e9, 0.5e9), 72u);
}

TEST(ScaledCounts, CallsWithoutAnyPinnedCallAreScaledByTime) {
  ScaledCounts s;
  auto p = probe(1);
  for (int i = 0; i < 3; ++i) (void)(step_window(s, p, 8, 80), s.release(1e9, 0.1e9));
  // Launches but no synchronisation this second: another mix, scaled by time.
  s.hold(count(7, p, 1000));
  s.hold_pinned(7, 0, 0);
  auto out = s.release(1e9, 0.1e9);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].calls, 10000u);
}

}  // namespace
}  // namespace eacgm::agent
