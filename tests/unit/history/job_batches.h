// A day's work of a job and a pod on two nodes, as the job report's tests write it, and
// a report row's figures to compare (job_report_store_test.cpp, fleet_shipper_test.cpp).
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>

#include "analysis/latency_sketch.h"
#include "history/job_report.h"
#include "store_batches.h"

namespace eacgm::history::test {

inline ProcessRecord process(std::uint32_t pid, std::string job, std::string pod, std::int64_t t) {
  ProcessRecord p;
  p.key = {pid, kT0 - 100 * kS};
  p.comm = "train";
  p.job = std::move(job);
  p.pod = std::move(pod);
  p.namespace_ = "team-a";
  p.first_ns = t;
  p.last_ns = t + 10 * kS;
  return p;
}

// `calls` calls of `function` in `domain` by process `key`, `timed` of them taking `each_ns`.
inline FunctionRecord calls(ProcessKey key, std::string domain, std::string function, std::uint64_t calls,
                            std::uint64_t timed, std::uint64_t each_ns) {
  FunctionRecord f;
  f.process = key;
  f.domain = std::move(domain);
  f.function = std::move(function);
  f.calls = calls;
  f.timed = timed;
  f.estimated = timed < calls ? calls : 0;
  analysis::LatencySketch s;
  for (std::uint64_t i = 0; i < timed; ++i) s.add(each_ns);
  f.latency = stored(s);
  return f;
}

// An interval of `node`: job "train" (pid 10) on GPU 0, busy the first half hour and idle
// after; on node-a pod "notebook" (pid 20) shares GPU 0 with SM shares 30 against 10.
// "train" synchronizes its stream 10 times for 5 ms each (50 ms), runs 100 GEMMs (10 timed
// at 4 ms: 400 ms of GPU time) and 10 all-reduces of 10 ms (100 ms); the notebook copies
// (an always-on estimate: 8 calls, 4 timed at 25 ms: 200 ms), its GPU time not measured.
inline IntervalBatch interval(const std::string& node, std::int64_t i) {
  IntervalBatch b;
  b.t_ns = kT0 + 10 * kS * i;
  b.span_ns = 10 * kS;
  b.processes.push_back(process(10, "train", "", b.t_ns));
  GpuRecord g;
  g.uuid = node + "-GPU-0";
  g.name = "H100";
  g.samples = 10;
  g.util_mean = i < 180 ? 90.0 : 0.0;
  g.sm_active_mean = i < 180 ? 0.8 : 0.01;
  g.tensor_active_mean = 0.5;
  g.memory_total = 80;
  g.power_mean_w = 360;
  g.energy_mj = 10e6;  // 10 kJ a row: 1 kWh an hour
  g.energy_counter_ns = b.span_ns;
  b.gpus.push_back(g);
  const std::uint64_t idle = i < 180 ? 0 : 10;  // every pass of an idle row
  // Each pass's 360 W split by SM share: train's 30 of 40 on node-a, all of it elsewhere.
  const double train_share = node == "node-a" ? 2700.0 : 3600.0;
  b.gpu_processes.push_back(GpuProcessRecord{0, b.processes[0].key, 10, 40, 30.0, idle, 3600.0, train_share});
  const ProcessKey train = b.processes[0].key;
  b.functions.push_back(calls(train, "cudart", "cudaStreamSynchronize", 10, 10, 5'000'000));
  b.functions.push_back(calls(train, "cudart", "cudaLaunchKernel", 110, 110, 5'000));
  b.functions.push_back(calls(train, kGpuTimeDomain, "gemm", 100, 10, 4'000'000));
  b.functions.push_back(calls(train, kGpuTimeDomain, "ncclDevKernel_AllReduce_Sum_f32", 10, 10, 10'000'000));
  if (node == "node-a") {
    b.processes.push_back(process(20, "", "notebook", b.t_ns));
    b.gpu_processes.push_back(GpuProcessRecord{0, b.processes[1].key, 10, 8, 10.0, idle, 3600.0, 900.0});
    b.functions.push_back(calls(b.processes[1].key, "cuda", "cuMemcpyDtoH_v2", 8, 4, 25'000'000));
  }
  return b;
}

// Every figure of a row, numbers to the last bit (fmt's shortest exact form).
inline std::string figures(const JobReportRow& r) {
  const JobTime& t = r.time;
  std::string out =
      fmt::format("{} {} {} {} {} {} {} {} {} {}", r.job, fmt::join(r.nodes, ","), r.gpus, r.gpu_hours,
                  r.idle_gpu_hours, r.energy_kwh, r.cost, r.share_basis, r.first_ns, r.last_ns);
  out += fmt::format("\n{} processes, {} s, waits {} s:", t.processes, t.wall_seconds, t.host_wait_seconds);
  for (const auto& w : t.host_waits)
    out += fmt::format(" {}/{}/{}/{}", w.kind, w.calls, w.seconds, w.estimated);
  out += fmt::format("\nGPU {} s ({}), NCCL {} s ({}):", t.gpu_seconds.value_or(-1), t.gpu_timed_launches,
                     t.nccl_gpu_seconds.value_or(-1), t.nccl_timed_launches);
  for (const auto& k : t.top_kernels)
    out += fmt::format(" {}/{}/{}/{}", k.name, k.launches, k.timed, k.gpu_seconds);
  return out;
}

}  // namespace eacgm::history::test
