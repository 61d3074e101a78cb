// Where a job's time went, on hand-made rows: host waits by kind against the processes'
// traced time, GPU time with NCCL's part and the top kernels, and "not measured" where no
// GPU time was.
#include <gtest/gtest.h>

#include <algorithm>

#include "history/job_report.h"

namespace eacgm::history {
namespace {

constexpr std::int64_t kS = 1'000'000'000;

JobProcessLife life(std::string job, std::uint32_t pid, std::int64_t first_s, std::int64_t last_s) {
  return {std::move(job), "node-a", pid, 1, first_s * kS, last_s * kS};
}

// `calls` calls of which `timed` took `each_ms` each; `estimated` of the calls scaled.
JobFunctionRow row(std::string job, std::uint32_t pid, std::string domain, std::string function,
                   std::uint64_t calls, std::uint64_t timed, double each_ms, std::uint64_t estimated = 0) {
  JobFunctionRow f;
  f.job = std::move(job);
  f.node = "node-a";
  f.pid = pid;
  f.start_ns = 1;
  f.domain = std::move(domain);
  f.function = std::move(function);
  f.sums.calls = calls;
  f.sums.timed = timed;
  f.sums.estimated = estimated;
  f.sums.latency.count = timed;
  f.sums.latency.sum_ns = static_cast<std::uint64_t>(static_cast<double>(timed) * each_ms * 1e6);
  return f;
}

std::vector<JobReportRow> jobs(std::initializer_list<const char*> names) {
  std::vector<JobReportRow> out;
  for (const char* n : names) {
    out.emplace_back();
    out.back().job = n;
  }
  return out;
}

HistoryQuery window(std::int64_t from_s, std::int64_t to_s) {
  HistoryQuery q;
  q.from_ns = from_s * kS;
  q.to_ns = to_s * kS;
  return q;
}

TEST(JobTime, HostWaitsByKindOverTheProcessesTracedTime) {
  auto rows = jobs({"j1"});
  JobTimeRows in;
  // Two processes: 100 s and 50 s of the window (the first lived before it).
  in.processes = {life("j1", 10, -20, 100), life("j1", 11, 50, 100)};
  in.functions = {
      // 1000 synchronizations of 10 ms: 10 s; with the _ptds variant's 500 of 10 ms, 15 s.
      row("j1", 10, "cudart", "cudaStreamSynchronize", 1000, 1000, 10),
      row("j1", 11, "cudart", "cudaStreamSynchronize_ptds", 500, 500, 10),
      // Always-on: 400 copies counted, 100 of them timed at 20 ms: 8 s, an estimate.
      row("j1", 10, "cuda", "cuMemcpyDtoH_v2", 400, 100, 20, 400),
      // An NCCL set-up: 2 s.
      row("j1", 11, "nccl", "ncclCommInitRank", 1, 1, 2000),
      // Not waits: launches and async copies.
      row("j1", 10, "cudart", "cudaLaunchKernel", 9000, 9000, 1),
      row("j1", 10, "cudart", "cudaMemcpyAsync", 100, 100, 5),
  };
  add_job_times(rows, in, window(0, 100), ReportOptions{});
  const JobTime& t = rows[0].time;
  EXPECT_EQ(t.processes, 2u);
  EXPECT_DOUBLE_EQ(t.wall_seconds, 150);
  EXPECT_NEAR(t.host_wait_seconds, 25, 1e-9);
  ASSERT_EQ(t.host_waits.size(), 3u);
  EXPECT_EQ(t.host_waits[0].kind, "stream_sync");
  EXPECT_EQ(t.host_waits[0].calls, 1500u);
  EXPECT_NEAR(t.host_waits[0].seconds, 15, 1e-9);
  EXPECT_FALSE(t.host_waits[0].estimated);
  EXPECT_EQ(t.host_waits[1].kind, "blocking_copy");
  EXPECT_NEAR(t.host_waits[1].seconds, 8, 1e-9);
  EXPECT_TRUE(t.host_waits[1].estimated);
  EXPECT_EQ(t.host_waits[2].kind, "nccl");
  EXPECT_NEAR(t.host_waits[2].seconds, 2, 1e-9);
  // No GPU time rows: not measured, not zero.
  EXPECT_FALSE(t.gpu_seconds);
  EXPECT_FALSE(t.nccl_gpu_seconds);
  EXPECT_TRUE(t.top_kernels.empty());
}

TEST(JobTime, TimeIsCallsTimesTheWindowsMeanSoRollupsAgree) {
  // Two intervals of one process, and the same calls rolled into one row: the same time.
  auto split = jobs({"j1"});
  auto rolled = jobs({"j1"});
  JobTimeRows a, b;
  a.processes = b.processes = {life("j1", 10, 0, 100)};
  a.functions = {row("j1", 10, "cudart", "cudaDeviceSynchronize", 100, 10, 1),
                 row("j1", 10, "cudart", "cudaDeviceSynchronize", 300, 30, 3)};
  JobFunctionRow merged = row("j1", 10, "cudart", "cudaDeviceSynchronize", 400, 40, 0);
  merged.sums.latency.sum_ns = a.functions[0].sums.latency.sum_ns + a.functions[1].sums.latency.sum_ns;
  b.functions = {merged};
  add_job_times(split, a, window(0, 100), {});
  add_job_times(rolled, b, window(0, 100), {});
  // 400 calls x (10 x 1 ms + 30 x 3 ms) / 40 = 1 s.
  EXPECT_NEAR(split[0].time.host_wait_seconds, 1.0, 1e-9);
  EXPECT_EQ(split[0].time.host_wait_seconds, rolled[0].time.host_wait_seconds);
  EXPECT_TRUE(split[0].time.host_waits[0].estimated);  // 40 of 400 timed
}

TEST(JobTime, GpuTimeNcclShareAndTopKernels) {
  auto rows = jobs({"j1", "j2"});
  JobTimeRows in;
  in.processes = {life("j1", 10, 0, 100), life("j1", 11, 0, 100), life("j2", 20, 0, 100)};
  in.functions = {
      // 1000 GEMMs, 100 timed at 20 ms: 20 s; the other rank's 10 s.
      row("j1", 10, kGpuTimeDomain, "gemm", 1000, 100, 20),
      row("j1", 11, kGpuTimeDomain, "gemm", 500, 50, 20),
      // All-reduces: 200 of 50 ms, 10 s; a second NCCL kernel 1 s.
      row("j1", 10, kGpuTimeDomain, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 200, 20, 50),
      row("j1", 11, kGpuTimeDomain, "ncclKernel_Broadcast", 10, 10, 100),
      row("j1", 10, kGpuTimeDomain, "elementwise", 100, 100, 10),      // 1 s
      row("j1", 10, kGpuTimeDomain, "reduce", 100, 100, 5),            // 0.5 s
      row("j1", 10, kGpuTimeDomain, "softmax", 100, 100, 2),           // 0.2 s
      row("j1", 10, kGpuTimeDomain, "untimed", 100, 0, 0),             // launched, none timed
      row("j1", 10, "cudart", "cudaLaunchKernel", 2000, 2000, 0.005),  // not GPU time
      // j2: no GPU time measured, one wait.
      row("j2", 20, "cuda", "cuCtxSynchronize", 10, 10, 100),
      // A process of no job in the report: left out.
      row("other", 30, kGpuTimeDomain, "gemm", 10, 10, 1000),
  };
  ReportOptions options;
  options.top_kernels = 3;
  add_job_times(rows, in, window(0, 100), options);
  const JobTime& t = rows[0].time;
  ASSERT_TRUE(t.gpu_seconds);
  EXPECT_NEAR(*t.gpu_seconds, 30 + 10 + 1 + 1 + 0.5 + 0.2, 1e-9);
  ASSERT_TRUE(t.nccl_gpu_seconds);
  EXPECT_NEAR(*t.nccl_gpu_seconds, 11, 1e-9);
  EXPECT_EQ(t.nccl_timed_launches, 30u);
  EXPECT_EQ(t.gpu_timed_launches, 150u + 30 + 100 + 100 + 100);
  ASSERT_EQ(t.top_kernels.size(), 3u);
  EXPECT_EQ(t.top_kernels[0].name, "gemm");
  EXPECT_EQ(t.top_kernels[0].launches, 1500u);
  EXPECT_EQ(t.top_kernels[0].timed, 150u);
  EXPECT_NEAR(t.top_kernels[0].gpu_seconds, 30, 1e-9);
  EXPECT_EQ(t.top_kernels[1].name, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  // 1 s each: the more launches first.
  EXPECT_EQ(t.top_kernels[2].name, "elementwise");
  EXPECT_EQ(t.host_wait_seconds, 0);
  EXPECT_TRUE(t.host_waits.empty());

  const JobTime& t2 = rows[1].time;
  EXPECT_FALSE(t2.gpu_seconds);
  EXPECT_FALSE(t2.nccl_gpu_seconds);
  EXPECT_EQ(t2.gpu_timed_launches, 0u);
  EXPECT_NEAR(t2.host_wait_seconds, 1, 1e-9);
  EXPECT_EQ(t2.host_waits[0].kind, "device_sync");
}

TEST(JobTime, GpuTimeWithoutNcclKernelsIsAMeasuredZero) {
  auto rows = jobs({"j1"});
  JobTimeRows in;
  in.processes = {life("j1", 10, 0, 10)};
  in.functions = {row("j1", 10, kGpuTimeDomain, "gemm", 10, 10, 1)};
  add_job_times(rows, in, window(0, 10), {});
  ASSERT_TRUE(rows[0].time.nccl_gpu_seconds);
  EXPECT_EQ(*rows[0].time.nccl_gpu_seconds, 0);
  EXPECT_NEAR(rows[0].time.gpu_seconds.value_or(0), 0.01, 1e-12);
}

TEST(JobTime, WaitNamesCoverEverySuffixTheClassificationIgnores) {
  const auto names = host_wait_function_names();
  for (const char* n : {"cudaStreamSynchronize", "cudaStreamSynchronize_ptsz", "cudaMemcpy_ptds",
                        "cuMemcpyDtoH_v2", "cuCtxSynchronize_v2", "ncclCommInitRankConfig"}) {
    EXPECT_TRUE(std::binary_search(names.begin(), names.end(), n)) << n;
  }
  EXPECT_FALSE(std::binary_search(names.begin(), names.end(), "cudaLaunchKernel"));
}

}  // namespace
}  // namespace eacgm::history
