// What each job used, wasted and cost over a window of the history: the GPUs its
// processes held (NVML listed them on a GPU), how busy those GPUs were, the energy they
// drew, divided among the jobs sharing them, and the price of their hours. The store
// gives one row per process, GPU and interval (Store::held_gpus); the sums are here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "history/function_sums.h"
#include "history/history_query.h"

namespace eacgm::history {

// Which jobs a report is of: every job and pod seen in the window, or one job id, one
// pod ("pod" or "namespace/pod"), one namespace, or the job ids `values` (a page of jobs).
struct JobSelector {
  enum class By : std::uint8_t { kAll, kJob, kPod, kNamespace, kJobs };
  By by = By::kAll;
  std::string value;
  std::vector<std::string> values = {};
};

// What several of a job's processes on one GPU over one interval held together, as the
// report combines them (a row of the namespace rollup, history/namespace_rollup.h).
struct HeldTogether {
  std::uint64_t processes = 0;
  double sm_sum = 0;           // their SM shares added up
  std::uint64_t memory = 0;    // their memory together
  double held = 0;             // the part of the interval held: the most of any of them
  std::optional<double> idle;  // the part held idle (none where a row had no idle passes)
  double energy = 0;           // the part of the interval's energy drawn in the held passes
  // Their shares of that energy together (HeldGpuRow::power_share_w over the GPU's power);
  // none where a row had no share (written before schema version 13).
  std::optional<double> energy_share;
};

// One process of a job on one GPU over one interval, beside what the GPU measured then
// and what every process on it did together.
struct HeldGpuRow {
  std::string job;  // the job id, else "namespace/pod"
  std::string node;
  std::uint32_t gpu = 0;
  std::int64_t t_ns = 0;
  std::int64_t span_ns = 0;
  std::uint32_t pid = 0;
  std::int64_t start_ns = 0;
  std::optional<std::uint64_t> memory_max;  // the process's, on this GPU
  std::optional<double> sm_mean;            // the process's SM share (NVML, percent)
  std::uint64_t gpu_processes = 1;          // every process on the GPU then
  std::uint64_t gpu_processes_with_sm = 0;  // those with an SM share
  double gpu_sm_sum = 0;                    // their SM shares added up
  std::optional<double> util_mean;          // percent
  std::optional<double> sm_active_mean;     // GPM, ratio
  std::optional<double> tensor_active_mean;
  std::optional<std::uint64_t> memory_total;
  std::optional<double> power_mean_w;
  std::optional<double> energy_mj;
  std::optional<std::int64_t> energy_counter_ns;
  // The sampling passes of the interval that listed the process, those of them in which
  // the GPU was idle (none in rows written before it was counted), and the GPU's passes.
  std::uint64_t samples = 0;
  std::optional<std::uint64_t> idle_samples;
  std::uint64_t gpu_samples = 0;
  // The GPU's power summed over the process's passes (none in rows written before it was).
  std::optional<double> power_sum_w;
  // The process's share of that power, pass by pass (by SM share among the processes each
  // pass listed, else equal); none in rows written before it was (schema version 13).
  std::optional<double> power_share_w;
  // Set: the row stands for every process of the job on the GPU then, combined (its
  // per-process columns above unused).
  std::optional<HeldTogether> together;
};

// [report]: the price of a GPU-hour and when a held GPU counts as idle.
struct ReportOptions {
  double idle_threshold = 0.05;  // activity (0..1) below which a held GPU is idle
  double gpu_hour_price = 0;
  std::string currency;
  std::uint32_t top_kernels = 5;  // the kernels by GPU time each job lists
};

// A job's host waits of one kind (core/host_wait.h's names): the calls of the functions
// core/host_wait_kinds.h classifies as that kind, and the time they took.
struct JobWaitTime {
  std::string kind;
  std::uint64_t calls = 0;
  double seconds = 0;      // per process and function: calls times the mean of the timed ones
  bool estimated = false;  // some calls counted for part of the time and scaled, or untimed
};

// One kernel's time on the GPU (the hook's, kGpuTimeDomain rows), the job's processes'
// launches of it together.
struct JobKernelTime {
  std::string name;
  std::uint64_t launches = 0;
  std::uint64_t timed = 0;  // the launches the hook timed
  double gpu_seconds = 0;   // per process: launches times the mean of the timed ones
};

// Where a job's time went (docs/job-report.md#where-the-time-went).
struct JobTime {
  // Its processes' traced lives (processes.first_ns..last_ns) inside the window, added up:
  // the basis of the host waits' share.
  double wall_seconds = 0;
  std::uint32_t processes = 0;
  double host_wait_seconds = 0;
  std::vector<JobWaitTime> host_waits;  // by kind, the most time first
  // GPU time; none where the hook measured none of the job's kernels.
  std::optional<double> gpu_seconds;       // every kernel
  std::optional<double> nccl_gpu_seconds;  // kernels named "nccl..."
  std::uint64_t gpu_timed_launches = 0;    // the samples behind gpu_seconds
  std::uint64_t nccl_timed_launches = 0;
  std::vector<JobKernelTime> top_kernels;  // the most GPU time first, ReportOptions::top_kernels
};

struct JobReportRow {
  std::string job;
  std::vector<std::string> nodes;    // sorted
  std::uint32_t gpus = 0;            // distinct (node, GPU) held
  double gpu_hours = 0;              // held (the passes that listed a process of the job)
  double active_gpu_hours = 0;       // held, weighted by the interval's mean activity
  double idle_gpu_hours = 0;         // held in passes with activity under the threshold
  double unmeasured_gpu_hours = 0;   // held with neither GPM nor utilization
  std::int64_t longest_idle_ns = 0;  // one GPU's longest idle run (docs/job-report.md)
  // What activity is: "sm_active" (GPM), "utilization" (NVML's, /100), both joined by
  // "+" when its GPUs differ, "none".
  std::string activity_basis;
  std::optional<double> tensor_active_mean;            // held-time weighted, over GPUs with GPM
  std::uint64_t memory_peak_bytes = 0;                 // the job's processes on one GPU together
  std::optional<std::uint64_t> memory_capacity_bytes;  // that GPU's
  double energy_kwh = 0;
  // "counter" (NVML's energy counter), "power" (mean power times time), both, "none".
  std::string energy_basis;
  // How a shared GPU's energy was divided: "sole" (no other process on it), "sm" (the
  // processes' SM shares), "equal" (per process); several joined by "+".
  std::string share_basis;
  double cost = 0;
  double idle_cost = 0;
  std::int64_t first_ns = 0;  // held from (its first interval's held time taken at its end)
  std::int64_t last_ns = 0;   // held until (its last interval's held time taken at its start)
  JobTime time;
};

struct JobReport {
  HistoryQuery query;
  Tier tier = Tier::kRaw;
  JobSelector selector;
  ReportOptions options;
  std::vector<JobReportRow> rows;  // the most idle GPU-hours first
};

// One of the selected jobs' processes and its traced life (processes.first_ns..last_ns).
struct JobProcessLife {
  std::string job, node;
  std::uint32_t pid = 0;
  std::int64_t start_ns = 0, first_ns = 0, last_ns = 0;
};

// A row of `functions` of one of those processes: a call that waits (by its function's
// name, core/host_wait_kinds.h), or a kernel's GPU time (domain kGpuTimeDomain).
struct JobFunctionRow {
  std::string job, node;
  std::uint32_t pid = 0;
  std::int64_t start_ns = 0;
  std::string domain, function;
  FunctionSums sums;
};

// What where the time went is summed from (Store::job_time_rows).
struct JobTimeRows {
  std::vector<JobProcessLife> processes;
  std::vector<JobFunctionRow> functions;
};

// The rows of `held` summed per job (any order in).
std::vector<JobReportRow> job_report_rows(std::vector<HeldGpuRow> held, const ReportOptions& options);

// Fills each row's `time` from `in` (any order), over the window of `q`.
void add_job_times(std::vector<JobReportRow>& rows, const JobTimeRows& in, const HistoryQuery& q,
                   const ReportOptions& options);

// The function names that may be host waits (each base name of core/host_wait_kinds.h
// with the suffixes it ignores): what the store's query asks for.
std::vector<std::string> host_wait_function_names();

const char* selector_name(JobSelector::By by);

}  // namespace eacgm::history
