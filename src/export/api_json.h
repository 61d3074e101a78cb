// The JSON documents of `eacgm serve`'s /api/v1 routes (docs/api.md), built from one
// analysis snapshot, so every answer is consistent within itself.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "analysis/analysis_snapshot.h"
#include "analysis/call_summary.h"
#include "analysis/memory_ledger.h"
#include "analysis/op_kernels.h"
#include "analysis/rollup_series.h"
#include "export/gpu_json.h"
#include "sample/process_env.h"
#include "sample/workload.h"

namespace eacgm::exporting {

struct ApiOptions {
  std::size_t max_processes = 500;
  std::function<sample::RankInfo(std::uint32_t pid)> rank_of_pid;  // unset: no rank fields
  // The command line of a live process ("" once it is gone); unset: no cmdline field.
  std::function<std::string(std::uint32_t pid)> cmdline_of_pid;
  // Whether a process is still running (unset: no `exited` field; the memory ledger's
  // exited rows count as exited too).
  std::function<bool(std::uint32_t pid)> process_alive;
  // The container, pod and job of a process (export/workload_labels.h's fields); unset:
  // none of those fields.
  std::function<sample::Workload(std::uint32_t pid)> workload_of_pid;
};

// A process's workload fields (export/workload_labels.h) and rank, local_rank and
// world_size, each set where the options give them.
void add_workload_and_rank(json& entry, const ApiOptions& options, std::uint32_t pid);

// {"time_ns":..,"sequence":..,"gpus":[...]} from the latest sampling pass (empty list
// without NVML; "error" says why when the pass failed).
std::string api_gpus(const analysis::AnalysisSnapshot& snap);
// {"processes":[{"pid","comm","cmdline","rank",...,"calls","errors","gpus":[...]}],
//  "folded":N}: traced processes and the processes NVML saw on a GPU.
std::string api_processes(const analysis::AnalysisSnapshot& snap, const ApiOptions& options);
// {"functions":[{"domain","function","calls","errors","nested","entry_only","timed",
//  "bytes" (null without a bytes
//  argument),"total_ns","mean_ns","p50_ns","p90_ns","p99_ns","max_ns"}],"overflow_events":N}
std::string api_functions(const analysis::AnalysisSnapshot& snap);
// {"kernels":[{"name","launches","errors","shapes":[{"grid":[x,y,z],"block":[x,y,z],
//  "launches"}],"folded_shapes","unknown_shape"}],"folded":N}: most launches first, at
// most max_kernels; `folded`: launches of the kernels left out.
std::string api_kernels(const analysis::AnalysisSnapshot& snap, std::size_t max_kernels = 2000);
json kernels_json(const analysis::AnalysisSnapshot& snap, std::size_t max_kernels = 2000);
// {"collectives":[{"comm_id","function","rank","nranks","calls","errors","bytes",
//  "timed","p50_ns","p99_ns","max_ns","bandwidth_calls","algbw_bytes_per_s",
//  "busbw_bytes_per_s"}],"folded":N,"communicators":[{"comm_id","nranks","local_ranks",
//  "instances","incomplete","mismatched","late","pending","skew_p50_ns","skew_p99_ns",
//  "skew_max_ns","straggler","ranks":[{"rank","pid","instances","last",
//  "mean_lateness_ns","straggler"}]}],"untracked_calls":N}: NCCL calls per communicator
//  and function, and the ranks' arrival skew per communicator (docs/report.md).
std::string api_nccl(const analysis::AnalysisSnapshot& snap);
// The NCCL flight recorder's ranks that `filter` keeps (flight_recorder_json.h).
struct FlightFilter;
std::string api_flight_recorder(const analysis::AnalysisSnapshot& snap, const FlightFilter& filter);
// What the hooks timed on the GPU (gpu_time_table.h), at most `max_kernels` kernels.
std::string api_gpu_time(const analysis::AnalysisSnapshot& snap, std::size_t max_kernels = 2000);
json nccl_json(const analysis::AnalysisSnapshot& snap);
// {"ops":[{"op","launches","kernels":[{"kernel","launches"}]}],"attributed":N,
//  "unattributed":N,"untracked":N}: kernels launched inside each PyTorch op (per-call
//  records only; docs/report.md).
json ops_json(const analysis::OpKernelSummary& ops);
// {"counters":{"events":N,...}}: the agent's counters by accounting key.
std::string api_counters(const analysis::AnalysisSnapshot& snap);
// {"time_ns","sequence","processes":[...],"exited_dropped":N,"overflow_calls":N}: the
// memory ledger (docs/report.md has the process object).
std::string api_memory(const analysis::AnalysisSnapshot& snap);

// {"interval_s":1,"window_s":W,"points":[{"t","calls","errors","domains":{..},
//  "gpus":[{"gpu","util","memory_used_bytes"}]}]}: the seconds of the last `window_s`
// (analysis::series_window: ending at the snapshot's time) that have data, oldest first.
std::string api_series(const analysis::SeriesWindow& window);
// {"anomalies":[{"ts_ns","pid","tid","domain","name","dur_ns","bytes","median_ns","score",
//  "args","op","sampled","calls"}],"intervals":[...],"total","interval_total","level_shifts",
//  "functions","untracked_calls","hangs":[...],"hang_total"}, oldest first
//  (export/anomaly_report.h; the hangs: export/hang_json.h hang_anomalies_json).
std::string api_anomalies(const analysis::AnalysisSnapshot& snap);

// {"sample_hz","note","window_s","samples","over_cap":{"processes","rows","stacks"},
//  "processes":[...]}: the Python hot spots (docs/report.md has the process object); with
// `pid`, that process only.
std::string api_python(const analysis::AnalysisSnapshot& snap, std::optional<std::uint32_t> pid);

// The pieces, as objects without the time header: what the routes above hold under
// "functions", "gpus", "processes" and "counters", and the memory object.
json functions_json(const analysis::AnalysisSnapshot& snap);
// The function objects of one call summary (what "functions" holds), most time first.
json call_rows_json(const analysis::CallSummary& calls);
json gpus_json(const analysis::AnalysisSnapshot& snap);
json processes_json(const analysis::AnalysisSnapshot& snap, const ApiOptions& options);
json counters_json(const analysis::AnalysisSnapshot& snap);
// {"processes":[...],"exited_dropped":N,"overflow_calls":N}
json memory_json(const analysis::MemorySummary& memory);

// `eacgm run --json` (docs/report.md): {"functions","gpus","processes","memory",
// "gpu_work","nccl","ops","overhead","python_hot_spots","waits","in_flight","accounting"}
// in one document.
std::string run_report_json(const analysis::AnalysisSnapshot& snap, const ApiOptions& options);

}  // namespace eacgm::exporting
