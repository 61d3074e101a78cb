// BudgetController with a duty cycle, on a synthetic hot loop: a process whose entry
// traps alone are over budget gets its cycled probes attached part of the time; the
// estimate converges under budget and stays; the counts handed on are scaled to the
// whole time and carry their error; pinned probes are counted exactly throughout; when
// the load goes, the probes are attached all the time again and counts are exact.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "agent/budget_controller.h"

namespace eacgm::agent {
namespace {

struct Recorder final : Consumer {
  std::map<std::uint32_t, std::uint64_t> calls;      // probe id -> calls handed on
  std::map<std::uint32_t, std::uint64_t> estimated;  // probe id -> of them, estimated
  std::map<std::uint32_t, double> variance;
  std::vector<OverheadReport> reports;
  void on_calls(std::span<const CallEvent>) override {}
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings>) override {
    for (const auto& c : counts) {
      calls[c.probe->id] += c.calls;
      if (c.estimated) estimated[c.probe->id] += c.calls;
      variance[c.probe->id] += c.variance;
    }
  }
  void on_overhead(const OverheadReport& r) override { reports.push_back(r); }
  void on_tick(std::chrono::steady_clock::time_point, const CounterValues&) override {}
  void on_end(const CounterValues&) override {}
};

// The cycled probes are attached `fraction` of every interval, as the real cycle does
// on average; the loop below counts as many calls as that lets through. Its log is
// historical, as the real one: an interval is taken at the fraction it ran at.
struct FakeDuty final : DutyControl {
  double now = 1.0;
  std::vector<double> set;
  const Clock::time_point* clock = nullptr;               // the loop's time
  std::vector<std::pair<Clock::time_point, double>> log;  // from when, at what fraction
  void set_fraction(double f) override {
    now = std::clamp(f, min_fraction(), 1.0);
    set.push_back(now);
    log.emplace_back(clock ? *clock : Clock::time_point{}, now);
  }
  double fraction() const override { return now; }
  double min_fraction() const override { return 0.05; }
  double switching = 0;  // the share of each period the switches take
  double switching_share() const override { return switching; }
  double attached_ns(Clock::time_point from, Clock::time_point to) const override {
    double ns = 0;
    for (std::size_t i = 0; i <= log.size(); ++i) {
      const Clock::time_point begin = std::max(from, i == 0 ? Clock::time_point::min() : log[i - 1].first);
      const Clock::time_point end = std::min(to, i == log.size() ? Clock::time_point::max() : log[i].first);
      const double f = i == 0 ? 1.0 : log[i - 1].second;
      if (end > begin) ns += f * std::chrono::duration<double, std::nano>(end - begin).count();
    }
    return ns;
  }
};

std::shared_ptr<const ProbeInfo> probe(std::uint32_t id, bool cycled) {
  auto p = std::make_shared<ProbeInfo>();
  p->id = id;
  p->function = "f" + std::to_string(id);
  p->counted = true;
  p->cycled = cycled;
  return p;
}

struct Loop {
  std::shared_ptr<Recorder> inner = std::make_shared<Recorder>();
  std::shared_ptr<FakeDuty> duty = std::make_shared<FakeDuty>();
  std::unique_ptr<BudgetController> c;
  std::shared_ptr<const ProbeInfo> hot = probe(1, true), pinned = probe(2, false);
  double cpu_ns = 0;
  bool exited = false;  // the process is gone: its CPU time can no longer be read
  std::chrono::steady_clock::time_point now{};
  std::uint64_t true_hot = 0, true_pinned = 0;

  Loop() {
    TrapCosts costs;
    costs.entry_ns = 500;
    costs.entry_return_ns = 1500;
    costs.per_call_ns = 2000;
    costs.measured = true;
    c = std::make_unique<BudgetController>(
        inner, costs, BudgetOptions{},
        [this](std::uint32_t) -> std::optional<ProcessCpu> {
          if (exited) return std::nullopt;
          return ProcessCpu{cpu_ns, 10};
        },
        5);
    c->set_actuator([](std::uint32_t, std::uint8_t) -> Status { return {}; });
    duty->clock = &now;
    c->set_duty_cycle(duty);
    tick();
  }
  // One second of a launching thread: `rate` calls of the hot probe a second untraced and
  // 100 of the pinned one; the hot probe's calls are counted only while it is attached,
  // and then each costs the thread 0.5 us, so it makes fewer of them.
  // `pinned_calls`: of the pinned probe (0: a warm-up, launching without synchronising).
  void second(std::uint64_t rate, std::uint64_t pinned_calls = 100) {
    cpu_ns += 1e9;
    const double r = static_cast<double>(rate);
    const double traced_rate = r / (1 + r * 500e-9);
    const auto seen = static_cast<std::uint64_t>(std::llround(traced_rate * duty->now));
    true_hot += seen + static_cast<std::uint64_t>(std::llround(r * (1 - duty->now)));
    true_pinned += pinned_calls;
    std::vector<CallCount> counts{{7, hot, 0, 0, "", seen, 0}};
    if (pinned_calls > 0) counts.push_back({7, pinned, 0, 0, "", pinned_calls, 0});
    c->on_counts(counts, {});
    tick();
  }
  // One second of a thread that the attached probes really slow by `slow` (more than
  // their calibrated cost says, as in a real program): `rate` hot calls and 1,000 pinned
  // ones a second untraced; the pinned probe, attached throughout, counts which of its
  // calls fell in the window.
  // `noise`: the pinned calls inside the window are off by that share (a window holds a
  // few steps of a real loop, and their count is off by one or two).
  void paced_second(double rate, double slow, double noise = 0) {
    cpu_ns += 1e9;
    const double f = duty->now;
    const auto seen = static_cast<std::uint64_t>(std::llround(rate * (1 - slow) * f));
    true_hot += seen + static_cast<std::uint64_t>(std::llround(rate * (1 - f)));
    const auto in = static_cast<std::uint64_t>(std::llround(1000 * (1 - slow) * f * (1 + noise)));
    const auto pinned_calls = in + static_cast<std::uint64_t>(std::llround(1000 * (1 - f)));
    true_pinned += pinned_calls;
    CallCount h{7, hot, 0, 0, "", seen, 0};
    CallCount p{7, pinned, 0, 0, "", pinned_calls, 0};
    p.windowed = in;
    std::vector<CallCount> counts{h, p};
    c->on_counts(counts, {});
    tick();
  }
  void tick() {
    now += std::chrono::seconds(1);
    c->on_tick(now, CounterValues{});
  }
};

TEST(BudgetDuty, AHotLoopConvergesUnderBudgetAndStays) {
  Loop l;
  // 100k calls/s x 0.5 us: 5% of the thread, five times the 1% budget on entries alone.
  for (int i = 0; i < 12; ++i) l.second(100000);
  ASSERT_FALSE(l.duty->set.empty());
  const double f = l.duty->now;
  EXPECT_LT(f, 0.2);
  EXPECT_GT(f, 0.1);
  // From the third second on, every interval's estimate is within budget and the
  // fraction stays; once the 5-tick window has forgotten the first seconds, so is the
  // window's ratio.
  for (std::size_t i = 3; i < l.inner->reports.size(); ++i) {
    ASSERT_EQ(l.inner->reports[i].processes.size(), 1u);
    const ProcessOverhead& p = l.inner->reports[i].processes[0];
    EXPECT_LE(p.estimated_ns / (p.cpu_ns - p.estimated_ns), 0.01) << "second " << i;
    if (i >= 8) {
      EXPECT_LE(p.ratio, 0.01) << "second " << i;
    }
    EXPECT_DOUBLE_EQ(l.inner->reports[i].duty_fraction, f);
  }
  EXPECT_EQ(l.duty->set.size(), 1u) << "one decision, kept";
  EXPECT_LT(l.inner->reports.back().attached_share, 0.3);
}

TEST(BudgetDuty, ScaledCountsCarryTheirErrorAndPinnedOnesStayExact) {
  Loop l;
  for (int i = 0; i < 12; ++i) l.second(100000);
  // The first second was counted whole; the rest scaled back to 100k a second.
  const double hot = static_cast<double>(l.inner->calls[1]);
  EXPECT_NEAR(hot, static_cast<double>(l.true_hot), 0.01 * static_cast<double>(l.true_hot));
  EXPECT_GT(l.inner->estimated[1], 0u);
  EXPECT_GT(l.inner->variance[1], 0.0);
  // The error (one standard deviation) is a small share of the estimate.
  EXPECT_LT(std::sqrt(l.inner->variance[1]), 0.02 * hot);
  EXPECT_EQ(l.inner->calls[2], l.true_pinned);
  EXPECT_EQ(l.inner->estimated[2], 0u);
  EXPECT_EQ(l.inner->variance[2], 0.0);
}

TEST(BudgetDuty, AProcessThatEndsAfterTheFirstDetachIsScaledByItsExactSeconds) {
  // 100 hot calls a pinned one, 1,000 pinned calls a second: the first two seconds are
  // counted whole (the second settles the mix), the probes are then cycled at a small
  // fraction, and the process ends half a second later, its window having seen 3 of its
  // 500 pinned calls (too few to go by, as in a short run). Its unseen calls are its
  // unseen pinned calls at the last exact second's ratio, not its seen ones scaled by
  // time with a speedup it never had measured.
  Loop l;
  l.paced_second(100000, 0.05);
  EXPECT_DOUBLE_EQ(l.duty->now, 1.0) << "one interval does not settle a mix";
  l.paced_second(100000, 0.05);
  ASSERT_LT(l.duty->now, 0.5);
  l.cpu_ns += 0.5e9;
  l.true_hot += std::uint64_t{500} * 100;
  l.true_pinned += 500;
  CallCount h{7, l.hot, 0, 0, "", 300, 0};
  CallCount p{7, l.pinned, 0, 0, "", 500, 0};
  p.windowed = 3;
  std::vector<CallCount> counts{h, p};
  l.c->on_counts(counts, {});
  l.exited = true;
  l.tick();
  EXPECT_GT(l.inner->estimated[1], 0u);
  EXPECT_NEAR(static_cast<double>(l.inner->calls[1]), static_cast<double>(l.true_hot),
              0.001 * static_cast<double>(l.true_hot));
  EXPECT_EQ(l.inner->calls[2], l.true_pinned);
}

TEST(BudgetDuty, TheFirstDetachWaitsForTheStepsMixToSettle) {
  // Two seconds of warm-up (launches, no synchronisation), then steps of 1,000 launches
  // a synchronisation: the probes stay attached, counting exactly, until two seconds
  // counted whole agree on the steps' mix; then they are cycled.
  Loop l;
  l.second(100000, 0);
  l.second(100000, 0);
  EXPECT_DOUBLE_EQ(l.duty->now, 1.0) << "a warm-up has no mix to go by";
  l.second(100000, 100);
  EXPECT_DOUBLE_EQ(l.duty->now, 1.0) << "one second of steps is not yet a mix";
  l.second(100000, 100);
  EXPECT_LT(l.duty->now, 0.5) << "two that agree are";
  EXPECT_EQ(l.inner->estimated[1], 0u);
  EXPECT_EQ(l.inner->calls[1], l.true_hot) << "counted whole until then";
}

TEST(BudgetDuty, AProcessWhoseMixNeverSettlesIsCycledAfterAFewSeconds) {
  // No synchronisation at all: no mix to wait for beyond kMaxSettleTicks (3) seconds.
  Loop l;
  for (int i = 0; i < 3; ++i) {
    l.second(100000, 0);
    EXPECT_DOUBLE_EQ(l.duty->now, 1.0) << "second " << i;
  }
  l.second(100000, 0);
  EXPECT_LT(l.duty->now, 0.5);
}

TEST(BudgetDuty, WhenTheLoadGoesTheProbesAreAttachedAgainAndCountsAreExact) {
  Loop l;
  for (int i = 0; i < 5; ++i) l.second(100000);
  ASSERT_LT(l.duty->now, 1.0);
  // 1,000 calls a second fit many times over: the fraction doubles each second up to 1.
  for (int i = 0; i < 8; ++i) l.second(1000);
  EXPECT_DOUBLE_EQ(l.duty->now, 1.0);
  const std::uint64_t before = l.inner->estimated[1];
  const std::uint64_t calls_before = l.inner->calls[1];
  l.second(1000);
  l.second(1000);
  EXPECT_EQ(l.inner->estimated[1], before) << "no more estimates";
  EXPECT_EQ(l.inner->calls[1] - calls_before, 2000u);
}

TEST(BudgetDuty, TheMeasuredPaceSetsTheFractionAndTheScale) {
  Loop l;
  // 20,000 calls a second: 1% of the thread at the calibrated 0.5 us, over the 0.25%
  // that starts a measurement; really the probes slow the thread by 20% while attached.
  for (int i = 0; i < 20; ++i) l.paced_second(20000, 0.2);
  // 20% while attached: the 1% budget (aiming at 0.8%) allows 4%, below the 5% floor.
  EXPECT_DOUBLE_EQ(l.duty->now, 0.05);
  // The scale follows the measured pace, not the calibrated cost: within 1% of the truth.
  const auto hot = static_cast<double>(l.inner->calls[1]);
  EXPECT_NEAR(hot, static_cast<double>(l.true_hot), 0.01 * static_cast<double>(l.true_hot));
  EXPECT_EQ(l.inner->calls[2], l.true_pinned);
  ASSERT_EQ(l.inner->reports.back().processes.size(), 1u);
  EXPECT_NEAR(l.inner->reports.back().processes[0].measured_slowdown.value_or(-1), 0.2, 1e-9);
}

TEST(BudgetDuty, AProcessTheProbesDoNotSlowIsCountedWholeAgain) {
  Loop l;
  // The same calls, but the thread waits on its GPU and the traps cost it nothing: once
  // measured, the probes are attached all the time and counts are exact again.
  for (int i = 0; i < 20; ++i) l.paced_second(20000, 0.0);
  EXPECT_DOUBLE_EQ(l.duty->now, 1.0);
  const std::uint64_t before = l.inner->estimated[1];
  l.paced_second(20000, 0.0);
  l.paced_second(20000, 0.0);
  EXPECT_EQ(l.inner->estimated[1], before);
}

TEST(BudgetDuty, TheSwitchesTimeIsTakenFromTheWindow) {
  // The probes slow the thread by 2% while attached: the budget (aiming at 0.8%, less the
  // pinned probes' 0.15%) allows about a third of the time. When each period's switches
  // take a fifth of it, at that cost, the window gets a fifth less.
  Loop plain, switching;
  switching.duty->switching = 0.2;
  for (int i = 0; i < 40; ++i) {
    plain.paced_second(20000, 0.02);
    switching.paced_second(20000, 0.02);
  }
  EXPECT_GT(plain.duty->now, 0.25);
  EXPECT_LT(plain.duty->now, 0.45);
  // A fifth less, give or take the steps by which the fraction moves (it is lowered
  // below 90% of the allowed share and raised above 125%).
  EXPECT_GT(plain.duty->now - switching.duty->now, 0.12);
  EXPECT_LT(plain.duty->now - switching.duty->now, 0.28);
}

TEST(BudgetDuty, ANoisyPaceDoesNotCountASlowedProcessWhole) {
  // The probes slow the thread by 7% while attached (0.7% of it at a tenth of the time);
  // each window's count of pinned calls is off by up to ±20%, as the steps of a real
  // loop's short windows are. Point estimates of such a pace wander near 0 now and then;
  // taking one for no cost would count the process whole, at 7%, and stop measuring.
  // Eight runs of different noise: the fraction follows the noisy pace for some seconds
  // now and then, so the budget holds over the run, not in every second; and a ratio of
  // noisy sums leans high by a percent or two (up to 3% in one run of eight).
  double sum_error = 0;
  constexpr int kRuns = 8;
  for (int run = 1; run <= kRuns; ++run) {
    Loop l;
    std::minstd_rand random(static_cast<std::minstd_rand::result_type>(run));
    std::uniform_real_distribution<double> noise(-0.2, 0.2);
    double cost = 0, worst = 0;  // of the process's time, from the 11th second on
    for (int i = 0; i < 120; ++i) {
      l.paced_second(20000, 0.07, noise(random));
      if (i >= 10) {
        EXPECT_LT(l.duty->now, 1.0) << "run " << run << ", second " << i << ": counted whole";
        cost += l.duty->now * 0.07 / 110;
        worst = std::max(worst, l.duty->now * 0.07);
      }
    }
    EXPECT_LE(cost, 0.01) << "run " << run << ": over the budget";
    EXPECT_LE(worst, 0.05) << "run " << run;
    const double error = static_cast<double>(l.inner->calls[1]) / static_cast<double>(l.true_hot) - 1;
    EXPECT_LT(std::abs(error), 0.04) << "run " << run;
    sum_error += std::abs(error);
  }
  // Counted calls stay within 2% of the truth on average.
  EXPECT_LT(sum_error / kRuns, 0.02);
}

}  // namespace
}  // namespace eacgm::agent
