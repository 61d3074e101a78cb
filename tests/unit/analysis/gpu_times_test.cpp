// GpuTimes' per-shape figures: each (grid, block, shared memory) of a kernel has its own
// p50/p99; shapes past the per-function and global bounds are counted, not kept.
#include "analysis/gpu_times.h"

#include <gtest/gtest.h>

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
