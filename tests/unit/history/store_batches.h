// Batches and windows for the stores' tests: one process's calls of one function, a
// kernel and a GPU in a 10 s interval.
#pragma once

#include <cstdint>

#include "history/history_batch.h"
#include "history/history_query.h"

namespace eacgm::history::test {

constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kDay = 24 * 3600 * kS;
// 2026-11-01 00:00:00 UTC: an hour boundary, so minutes and hours line up in the tests.
constexpr std::int64_t kT0 = 1793491200LL * kS;

inline IntervalBatch batch(std::int64_t t, std::uint32_t pid, std::uint64_t calls, std::uint64_t dur_ns) {
  IntervalBatch b;
  b.t_ns = t;
  b.span_ns = 10 * kS;
  ProcessRecord p;
  p.key = {pid, kT0 - 100 * kS};
  p.comm = "train";
  p.rank = 3;
  p.first_ns = t;
  p.last_ns = t + b.span_ns;
  b.processes.push_back(p);
  FunctionRecord f;
  f.process = p.key;
  f.domain = "cuda";
  f.function = "cudaMemcpy";
  f.calls = calls;
  f.timed = calls;
  f.errors = 1;
  f.bytes = calls * 4096;
  analysis::LatencySketch s;
  for (std::uint64_t i = 0; i < calls; ++i) s.add(dur_ns + i);
  f.latency = stored(s);
  b.functions.push_back(f);
  b.kernels.push_back({"gemm", calls * 2});
  GpuRecord g;
  g.index = 0;
  g.uuid = "GPU-1";
  g.name = "H100";
  g.samples = 10;
  g.util_mean = 50.0;
  g.util_max = 90;
  b.gpus.push_back(g);
  return b;
}

// The batch above with the process's GPU time (kGpuTimeDomain): `launches` launches of
// one kernel, 10 of them timed at 50 us on the GPU.
inline IntervalBatch batch_with_gpu_time(std::int64_t t, std::uint32_t pid, std::uint64_t calls,
                                         std::uint64_t launches) {
  IntervalBatch b = batch(t, pid, calls, 1000);
  FunctionRecord g;
  g.process = b.processes.front().key;
  g.domain = kGpuTimeDomain;
  g.function = "gemm";
  g.calls = launches;
  g.timed = 10;
  analysis::LatencySketch s;
  for (int i = 0; i < 10; ++i) s.add(50'000);
  g.latency = stored(s);
  b.functions.push_back(g);
  return b;
}

// A rank of a Slurm job in a Kubernetes pod: every workload field set.
inline void set_workload(ProcessRecord& p) {
  p.container = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  p.pod_uid = "5f0e1d2c-3b4a-4958-8776-a5b4c3d2e1f0";
  p.pod = "trainer-0";
  p.namespace_ = "ml";
  p.container_name = "pytorch";
  p.job = "4242";
  p.job_step = "0";
}

inline HistoryQuery window(std::int64_t from, std::int64_t to) {
  HistoryQuery q;
  q.from_ns = from;
  q.to_ns = to;
  return q;
}

}  // namespace eacgm::history::test
