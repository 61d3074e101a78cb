// CaptureRecorder (agent/capture_recorder.h): arming through the trace's switch, one
// capture per process, what it keeps, and the drain by the reader's rounds.
#include "agent/capture_recorder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include "core/clock.h"

namespace eacgm::agent {
namespace {

using namespace std::chrono_literals;

CallEvent call_of(std::uint32_t pid, std::uint64_t ts) {
  CallEvent e;
  e.pid = pid;
  e.tid = pid;
  e.ts_ns = ts;
  return e;
}

TEST(CaptureRecorder, RefusesWithoutATrace) {
  CaptureRecorder r;
  std::atomic<bool> cancel{false};
  EXPECT_EQ(r.capture(1, 10ms, cancel).refusal, CaptureRefusal::kNoTrace);
}

TEST(CaptureRecorder, ArmsDisarmsKeepsTheProcessCallsAndDrains) {
  CaptureRecorder r;
  std::vector<std::pair<std::uint32_t, bool>> switched;
  std::mutex m;
  r.set_switch([&](std::uint32_t pid, bool on) {
    std::lock_guard<std::mutex> lock(m);
    switched.emplace_back(pid, on);
    return Status{};
  });
  std::atomic<bool> cancel{false}, stop{false};
  // The reader: a round every 10 ms, each with a call of the captured process and one of another.
  std::thread reader([&] {
    WallClock wall;
    while (!stop.load()) {
      const auto now = wall.from_monotonic(monotonic_ns());
      std::vector<CallEvent> batch{call_of(42, now), call_of(43, now)};
      r.on_calls(batch);
      r.flush();
      std::this_thread::sleep_for(10ms);
    }
  });
  auto first = std::async(std::launch::async, [&] { return r.capture(42, 300ms, cancel); });
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(r.capture(42, 10ms, cancel).refusal, CaptureRefusal::kBusy);
  const CaptureResult got = first.get();
  stop.store(true);
  reader.join();
  ASSERT_EQ(got.refusal, CaptureRefusal::kNone) << got.message;
  EXPECT_TRUE(got.window.drained);
  EXPECT_GT(got.window.calls.size(), 5u);
  for (const auto& e : got.window.calls) {
    EXPECT_EQ(e.pid, 42u);
    EXPECT_GE(e.ts_ns, got.window.wall_offset_ns + got.window.begin_ns);
    EXPECT_LE(e.ts_ns, got.window.wall_offset_ns + got.window.end_ns);
  }
  EXPECT_LE(got.window.begin_ns, got.window.armed_ns);
  EXPECT_LT(got.window.armed_ns, got.window.disarming_ns);
  EXPECT_LE(got.window.disarming_ns, got.window.end_ns);
  std::lock_guard<std::mutex> lock(m);
  ASSERT_EQ(switched.size(), 2u);
  EXPECT_EQ(switched[0], std::make_pair(42u, true));
  EXPECT_EQ(switched[1], std::make_pair(42u, false));
}

TEST(CaptureRecorder, KeepsAtMostTheCapAndCountsTheRest) {
  CaptureControl::Limits limits;
  limits.max_calls = 3;
  CaptureRecorder r(limits);
  r.set_switch([](std::uint32_t, bool) { return Status{}; });
  std::atomic<bool> cancel{false}, stop{false};
  std::thread reader([&] {
    WallClock wall;
    while (!stop.load()) {
      std::vector<CallEvent> batch{call_of(7, wall.from_monotonic(monotonic_ns()))};
      r.on_calls(batch);
      r.flush();
      std::this_thread::sleep_for(5ms);
    }
  });
  const CaptureResult got = r.capture(7, 100ms, cancel);
  stop.store(true);
  reader.join();
  EXPECT_EQ(got.window.calls.size(), 3u);
  EXPECT_GT(got.window.calls_left_out, 0u);
}

TEST(CaptureRecorder, AFailedArmIsSaidAndLeavesNothingRunning) {
  CaptureRecorder r;
  r.set_switch([](std::uint32_t, bool) { return Status(make_error("map full")); });
  std::atomic<bool> cancel{false};
  const CaptureResult got = r.capture(9, 10ms, cancel);
  EXPECT_EQ(got.refusal, CaptureRefusal::kFailed);
  EXPECT_EQ(got.message, "map full");
  r.set_switch([](std::uint32_t, bool) { return Status{}; });
  cancel.store(true);  // returns at once, undrained
  EXPECT_EQ(r.capture(9, 10s, cancel).refusal, CaptureRefusal::kNone);
}

}  // namespace
}  // namespace eacgm::agent
