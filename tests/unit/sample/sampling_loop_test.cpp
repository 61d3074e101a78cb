// The sampling thread: passes land on a fixed grid however long each takes, overruns
// skip deadlines instead of bursting, and failures come back as values.
#include "sample/sampling_loop.h"

#include <gtest/gtest.h>

#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace eacgm::sample {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(SamplingLoop, DeadlinesDoNotDriftWithPassDuration) {
  std::mutex mu;
  std::vector<Clock::time_point> starts;
  std::vector<std::uint64_t> sequences;
  SamplingLoop::Options opt;
  opt.interval = 20ms;
  opt.max_passes = 15;
  auto loop = SamplingLoop::start(
      opt,
      [&] {
        {
          std::lock_guard<std::mutex> lock(mu);
          starts.push_back(Clock::now());
        }
        std::this_thread::sleep_for(12ms);  // a naive "sleep(interval)" loop would drift 12 ms a pass
        return GpuSnapshot{};
      },
      [&](GpuSnapshot s) {
        std::lock_guard<std::mutex> lock(mu);
        sequences.push_back(s.sequence);
      });
  ASSERT_TRUE(loop.ok()) << loop.error();
  ASSERT_TRUE((*loop)->wait().ok());
  (*loop)->stop();
  ASSERT_EQ(starts.size(), 15u);
  ASSERT_EQ(sequences.size(), 15u);
  for (std::uint64_t i = 0; i < sequences.size(); ++i) EXPECT_EQ(sequences[i], i);
  // Pass 14 is due 280 ms after pass 0; drift would put it at >= 448 ms. The wide
  // margin absorbs a late wake-up on a loaded machine (a drift-free loop does not
  // accumulate them).
  // The lower bound allows pass 0 itself to start a little after its deadline (its
  // stamp is taken inside the pass), which shortens the measured span.
  const auto span = starts.back() - starts.front();
  EXPECT_GE(span, 270ms);
  EXPECT_LT(span, 400ms);
  EXPECT_EQ((*loop)->passes(), 15u);
}

TEST(SamplingLoop, OverrunSkipsDeadlinesInsteadOfBursting) {
  std::atomic<int> calls{0};
  std::vector<Clock::time_point> starts;
  SamplingLoop::Options opt;
  // Wide margins (a 20 ms overshoot of the sleep still misses exactly 3 deadlines),
  // so a loaded machine does not change the outcome.
  opt.interval = 40ms;
  opt.max_passes = 3;
  auto loop = SamplingLoop::start(
      opt,
      [&] {
        starts.push_back(Clock::now());
        if (calls++ == 0) std::this_thread::sleep_for(140ms);  // misses deadlines 1..3
        return GpuSnapshot{};
      },
      [](GpuSnapshot) {});
  ASSERT_TRUE(loop.ok());
  ASSERT_TRUE((*loop)->wait().ok());
  (*loop)->stop();
  EXPECT_EQ((*loop)->skipped_deadlines(), 3u);
  ASSERT_EQ(starts.size(), 3u);
  // Pass 2 runs at deadline 4 (160 ms), pass 3 at deadline 5 (200 ms): no burst at 140 ms.
  // Bounds leave 10 ms for pass 0 starting late (its stamp is taken inside the pass).
  EXPECT_GE(starts[1] - starts[0], 150ms);
  EXPECT_GE(starts[2] - starts[1], 25ms);
}

TEST(SamplingLoop, RejectsBadSettingsBeforeStartingAThread) {
  SamplingLoop::Options opt;
  opt.interval = 0ms;
  auto bad = SamplingLoop::start(
      opt, [] { return GpuSnapshot{}; }, [](GpuSnapshot) {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "sampling interval must be positive (got 0 ns): set gpu.interval_s > 0");
  opt.interval = 1s;
  auto no_sink = SamplingLoop::start(
      opt, [] { return GpuSnapshot{}; }, nullptr);
  ASSERT_FALSE(no_sink.ok());
  EXPECT_EQ(no_sink.error(), "sampling loop needs both a pass and a sink");
}

TEST(SamplingLoop, StopEndsAnUnboundedLoopPromptly) {
  std::atomic<int> passes{0};
  SamplingLoop::Options opt;
  opt.interval = 10s;  // the thread sleeps on its deadline; stop() must wake it
  auto loop = SamplingLoop::start(
      opt, [] { return GpuSnapshot{}; }, [&](GpuSnapshot) { ++passes; });
  ASSERT_TRUE(loop.ok());
  while (passes.load() == 0) std::this_thread::sleep_for(1ms);
  const auto t0 = Clock::now();
  (*loop)->stop();
  EXPECT_LT(Clock::now() - t0, 1s);
  EXPECT_EQ(passes.load(), 1);
  EXPECT_TRUE((*loop)->wait().ok());
}

TEST(SamplingLoop, SinkFailureStopsTheLoopWithAMessage) {
  SamplingLoop::Options opt;
  opt.interval = 1ms;
  auto loop = SamplingLoop::start(
      opt, [] { return GpuSnapshot{}; },
      [](GpuSnapshot) { throw std::runtime_error("exporter queue closed"); });
  ASSERT_TRUE(loop.ok());
  Status st = (*loop)->wait();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), "sampling pass 0 failed: exporter queue closed");
  EXPECT_EQ((*loop)->passes(), 0u);
}

}  // namespace
}  // namespace eacgm::sample
