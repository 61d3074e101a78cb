// LiveAnalysis: a snapshot each tick and a final one at the end, each a copy that
// later calls do not change; readers on another thread see them whole.
#include "analysis/live_analysis.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "../common/cuda_probe.h"
#include "analysis/call_summary.h"
#include "analysis/gpu_activity.h"
#include "analysis/python_profile.h"
#include "core/gpu_sample.h"

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
  EXPECT_EQ(count_of(first->get<analysis::CallSummary>(), "cudaMalloc"), 5u);

  live.on_calls(calls(malloc_probe, 3, 10));
  GpuSnapshot gpu;
  gpu.devices.resize(1);
  live.on_gpu(gpu);
  EXPECT_EQ(count_of(first->get<analysis::CallSummary>(), "cudaMalloc"), 5u)
      << "a published snapshot never changes";

  CounterValues counters;
  live.on_end(counters);
  auto last = live.snapshot();
  EXPECT_TRUE(last->final);
  EXPECT_EQ(last->sequence, 2u);
  EXPECT_EQ(count_of(last->get<analysis::CallSummary>(), "cudaMalloc"), 8u);
  ASSERT_TRUE((last->find<GpuSnapshot>() != nullptr));
  EXPECT_EQ(last->find<GpuSnapshot>()->devices.size(), 1u);
  EXPECT_TRUE(last->get<analysis::GpuActivity>().has_samples());
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
      auto n = count_of(s->get<CallSummary>(), "cudaLaunchKernel");
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
  EXPECT_EQ(count_of(live.snapshot()->get<CallSummary>(), "cudaLaunchKernel"), 3000u);
}

// The daemon's Python profile: a tick moves its window, and a snapshot follows (at most
// every 5 s, the Python analysis's refresh).
TEST(LiveAnalysis, PythonWindowMovesAtTicks) {
  LiveAnalysis live;
  AnalysisSettings settings;
  settings.python_hz = 99;
  settings.python_limits.window_ns = 10'000'000'000;
  live.configure(settings);
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
  ASSERT_NE(live.snapshot()->find<PythonHotSpots>(), nullptr);
  EXPECT_EQ(live.snapshot()->find<PythonHotSpots>()->samples, 3u);
  EXPECT_EQ(live.snapshot()->find<PythonHotSpots>()->window_ns, settings.python_limits.window_ns);
  // Made again at most every 5 s: new samples show 5 s after the last time.
  live.on_python_stacks(std::span(stacks).first(2));
  live.on_tick(start + std::chrono::seconds(1), CounterValues{});
  EXPECT_EQ(live.snapshot()->find<PythonHotSpots>()->samples, 3u);
  live.on_tick(start + std::chrono::seconds(5), CounterValues{});
  EXPECT_EQ(live.snapshot()->find<PythonHotSpots>()->samples, 5u);
  live.on_tick(start + std::chrono::seconds(11), CounterValues{});
  EXPECT_EQ(live.snapshot()->find<PythonHotSpots>()->samples, 0u);
  EXPECT_TRUE(live.snapshot()->find<PythonHotSpots>()->processes.empty());
}

}  // namespace
}  // namespace eacgm::analysis
