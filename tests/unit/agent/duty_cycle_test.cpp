// DutyCycle with a recording switch: it attaches and detaches at the fraction asked,
// its log of attached time matches the switches made, and stopping leaves the probes
// attached; a slow detach does not count as attached time.
#include "agent/duty_cycle.h"

#include <gtest/gtest.h>

#include <vector>

namespace eacgm::agent {
namespace {

using Clock = std::chrono::steady_clock;

struct Recorder {
  std::mutex mutex;
  std::vector<std::pair<Clock::time_point, bool>> switches;
  bool refuse_attach = false;
  // A detach takes `detach_ms` after counting stops (the kernel's unregistering).
  int detach_ms = 0;
  Status operator()(bool attached, const DutyCycle::Counting& counting) {
    std::unique_lock lock(mutex);
    if (attached && refuse_attach) return make_error("refused");
    const auto at = Clock::now();
    switches.emplace_back(at, attached);
    const int slow = attached ? 0 : detach_ms;
    lock.unlock();
    counting(at);
    std::this_thread::sleep_for(std::chrono::milliseconds(slow));
    return {};
  }
  // Attached nanoseconds of (from, to] by the recorded switches (attached before the first).
  double attached_ns(Clock::time_point from, Clock::time_point to) {
    std::lock_guard lock(mutex);
    double ns = 0;
    bool state = true;
    Clock::time_point segment = from;
    for (const auto& [when, attached] : switches) {
      if (when >= to) break;
      if (when > from) {
        if (state) ns += std::chrono::duration<double, std::nano>(when - segment).count();
        segment = when;
      }
      state = attached;
    }
    if (state) ns += std::chrono::duration<double, std::nano>(to - segment).count();
    return ns;
  }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return switches.size();
  }
};

// Polls `pred`; `d`, when given, gets a tick every 40 ms (its period here), as the
// budget controller gives it one each interval.
template <typename Pred>
bool wait_for(Pred pred, DutyCycle* d = nullptr) {
  for (int i = 0; i < 500; ++i) {
    if (pred()) return true;
    if (d && i % 4 == 0) d->on_tick(Clock::now());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(DutyCycle, AtFractionOneNothingIsSwitched) {
  Recorder r;
  DutyCycle d([&r](bool a, const DutyCycle::Counting& c) { return r(a, c); },
              {std::chrono::milliseconds(20), 0.05});
  const auto from = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const auto to = Clock::now();
  EXPECT_EQ(r.count(), 0u);
  const double wall = std::chrono::duration<double, std::nano>(to - from).count();
  EXPECT_DOUBLE_EQ(d.attached_ns(from, to), wall);
}

TEST(DutyCycle, SwitchesAtTheFractionAndLogsWhatItDid) {
  Recorder r;
  DutyCycle d([&r](bool a, const DutyCycle::Counting& c) { return r(a, c); },
              {std::chrono::milliseconds(40), 0.05});
  d.set_fraction(0.25);
  ASSERT_TRUE(wait_for([&] { return r.count() >= 2; }, &d));
  const auto from = Clock::now();
  ASSERT_TRUE(wait_for([&] { return r.count() >= 20; }, &d));
  const auto to = Clock::now();
  const double wall = std::chrono::duration<double, std::nano>(to - from).count();
  const double logged = d.attached_ns(from, to);
  // The log holds the moments the switch returned: the same as the recorder's.
  EXPECT_NEAR(logged, r.attached_ns(from, to), 1e3);
  // A quarter of each period, give or take a period's worth of scheduling delay.
  EXPECT_GT(logged / wall, 0.1);
  EXPECT_LT(logged / wall, 0.5);
  EXPECT_EQ(d.failures(), 0u);
  // Back to 1: attached again at once, and stays.
  d.set_fraction(1.0);
  ASSERT_TRUE(wait_for([&] {
    std::lock_guard lock(r.mutex);
    return r.switches.back().second;
  }));
  const std::size_t n = r.count();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(r.count(), n);
}

TEST(DutyCycle, ProbesStopCountingWhenTheWindowClosesNotWhenTheirDetachEnds) {
  Recorder r;
  r.detach_ms = 300;  // longer than the period: ticks fall inside the detach
  DutyCycle d([&r](bool a, const DutyCycle::Counting& c) { return r(a, c); },
              {std::chrono::milliseconds(40), 0.05});
  const auto from = Clock::now();
  d.set_fraction(0.25);
  // Inside a detach: its window closed (the last switch recorded), its unregistering goes on.
  ASSERT_TRUE(wait_for(
      [&] {
        std::lock_guard lock(r.mutex);
        return !r.switches.empty() && !r.switches.back().second;
      },
      &d));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto to = Clock::now();
  // The time since the window closed is not attached time, though the detach has not returned.
  EXPECT_NEAR(d.attached_ns(from, to), r.attached_ns(from, to), 1e3);
  EXPECT_LT(d.attached_ns(to - std::chrono::milliseconds(90), to), 1.0);
}

TEST(DutyCycle, ClampsToItsLeastFraction) {
  Recorder r;
  DutyCycle d([&r](bool a, const DutyCycle::Counting& c) { return r(a, c); },
              {std::chrono::milliseconds(40), 0.1});
  d.set_fraction(0.001);
  EXPECT_DOUBLE_EQ(d.fraction(), 0.1);
  d.set_fraction(7);
  EXPECT_DOUBLE_EQ(d.fraction(), 1.0);
}

TEST(DutyCycle, ARefusedAttachIsCountedAndLeavesTheProbesDetached) {
  Recorder r;
  DutyCycle d([&r](bool a, const DutyCycle::Counting& c) { return r(a, c); },
              {std::chrono::milliseconds(20), 0.05});
  d.set_fraction(0.5);
  ASSERT_TRUE(wait_for([&] {
    std::lock_guard lock(r.mutex);
    return !r.switches.empty() && !r.switches.back().second;
  }));
  {
    std::lock_guard lock(r.mutex);
    r.refuse_attach = true;
  }
  ASSERT_TRUE(wait_for([&] { return d.failures() >= 2; }, &d));
  const auto from = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(d.attached_ns(from, Clock::now()), 0.0);
  {
    std::lock_guard lock(r.mutex);
    r.refuse_attach = false;
  }
  // Stopping attaches them again for the trace's last counts.
  d.stop();
  std::lock_guard lock(r.mutex);
  EXPECT_TRUE(r.switches.back().second);
}

}  // namespace
}  // namespace eacgm::agent
