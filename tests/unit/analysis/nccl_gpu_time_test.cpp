// NCCL kernels the hook timed, joined to the calls that launched them (NcclGpuJoin) and
// turned into GPU time and nccl-tests' bandwidth per row and per size (NcclStats), on
// worked numbers.
#include <gtest/gtest.h>

#include "analysis/nccl_gpu_join.h"
#include "analysis/nccl_stats.h"
#include "nccl_events.h"

namespace eacgm::analysis {
namespace {

using testing::nccl_call;
using testing::nccl_probe;

// A queued NCCL kernel span of `dur_ns` launched by the calls' pid 1000 + rank at `launch_ns`.
GpuSpan kernel(std::uint64_t launch_ns, std::uint64_t dur_ns, std::int32_t rank = 0, bool queued = true) {
  GpuSpan s;
  s.pid = 1000 + static_cast<std::uint32_t>(rank);
  s.tid = s.pid;
  s.launch_ns = launch_ns;
  s.start_ns = launch_ns + 5000;
  s.duration_ns = dur_ns;
  s.nccl = true;
  s.queued = queued;
  return s;
}

// Kernels let go by one step of the join, each with the entries of its calls.
struct Let {
  std::vector<NcclJoined> out;
  std::vector<std::vector<std::uint32_t>> entries() const {
    std::vector<std::vector<std::uint32_t>> e;
    for (const auto& j : out) {
      e.emplace_back();
      for (const auto& c : j.calls) e.back().push_back(c.entry);
    }
    return e;
  }
};
using Entries = std::vector<std::vector<std::uint32_t>>;

TEST(NcclGpuJoin, AKernelJoinsTheCallWhoseIntervalHoldsItsLaunchOnceALaterCallCame) {
  NcclGpuJoin j;
  Let let;
  j.add_call(1, 1, {.ts_ns = 100, .end_ns = 200, .entry = 0}, let.out);
  j.add_call(1, 1, {.ts_ns = 300, .end_ns = 400, .entry = 1}, let.out);
  j.add_call(1, 2, {.ts_ns = 150, .end_ns = 350, .entry = 2}, let.out);
  j.add_kernel(1, 1, {.launch_ns = 150}, let.out);
  EXPECT_EQ(let.entries(), (Entries{{0}}));  // a call after it is known: let go
  let.out.clear();
  j.add_kernel(1, 1, {.launch_ns = 350}, let.out);
  j.add_kernel(1, 1, {.launch_ns = 399}, let.out);  // a second kernel of the same call
  j.add_kernel(1, 2, {.launch_ns = 200}, let.out);
  j.add_kernel(2, 1, {.launch_ns = 350}, let.out);  // another process: no call
  EXPECT_TRUE(let.out.empty());                     // all wait for a later call
  j.settle(360, let.out);
  EXPECT_EQ(let.entries(), (Entries{{1}, {2}, {}}));
  EXPECT_FALSE(let.out[0].calls[0].joined);
  let.out.clear();
  j.settle(UINT64_MAX, let.out);
  ASSERT_EQ(let.entries(), (Entries{{1}}));
  EXPECT_TRUE(let.out[0].calls[0].joined);  // the call had a kernel already
}

TEST(NcclGpuJoin, AKernelThatCameBeforeItsCallWaitsForIt) {
  NcclGpuJoin j;
  Let let;
  j.add_kernel(1, 1, {.launch_ns = 150, .duration_ns = 7}, let.out);
  EXPECT_TRUE(let.out.empty());
  j.add_call(1, 1, {.ts_ns = 100, .end_ns = 200, .entry = 3}, let.out);
  EXPECT_TRUE(let.out.empty());  // a later call of its thread may still come
  j.add_call(1, 1, {.ts_ns = 300, .end_ns = 400, .entry = 4}, let.out);
  ASSERT_EQ(let.entries(), (Entries{{3}}));
  EXPECT_EQ(let.out[0].kernel.duration_ns, 7u);
}

TEST(NcclGpuJoin, AKernelAfterTheCallsReturnedTakesTheGroupWithoutAKernel) {
  NcclGpuJoin j(
      {.max_threads = 8, .max_calls_per_thread = 16, .max_kernels_per_thread = 16, .group_window_ns = 1000});
  Let let;
  j.add_call(1, 1, {.ts_ns = 100, .end_ns = 110, .entry = 0}, let.out);
  j.add_kernel(1, 1, {.launch_ns = 105}, let.out);  // its own kernel
  // ncclGroupStart; three calls; ncclGroupEnd launches one kernel at 400.
  j.add_call(1, 1, {.ts_ns = 200, .end_ns = 210, .entry = 0}, let.out);
  j.add_call(1, 1, {.ts_ns = 220, .end_ns = 230, .entry = 0}, let.out);
  j.add_call(1, 1, {.ts_ns = 240, .end_ns = 250, .entry = 0}, let.out);
  j.add_kernel(1, 1, {.launch_ns = 400}, let.out);
  // Already joined, or returned longer than the window before: nothing.
  j.add_kernel(1, 1, {.launch_ns = 500}, let.out);
  j.add_call(1, 1, {.ts_ns = 600, .end_ns = 610, .entry = 0}, let.out);
  j.add_kernel(1, 1, {.launch_ns = 610 + 1001}, let.out);
  j.settle(UINT64_MAX, let.out);
  EXPECT_EQ(let.entries(), (Entries{{0}, {0, 0, 0}, {}, {}}));
}

TEST(NcclGpuJoin, BoundedInThreadsCallsAndWaitingKernels) {
  NcclGpuJoin j(
      {.max_threads = 2, .max_calls_per_thread = 2, .max_kernels_per_thread = 2, .group_window_ns = 0});
  Let let;
  j.add_kernel(1, 1, {.launch_ns = 150}, let.out);
  j.add_call(1, 1, {.ts_ns = 100, .end_ns = 200, .entry = 7}, let.out);
  j.add_call(1, 1, {.ts_ns = 300, .end_ns = 400, .entry = 8}, let.out);  // lets the kernel at 150 go
  j.add_call(1, 1, {.ts_ns = 500, .end_ns = 600, .entry = 9}, let.out);  // the call at 100 goes
  EXPECT_EQ(let.entries(), (Entries{{7}}));
  let.out.clear();
  // Three kernels waiting on thread 2: the oldest is joined at once (nothing to join).
  for (std::uint64_t t : {10u, 20u, 30u}) j.add_kernel(1, 2, {.launch_ns = t}, let.out);
  EXPECT_EQ(let.entries(), (Entries{{}}));
  let.out.clear();
  // A third thread: thread 2 (last seen at 30) goes, its waiting kernels let go.
  j.add_call(1, 3, {.ts_ns = 900, .end_ns = 1000}, let.out);
  EXPECT_EQ(j.thread_count(), 2u);
  EXPECT_EQ(let.entries(), (Entries{{}, {}}));
  let.out.clear();
  j.settle(UINT64_MAX, let.out);
  EXPECT_TRUE(let.out.empty());
}

// S over the kernels' GPU time, as nccl-tests computes it from its own timing, in all
// and per size class; the host-time figures stay as they were.
TEST(NcclStatsGpuTime, BandwidthOverTheJoinedKernelsTimeInAllAndPerSize) {
  auto allreduce = nccl_probe("ncclAllReduce");
  NcclStats n;
  // Two ranks; 1 MiB (262144 float32) three times, 4 MiB once; host time 10 us each.
  std::uint64_t t = 1'000'000'000;
  const std::uint64_t counts[] = {262144, 262144, 262144, 1048576};
  const std::uint64_t gpu[] = {100'000, 100'000, 100'000, 200'000};
  for (int i = 0; i < 4; ++i) {
    n.add(nccl_call(allreduce, {.ts_ns = t, .dur_ns = 10'000, .count = counts[i]}));
    n.add_gpu(kernel(t + 9'000, gpu[i]), t + 9'000);
    t += 1'000'000;
  }
  // An NCCL kernel no call launched, and a kernel that is not NCCL's.
  n.add_gpu(kernel(5, 1000), 5);
  GpuSpan other = kernel(t - 1'000'000 + 9'500, 1000);
  other.nccl = false;
  n.add_gpu(other, other.launch_ns);
  n.settle(UINT64_MAX);
  EXPECT_EQ(n.gpu_unjoined(), 1u);

  auto rows = n.rows();
  ASSERT_EQ(rows.size(), 1u);
  const auto& r = rows[0];
  ASSERT_TRUE(r.algbw);
  EXPECT_DOUBLE_EQ(*r.algbw, (3.0 * 1048576 + 4194304) / 40e-6);  // host time
  ASSERT_TRUE(r.gpu);
  EXPECT_EQ(r.gpu->calls, 4u);
  EXPECT_EQ(r.gpu->kernels, 4u);
  EXPECT_EQ(r.gpu->gpu_ns, 500'000u);
  ASSERT_TRUE(r.gpu->algbw);
  EXPECT_DOUBLE_EQ(*r.gpu->algbw, (3.0 * 1048576 + 4194304) / 500e-6);
  ASSERT_TRUE(r.gpu->busbw);
  EXPECT_DOUBLE_EQ(*r.gpu->busbw, *r.gpu->algbw * 2 * (2 - 1) / 2);
  ASSERT_EQ(r.gpu->sizes.size(), 2u);
  EXPECT_EQ(r.gpu->sizes[0].min_bytes, 1048576u);
  EXPECT_EQ(r.gpu->sizes[0].calls, 3u);
  EXPECT_NEAR(r.gpu->sizes[0].p50_ns, 100'000, 1000);
  ASSERT_TRUE(r.gpu->sizes[0].algbw);
  EXPECT_DOUBLE_EQ(*r.gpu->sizes[0].algbw, 1048576 / 100e-6);
  EXPECT_EQ(r.gpu->sizes[1].max_bytes, 4194304u);
  EXPECT_DOUBLE_EQ(*r.gpu->sizes[1].busbw, 4194304 / 200e-6);
}

TEST(NcclStatsGpuTime, GroupsSumTheirSizesAndMixedGroupsAreNotSplit) {
  auto allreduce = nccl_probe("ncclAllReduce");
  auto allgather = nccl_probe("ncclAllGather");
  NcclStats n;
  // A group of two all-reduces of 4 KiB (1024 float32), one kernel of 8 us after them.
  n.add(nccl_call(allreduce, {.ts_ns = 1000, .dur_ns = 100}));
  n.add(nccl_call(allreduce, {.ts_ns = 2000, .dur_ns = 100}));
  n.add_gpu(kernel(3000, 8000), 3000);
  // A group of an all-reduce and an all-gather: one kernel, not split between the rows.
  n.add(nccl_call(allreduce, {.ts_ns = 20'000'000, .dur_ns = 100}));
  n.add(nccl_call(allgather, {.ts_ns = 20'001'000, .dur_ns = 100}));
  n.add_gpu(kernel(20'002'000, 8000), 20'002'000);
  n.settle(UINT64_MAX);
  EXPECT_EQ(n.gpu_unjoined(), 1u);
  for (const auto& r : n.rows()) {
    if (r.function == "ncclAllGather") {
      EXPECT_FALSE(r.gpu);
      continue;
    }
    ASSERT_TRUE(r.gpu);
    EXPECT_EQ(r.gpu->calls, 2u);
    EXPECT_EQ(r.gpu->kernels, 1u);
    EXPECT_DOUBLE_EQ(*r.gpu->algbw, 8192 / 8e-6);
  }
}

TEST(NcclStatsGpuTime, LaterKernelsOfACallAddTimeNotBytesAndIdleStartsAreCounted) {
  auto allreduce = nccl_probe("ncclAllReduce");
  NcclStats n;
  n.add(nccl_call(allreduce, {.ts_ns = 1000, .dur_ns = 10'000, .count = 1024}));
  n.add_gpu(kernel(2000, 3000, 0, false), 2000);
  n.add_gpu(kernel(9000, 1000), 9000);
  n.settle(UINT64_MAX);
  auto rows = n.rows();
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_TRUE(rows[0].gpu);
  EXPECT_EQ(rows[0].gpu->calls, 1u);
  EXPECT_EQ(rows[0].gpu->kernels, 2u);
  EXPECT_EQ(rows[0].gpu->idle_starts, 1u);
  EXPECT_DOUBLE_EQ(*rows[0].gpu->algbw, 4096 / 4e-6);
}

TEST(NcclStatsGpuTime, WithoutSpansThereIsNoGpuFigure) {
  auto allreduce = nccl_probe("ncclAllReduce");
  NcclStats n;
  n.add(nccl_call(allreduce, {}));
  ASSERT_EQ(n.rows().size(), 1u);
  EXPECT_FALSE(n.rows()[0].gpu);
}

}  // namespace
}  // namespace eacgm::analysis
