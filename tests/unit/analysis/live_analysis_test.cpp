// LiveAnalysis: a snapshot each tick and a final one at the end, each a copy that
// later calls do not change; readers on another thread see them whole.
#include "analysis/live_analysis.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "../common/cuda_probe.h"

namespace eacgm::analysis {
namespace {

using test::cuda_probe;

std::vector<CallEvent> calls(const std::shared_ptr<const ProbeInfo>& p, std::size_t n, std::uint32_t pid) {
  std::vector<CallEvent> out(n);
  for (auto& e : out) {
    e.probe = p;
    e.pid = pid;
    e.has_exit = true;
    e.dur_ns = 1000;
  }
  return out;
}

std::uint64_t count_of(const CallSummary& s, const std::string& function) {
  for (const auto& r : s.rows()) {
    if (r.function == function) return r.calls;
  }
  return 0;
}

TEST(LiveAnalysis, PublishesACopyEachTickAndAFinalOne) {
  LiveAnalysis live;
  EXPECT_EQ(live.snapshot(), nullptr);
  auto malloc_probe = cuda_probe("cudaMalloc");
  live.on_calls(calls(malloc_probe, 5, 10));
  live.on_tick(std::chrono::steady_clock::now(), CounterValues{});
  auto first = live.snapshot();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->sequence, 1u);
  EXPECT_FALSE(first->final);
  EXPECT_EQ(count_of(first->calls, "cudaMalloc"), 5u);

  live.on_calls(calls(malloc_probe, 3, 10));
  GpuSnapshot gpu;
  gpu.devices.resize(1);
  live.on_gpu(gpu);
  EXPECT_EQ(count_of(first->calls, "cudaMalloc"), 5u) << "a published snapshot never changes";

  CounterValues counters;
  live.on_end(counters);
  auto last = live.snapshot();
  EXPECT_TRUE(last->final);
  EXPECT_EQ(last->sequence, 2u);
  EXPECT_EQ(count_of(last->calls, "cudaMalloc"), 8u);
  ASSERT_TRUE(last->last_gpu.has_value());
  EXPECT_EQ(last->last_gpu->devices.size(), 1u);
  EXPECT_TRUE(last->gpu.has_samples());
}

TEST(LiveAnalysis, ReaderThreadSeesGrowingWholeSnapshots) {
  LiveAnalysis live;
  auto p = cuda_probe("cudaLaunchKernel");
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> bad{0}, reads{0};
  std::thread reader([&] {
    std::uint64_t last_calls = 0;
    while (!done.load()) {
      auto s = live.snapshot();
      if (!s) continue;
      auto n = count_of(s->calls, "cudaLaunchKernel");
      // Calls come in tens, one batch per tick.
      if (n % 10 != 0 || n < last_calls) ++bad;
      last_calls = n;
      ++reads;
    }
  });
  for (int tick = 0; tick < 300; ++tick) {
    live.on_calls(calls(p, 10, 1));
    live.on_tick(std::chrono::steady_clock::now(), CounterValues{});
  }
  done = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_EQ(count_of(live.snapshot()->calls, "cudaLaunchKernel"), 3000u);
}

// The daemon's Python profile: a tick moves its window, and a snapshot follows (at most
// every kPythonRefresh).
TEST(LiveAnalysis, PythonWindowMovesAtTicks) {
  LiveAnalysis live;
  PythonProfileLimits limits;
  limits.window_ns = 10'000'000'000;
  live.set_python_hz(99);
  live.set_python_limits(limits);
  const auto start = std::chrono::steady_clock::now();
  PythonStack s;
  s.pid = 7;
  s.tid = 7;
  s.comm = "python3";
  s.ts_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count());
  s.frames.push_back(PythonFrame{std::make_shared<const PythonCode>(PythonCode{"f", "/x.py", 1}), 2});
  const std::vector<PythonStack> stacks(3, s);
  live.on_python_stacks(stacks);
  live.on_tick(start, CounterValues{});
  ASSERT_NE(live.snapshot()->python, nullptr);
  EXPECT_EQ(live.snapshot()->python->samples, 3u);
  EXPECT_EQ(live.snapshot()->python->window_ns, limits.window_ns);
  // Made again at most every kPythonRefresh: new samples show 5 s after the last time.
  live.on_python_stacks(std::span(stacks).first(2));
  live.on_tick(start + std::chrono::seconds(1), CounterValues{});
  EXPECT_EQ(live.snapshot()->python->samples, 3u);
  live.on_tick(start + LiveAnalysis::kPythonRefresh, CounterValues{});
  EXPECT_EQ(live.snapshot()->python->samples, 5u);
  live.on_tick(start + std::chrono::seconds(11), CounterValues{});
  EXPECT_EQ(live.snapshot()->python->samples, 0u);
  EXPECT_TRUE(live.snapshot()->python->processes.empty());
}

}  // namespace
}  // namespace eacgm::analysis
