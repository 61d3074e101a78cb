// GpuTimes' per-shape figures: each (grid, block, shared memory) of a kernel has its own
// p50/p99; shapes past the per-function and global bounds are counted, not kept; the first
// launch is kept apart; the estimated GPU time's confidence interval covers the true total.
// Per process: the timed spans' busy share beside NVML's SM utilization for the process.
#include "analysis/gpu_times.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using eacgm::GpuSpan;
using eacgm::GpuTimeBatch;
using eacgm::analysis::GpuTimes;

GpuSpan span(std::uint64_t function, unsigned grid_x, std::uint64_t ns, bool shaped = true) {
  GpuSpan s;
  s.pid = 7;
  s.function = function;
  s.stream = 0x10;
  s.device = 0;
  s.start_ns = 1000;
  s.duration_ns = ns;
  s.queued = true;
  s.shaped = shaped;
  s.shape = eacgm::gpu_time::LaunchShape{{grid_x, 1, 1}, {128, 1, 1}, 0, 0};
  return s;
}

TEST(GpuTimes, EachShapeHasItsOwnQuantiles) {
  GpuTimes times;
  GpuTimeBatch b;
  for (int i = 0; i < 30; ++i) b.spans.push_back(span(1, 1, 10'000));
  for (int i = 0; i < 10; ++i) b.spans.push_back(span(1, 8, 80'000));
  b.spans.push_back(span(1, 8, 80'000, false));  // no shape: the kernel's figures only
  times.add(b);
  const auto summary = times.summary();
  ASSERT_EQ(summary.kernels.size(), 1u);
  const auto& row = summary.kernels[0];
  EXPECT_EQ(row.timed, 41u);
  ASSERT_EQ(row.shapes.size(), 2u);
  EXPECT_EQ(row.shapes[0].shape.grid[0], 1u) << "the most timed shape first";
  EXPECT_EQ(row.shapes[0].timed, 30u);
  EXPECT_NEAR(row.shapes[0].p50_ns, 10'000, 100);
  EXPECT_EQ(row.shapes[1].shape.grid[0], 8u);
  EXPECT_EQ(row.shapes[1].timed, 10u);
  EXPECT_NEAR(row.shapes[1].p50_ns, 80'000, 800);
  EXPECT_DOUBLE_EQ(row.shapes[1].mean_ns, 80'000);
  EXPECT_FALSE(row.shapes[1].upper_bound);
  EXPECT_EQ(row.shapes_left_out, 0u);
}

TEST(GpuTimes, ShapesPastTheBoundsAreCountedNotKept) {
  GpuTimes times(16, 20);  // 16 per function (kMaxShapesPerFunction), 20 in all
  GpuTimeBatch b;
  for (unsigned g = 1; g <= GpuTimes::kMaxShapesPerFunction + 3; ++g)
    b.spans.push_back(span(1, g, std::uint64_t{1000} * g));
  for (unsigned g = 1; g <= 10; ++g) b.spans.push_back(span(2, g, std::uint64_t{1000} * g));
  times.add(b);
  const auto summary = times.summary();
  ASSERT_EQ(summary.kernels.size(), 2u);
  std::size_t kept = 0, left_out = 0;
  for (const auto& row : summary.kernels) {
    EXPECT_LE(row.shapes.size(), GpuTimes::kMaxShapesPerFunction);
    EXPECT_EQ(row.timed, row.function == 1 ? GpuTimes::kMaxShapesPerFunction + 3 : 10u);
    kept += row.shapes.size();
    left_out += row.shapes_left_out;
  }
  EXPECT_EQ(kept, 20u);
  EXPECT_EQ(left_out, GpuTimes::kMaxShapesPerFunction + 3 + 10 - 20);
}

}  // namespace

namespace {

eacgm::GpuRingState ring(std::uint32_t pid, std::uint64_t sampled, bool exited = false) {
  eacgm::GpuRingState r;
  r.pid = pid;
  r.sampled = sampled;
  r.exited = exited;
  return r;
}

eacgm::GpuSnapshot nvml_pass(std::uint32_t pid, std::optional<std::uint32_t> sm) {
  eacgm::GpuSnapshot pass;
  eacgm::ProcessSample p;
  p.pid = pid;
  p.sm_utilization_percent = sm;
  pass.processes.push_back(p);
  return pass;
}

}  // namespace

TEST(GpuTimes, ProcessBusyShareSitsBesideNvmlsUtilization) {
  GpuTimes times;
  times.observe_nvml(nvml_pass(7, 90));  // before any ring: not the timed window
  GpuTimeBatch b;
  // Two streams on one device: 30 us and 20 us of GPU time within 100 us.
  GpuSpan a = span(1, 1, 30'000);
  GpuSpan c = span(2, 1, 20'000);
  c.stream = 0x20;
  c.start_ns = 81'000;
  b.spans = {a, c};
  b.rings.push_back(ring(7, 2));
  b.rings.push_back(ring(8, 0));  // carries the hook, nothing timed yet
  times.add(b);
  times.observe_nvml(nvml_pass(7, 40));
  times.observe_nvml(nvml_pass(7, 60));
  times.observe_nvml(nvml_pass(7, std::nullopt));  // the GPU did not say
  times.observe_nvml(nvml_pass(8, 75));            // not timed yet
  times.observe_nvml(nvml_pass(9, 75));            // no ring

  const auto summary = times.summary();
  ASSERT_EQ(summary.processes.size(), 2u);
  const auto& p = summary.processes[0];
  EXPECT_EQ(p.ring.pid, 7u);
  EXPECT_EQ(p.devices, 1u);
  ASSERT_TRUE(p.busy_percent.has_value());
  EXPECT_NEAR(*p.busy_percent, 50.0, 1e-9) << "50 us busy from 1 us to 101 us";
  ASSERT_TRUE(p.nvml_sm_percent.has_value());
  EXPECT_DOUBLE_EQ(*p.nvml_sm_percent, 50.0);
  EXPECT_EQ(p.nvml_samples, 2u);
  const auto& q = summary.processes[1];
  EXPECT_EQ(q.ring.pid, 8u);
  EXPECT_FALSE(q.busy_percent.has_value());
  EXPECT_FALSE(q.nvml_sm_percent.has_value());

  // Once the process has exited, later passes (a reused pid) are not its.
  GpuTimeBatch gone;
  gone.rings.push_back(ring(7, 2, true));
  times.add(gone);
  times.observe_nvml(nvml_pass(7, 0));
  EXPECT_EQ(times.summary().processes[0].nvml_samples, 2u);
}

TEST(GpuTimes, BusyShareIsPerDeviceAndAtMostAll) {
  GpuTimes times;
  GpuTimeBatch b;
  GpuSpan a = span(1, 1, 100'000);
  GpuSpan c = span(2, 1, 100'000);
  c.device = 1;
  c.stream = 0x20;
  GpuSpan d = span(3, 1, 100'000);  // a third stream overlapping on device 0
  d.stream = 0x30;
  b.spans = {a, c, d};
  b.rings.push_back(ring(7, 3));
  times.add(b);
  const auto p = times.summary().processes.at(0);
  EXPECT_EQ(p.devices, 2u);
  ASSERT_TRUE(p.busy_percent.has_value());
  EXPECT_DOUBLE_EQ(*p.busy_percent, 100.0) << "300 us over 2 devices x 100 us: capped";
}

// A kernel's first launch runs cold (here 100 times its usual 20 us): it is shown apart,
// counts once in the estimate, and moves neither p50 nor the mean nor a shape's figures.
TEST(GpuTimes, TheFirstLaunchIsKeptApartFromTheSteadyFigures) {
  GpuTimes times;
  GpuTimeBatch b;
  GpuSpan cold = span(1, 1, 2'000'000);
  cold.first = true;
  cold.queued = false;
  b.spans.push_back(cold);
  for (int i = 0; i < 9; ++i) b.spans.push_back(span(1, 1, 20'000));
  b.counts.push_back(eacgm::GpuLaunchCount{7, 1, 100, false});
  GpuSpan only = span(2, 1, 500'000);
  only.first = true;
  b.spans.push_back(only);
  b.counts.push_back(eacgm::GpuLaunchCount{7, 2, 1, false});
  times.add(b);
  const auto summary = times.summary();
  ASSERT_EQ(summary.kernels.size(), 2u);
  const auto& row = summary.kernels[0];
  ASSERT_EQ(row.function, 1u);
  EXPECT_EQ(row.timed, 10u);
  EXPECT_EQ(row.samples, 9u) << "the first launch is behind none of the figures";
  EXPECT_EQ(row.idle_starts, 0u);
  EXPECT_FALSE(row.upper_bound);
  EXPECT_NEAR(row.p50_ns, 20'000, 200);
  EXPECT_NEAR(row.p99_ns, 20'000, 200);
  EXPECT_DOUBLE_EQ(row.mean_ns, 20'000);
  ASSERT_TRUE(row.first_launch_ns.has_value());
  EXPECT_DOUBLE_EQ(*row.first_launch_ns, 2'000'000);
  EXPECT_DOUBLE_EQ(row.est_gpu_ns, 2'000'000 + 99 * 20'000.0);
  ASSERT_TRUE(row.est_gpu_ci_ns.has_value());
  EXPECT_DOUBLE_EQ(*row.est_gpu_ci_ns, 0) << "no variance among the timed launches";
  ASSERT_EQ(row.shapes.size(), 1u);
  EXPECT_EQ(row.shapes[0].timed, 9u);
  EXPECT_EQ(row.shapes[0].samples, 9u);
  EXPECT_DOUBLE_EQ(row.shapes[0].mean_ns, 20'000);
  // Launched once: its first launch is its whole GPU time, exactly, with no steady figures.
  const auto& once = summary.kernels[1];
  EXPECT_EQ(once.samples, 0u);
  EXPECT_EQ(once.timed, 1u);
  EXPECT_DOUBLE_EQ(once.est_gpu_ns, 500'000);
  EXPECT_EQ(once.est_gpu_ci_ns, std::optional<double>(0));
  ASSERT_EQ(summary.streams.size(), 1u);
  EXPECT_DOUBLE_EQ(summary.streams[0].est_busy_ns, 2'000'000 + 99 * 20'000.0 + 500'000);
}

// A simulated population: a kernel launched 20,000 times whose duration follows a pattern
// of period 2 (10 and 30 us) plus noise, timed as the hook chooses (one launch at random
// in each block of 200, as govern/hookcore/sample_rate.h sample_launch; the first apart). Over 400 runs with
// other function addresses the 95% interval holds the true total in about 95% of them, its half-width is
// near 1.96 standard deviations of the estimates, and the estimates are unbiased.
TEST(GpuTimes, TheEstimatesConfidenceIntervalCoversTheTrueTotal) {
  constexpr int kRuns = 400;
  constexpr std::uint64_t kLaunches = 20'000;
  int covered = 0;
  double mean_half = 0, sum_err = 0, sum_err2 = 0;
  for (int run = 0; run < kRuns; ++run) {
    const std::uint64_t function = 0x7f0000400000ull + 0x80ull * static_cast<std::uint64_t>(run);
    std::uint64_t x = function;  // xorshift, its own per run: the noise and the choice
    auto next = [&x] {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      return x;
    };
    GpuTimes times;
    GpuTimeBatch b;
    double truth = 0;
    std::uint64_t pick = 0;
    for (std::uint64_t n = 0; n < kLaunches; ++n) {
      const std::uint64_t ns = (n % 2 == 0 ? 10'000 : 30'000) + next() % 4'000 + (n == 0 ? 1'000'000 : 0);
      truth += static_cast<double>(ns);
      if (n % 200 == 0) pick = n + next() % 200;
      if (n != 0 && n != pick) continue;
      GpuSpan s = span(function, 1, ns);
      s.first = n == 0;
      b.spans.push_back(s);
    }
    b.counts.push_back(eacgm::GpuLaunchCount{7, function, kLaunches, false});
    times.add(b);
    const auto row = times.summary().kernels.at(0);
    ASSERT_TRUE(row.est_gpu_ci_ns.has_value());
    const double err = row.est_gpu_ns - truth;
    covered += std::abs(err) <= *row.est_gpu_ci_ns ? 1 : 0;
    mean_half += *row.est_gpu_ci_ns / kRuns;
    sum_err += err;
    sum_err2 += err * err;
  }
  const double bias = sum_err / kRuns;
  const double sd = std::sqrt(sum_err2 / kRuns - bias * bias);
  EXPECT_GE(covered, 0.91 * kRuns) << "95% intervals";
  EXPECT_LE(covered, 0.99 * kRuns) << "not wider than they need be";
  EXPECT_LT(std::abs(bias), 3 * sd / std::sqrt(kRuns)) << "unbiased: the two sizes are timed alike";
  EXPECT_NEAR(mean_half, 1.96 * sd, 0.2 * 1.96 * sd);
  std::printf(
      "95%% intervals covering the total: %d of %d; bias %.0f ns, sd %.0f ns, mean half-width %.0f ns\n",
      covered, kRuns, bias, sd, mean_half);
}
