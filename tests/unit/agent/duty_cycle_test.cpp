// DutyCycle with a recording switch: it attaches and detaches at the fraction asked,
// its log of attached time matches the switches made, and stopping leaves the probes
// attached; a slow detach does not count as attached time.
#include "agent/duty_cycle.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
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
    counting(at, attached ? DutyWindow::kOpen : DutyWindow::kSwitching);
    std::this_thread::sleep_for(std::chrono::milliseconds(slow));
    if (!attached) counting(Clock::now(), DutyWindow::kOff);
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

DutyCycle::Options options(int period_ms, double min_fraction) {
  DutyCycle::Options o;
  o.period = std::chrono::milliseconds(period_ms);
  o.min_fraction = min_fraction;
  o.min_window = std::chrono::milliseconds(0);
  return o;
}

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
  DutyCycle d([&r](bool a, const DutyCycle::Counting& c) { return r(a, c); }, options(20, 0.05));
  const auto from = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const auto to = Clock::now();
  EXPECT_EQ(r.count(), 0u);
  const double wall = std::chrono::duration<double, std::nano>(to - from).count();
  EXPECT_DOUBLE_EQ(d.attached_ns(from, to), wall);
}

TEST(DutyCycle, SwitchesAtTheFractionAndLogsWhatItDid) {
  Recorder r;
  DutyCycle d([&r](bool a, const DutyCycle::Counting& c) { return r(a, c); }, options(40, 0.05));
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

TEST(DutyCycle, AShortWindowFallsInFewerPeriodsAndLastsLonger) {
  Recorder r;
  r.detach_ms = 2;
  DutyCycle::Options o = options(40, 0.05);
  o.min_window = std::chrono::milliseconds(20);
  DutyCycle d([&r](bool a, const DutyCycle::Counting& c) { return r(a, c); }, o);
  d.set_fraction(0.125);  // 5 ms of each 40 ms period: 20 ms in every fourth
  ASSERT_TRUE(wait_for([&] { return r.count() >= 2; }, &d));
  const auto from = Clock::now();
  ASSERT_TRUE(wait_for([&] { return r.count() >= 14; }, &d));
  const auto to = Clock::now();
  d.stop();
  // The switches' share of the time is spread over the four periods a window spans.
  const auto t = d.switch_times();
  EXPECT_GT(t.detach_ms, 1.9);
  EXPECT_NEAR(d.switching_share(), (t.attach_ms + t.detach_ms) / 160.0, 1e-9);
  std::lock_guard lock(r.mutex);
  // Each window (an attach and the next detach) lasted about 20 ms, not 5.
  int windows = 0;
  for (std::size_t i = 1; i < r.switches.size(); ++i) {
    const auto& [opened, attach] = r.switches[i - 1];
    const auto& [closed, still_attached] = r.switches[i];
    if (opened < from || !attach || still_attached) continue;
    const double ms = std::chrono::duration<double, std::milli>(closed - opened).count();
    EXPECT_GE(ms, 19.0);
    ++windows;
  }
  EXPECT_GE(windows, 3);
  // Still about an eighth of the time in all.
  const double share = d.attached_ns(from, to) / std::chrono::duration<double, std::nano>(to - from).count();
  EXPECT_GT(share, 0.05);
  EXPECT_LT(share, 0.3);
}

TEST(DutyCycle, ProbesStopCountingWhenTheWindowClosesNotWhenTheirDetachEnds) {
  Recorder r;
  r.detach_ms = 300;  // longer than the period: ticks fall inside the detach
  DutyCycle d([&r](bool a, const DutyCycle::Counting& c) { return r(a, c); }, options(40, 0.05));
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
  // The time since the window closed is not attached time, though the detach has not returned:
  // it is switching time.
  EXPECT_NEAR(d.attached_ns(from, to), r.attached_ns(from, to), 1e3);
  EXPECT_LT(d.attached_ns(to - std::chrono::milliseconds(90), to), 1.0);
  EXPECT_NEAR(d.switching_ns(to - std::chrono::milliseconds(90), to), 90e6, 1e3);
  // Once the detach has returned, the switches' share of each period is known.
  ASSERT_TRUE(wait_for([&] { return d.switch_times().detach_ms > 0; }, &d));
  EXPECT_GE(d.switching_share(), 1.0) << "a 300 ms detach in a 40 ms period";
}

TEST(DutyCycle, ClampsToItsLeastFraction) {
  Recorder r;
  DutyCycle d([&r](bool a, const DutyCycle::Counting& c) { return r(a, c); }, options(40, 0.1));
  d.set_fraction(0.001);
  EXPECT_DOUBLE_EQ(d.fraction(), 0.1);
  d.set_fraction(7);
  EXPECT_DOUBLE_EQ(d.fraction(), 1.0);
}

TEST(DutyCycle, ARefusedAttachIsCountedAndLeavesTheProbesDetached) {
  Recorder r;
  DutyCycle d([&r](bool a, const DutyCycle::Counting& c) { return r(a, c); }, options(20, 0.05));
  d.set_fraction(0.5);
  ASSERT_TRUE(wait_for(
      [&] {
        std::lock_guard lock(r.mutex);
        return !r.switches.empty() && !r.switches.back().second;
      },
      &d));
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

TEST(DutyCycle, AFixedFractionIsKeptWhateverTheBudgetAsks) {
  Recorder r;
  DutyCycle::Options o = options(40, 0.05);
  o.fixed_fraction = 0.5;
  std::mutex done_mutex;
  std::vector<DutyCycle::SwitchDone> done;
  o.on_switch = [&](const DutyCycle::SwitchDone& s) {
    std::lock_guard lock(done_mutex);
    done.push_back(s);
  };
  DutyCycle d([&r](bool a, const DutyCycle::Counting& c) { return r(a, c); }, o);
  d.set_fraction(1.0);  // what the controller asks of a process under its budget
  EXPECT_DOUBLE_EQ(d.fraction(), 0.5);
  ASSERT_TRUE(wait_for([&] { return r.count() >= 6; }, &d));
  d.stop();
  std::lock_guard lock(done_mutex);
  ASSERT_GE(done.size(), 6u);
  for (std::size_t i = 0; i < done.size(); ++i) {
    // Alternating, each switch reported with its moments in order.
    if (i > 0) {
      EXPECT_NE(done[i].attached, done[i - 1].attached) << i;
      EXPECT_LE(done[i - 1].ended, done[i].began);
    }
    EXPECT_TRUE(done[i].ok);
    EXPECT_LE(done[i].began, done[i].counting);
    EXPECT_LE(done[i].counting, done[i].ended);
  }
}

TEST(DutyCycle, AFixedFractionKeepsTheProbesAttachedUntilTheFirstTick) {
  // The interval before the first tick has no beginning the controller knows, so
  // nothing would scale its counts: the cycle starts with the first tick.
  Recorder r;
  DutyCycle::Options o = options(40, 0.05);
  o.fixed_fraction = 0.25;
  DutyCycle d([&r](bool a, const DutyCycle::Counting& c) { return r(a, c); }, o);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  {
    std::lock_guard lock(r.mutex);
    for (const auto& [when, attached] : r.switches) EXPECT_TRUE(attached) << "no detach before a tick";
  }
  ASSERT_TRUE(wait_for(
      [&] {
        std::lock_guard lock(r.mutex);
        return !r.switches.empty() && !r.switches.back().second;
      },
      &d));
}

TEST(DutyCycle, TheSwitchLoggerWritesALinePerSwitch) {
  const std::string path = ::testing::TempDir() + "duty_switches.log";
  {
    std::shared_ptr<std::FILE> file(std::fopen(path.c_str(), "w"), [](std::FILE* f) {
      if (f) std::fclose(f);
    });
    ASSERT_TRUE(file);
    const auto on_switch = DutyCycle::switch_logger(file);
    const auto t = Clock::time_point(std::chrono::nanoseconds(1000));
    on_switch({true, t, t + std::chrono::nanoseconds(5), t + std::chrono::nanoseconds(9), true});
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "switch attached=1 began_ns=1000 counting_ns=1005 ended_ns=1009 ok=1\n");
}

}  // namespace
}  // namespace eacgm::agent
