// One flush of the history: what a node's agent saw in one interval, as rows. Counts are
// the interval's (differences of the agent's cumulative totals); processes carry their
// facts as last seen. Every row of a store also carries its node and the interval.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "history/sketch_codec.h"

namespace eacgm::history {

// A process is (node, pid, start_ns): a pid reused after a restart is a new process.
struct ProcessKey {
  std::uint32_t pid = 0;
  std::int64_t start_ns = 0;  // Unix ns of its start (/proc), 0 when it was never read
  auto operator<=>(const ProcessKey&) const = default;
};

struct ProcessRecord {
  ProcessKey key;
  std::string comm;
  std::string cmdline;
  std::optional<long> rank, local_rank, world_size;
  // Its workload (sample/workload.h); "" where unknown.
  std::string container;       // the runtime's container id
  std::string pod_uid;         // the Kubernetes pod's UID
  std::string pod;             // the pod's name
  std::string namespace_;      // the pod's namespace
  std::string container_name;  // the container's name within the pod
  std::string job;             // the batch job (Slurm job id, torchelastic run id)
  std::string job_step;        // the Slurm job step
  std::int64_t first_ns = 0;   // the first interval that saw it
  std::int64_t last_ns = 0;    // the end of the last one
  bool exited = false;
};

// The domain of the rows of GPU time (the hook's, analysis/gpu_times.h): per (process,
// kernel name), `calls` are the exact launches, `timed` the launches timed and `latency`
// their GPU durations (graphs under "graph", unnamed kernels under "unnamed"). Their
// launches are not counted among a process's calls.
inline constexpr char kGpuTimeDomain[] = "gpu_time";

struct FunctionRecord {
  ProcessKey process;
  std::string domain;
  std::string function;
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;
  std::uint64_t bytes = 0;
  std::uint64_t timed = 0;
  // Of `calls`, scaled from part of the time (always-on's duty cycle): an estimate,
  // within about `calls_error` (one standard deviation; variances add across rows).
  std::uint64_t estimated = 0;
  double calls_variance = 0;
  StoredSketch latency;
};

struct KernelRecord {
  std::string kernel;  // per node: launches are not split by process yet
  std::uint64_t launches = 0;
};

struct GpuRecord {
  std::uint32_t index = 0;
  std::string uuid;
  std::string name;
  std::uint64_t samples = 0;
  std::optional<double> util_mean;
  std::optional<std::uint32_t> util_max;
  std::optional<double> memory_used_mean;
  std::optional<std::uint64_t> memory_used_max;
  std::optional<std::uint64_t> memory_total;
  std::optional<double> power_mean_w;
  std::optional<double> power_max_w;
  std::optional<std::uint32_t> temperature_max;
  // NVML GPM's activities (ratios 0..1) over the passes that had them; absent without GPM.
  std::optional<double> sm_active_mean, sm_active_max;
  std::optional<double> tensor_active_mean, tensor_active_max;
  std::optional<double> dram_active_mean, dram_active_max;
  // Energy over the interval (mJ), and how much of the span NVML's energy counter
  // measured; absent without the counter and power.
  std::optional<double> energy_mj;
  std::optional<std::int64_t> energy_counter_ns;
};

struct GpuProcessRecord {
  std::uint32_t gpu = 0;
  ProcessKey process;
  std::uint64_t samples = 0;
  std::optional<std::uint64_t> memory_max;
  std::optional<double> sm_mean;
  std::optional<std::uint64_t> idle_samples;  // of `samples`, those with the GPU idle
  std::optional<double> power_sum_w;          // the GPU's power summed over `samples`
  // The process's share of that power, pass by pass: each pass's power split among the
  // processes it listed on the GPU by SM share, or equally where one of them had none.
  std::optional<double> power_share_w;
};

struct AnomalyRecord {
  std::int64_t t_ns = 0;
  std::int64_t end_ns = 0;  // slow intervals: their end; single calls: t_ns + duration
  ProcessKey process;       // pid 0 for slow intervals (every process's calls of the key)
  std::string kind;         // "call" or "interval"
  std::string domain;
  std::string function;
  double score = 0;
  // As the store keeps it: a call's duration in ns, a slow interval's ratio to the median,
  // a hang's length in ns. dur_ns() and ratio() give each kind in one unit.
  double value = 0;
  double median_ns = 0;  // the model's median; 0 for a hang (no baseline)

  // In ns whatever the kind, comparable with median_ns: a call's duration, a slow
  // interval's calls' geometric mean duration (its ratio times the median), a hang's length.
  double dur_ns() const { return kind == "interval" ? value * median_ns : value; }
  // dur_ns() over median_ns; none without a median (a hang).
  std::optional<double> ratio() const {
    if (!(median_ns > 0)) return std::nullopt;
    return kind == "interval" ? value : value / median_ns;
  }
};

struct LeakRecord {
  ProcessKey process;
  std::int32_t device = -1;
  std::uint64_t allocations = 0;
  std::uint64_t bytes = 0;
};

struct IntervalBatch {
  std::int64_t t_ns = 0;     // the interval's start
  std::int64_t span_ns = 0;  // its length
  std::vector<ProcessRecord> processes;
  std::vector<FunctionRecord> functions;
  std::vector<KernelRecord> kernels;
  std::vector<GpuRecord> gpus;
  std::vector<GpuProcessRecord> gpu_processes;
  std::vector<AnomalyRecord> anomalies;
  std::vector<LeakRecord> leaks;
  // Of the rows above, the estimate marks of the interval: the agent's mode.
  std::string mode;
  bool empty() const {
    return processes.empty() && functions.empty() && kernels.empty() && gpus.empty() && anomalies.empty() &&
           leaks.empty();
  }
};

}  // namespace eacgm::history
