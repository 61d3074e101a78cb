// Call and agent families for /metrics.
#include "export/call_metrics.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/anomaly_detector.h"
#include "analysis/call_summary.h"
#include "analysis/gpu_activity.h"
#include "analysis/hang_diagnosis.h"
#include "analysis/kernel_stats.h"
#include "analysis/memory_ledger.h"
#include "analysis/process_calls.h"
#include "core/probe_cost.h"
#include "export/gpu_time_metrics.h"
#include "export/host_wait_metrics.h"
#include "export/inflight_metrics.h"
#include "export/merged_series.h"
#include "export/metrics_table.h"
#include "export/nccl_metrics.h"
#include "export/top_n_fold.h"
#include "export/workload_labels.h"

namespace eacgm::exporting {
namespace {

constexpr std::array kBounds = {1e-6, 2.5e-6, 5e-6,   1e-5, 2.5e-5, 5e-5,   1e-4, 2.5e-4,
                                5e-4, 1e-3,   2.5e-3, 5e-3, 1e-2,   2.5e-2, 5e-2, 0.1,
                                0.25, 0.5,    1.0,    2.5,  5.0,    10.0,   25.0, 50.0};

using analysis::CallSummaryRow;
using analysis::MemoryLedgerRow;
using analysis::ProcessActivityRow;

// pid and comm (or, for a process in a named pod under pod_series, the pod's labels
// instead), then `extra` (the ledger's cuda_device), then the rank labels when known,
// then the workload's.
Labels traced_labels(const CallMetricsOptions& options, std::uint32_t pid, const std::string& comm,
                     const Label* extra = nullptr) {
  sample::Workload w;
  if (options.workload_of_pid) w = options.workload_of_pid(pid);
  const bool by_pod = options.pod_series && !w.pod.empty();
  Labels l;
  if (!by_pod) l = {{"pid", std::to_string(pid)}, {"comm", comm}};
  if (extra != nullptr) l.push_back(*extra);
  if (options.rank_of_pid) {
    sample::RankInfo r = options.rank_of_pid(pid);
    if (r.rank) l.push_back({"rank", std::to_string(*r.rank)});
    if (r.local_rank) l.push_back({"local_rank", std::to_string(*r.local_rank)});
    if (r.world_size) l.push_back({"world_size", std::to_string(*r.world_size)});
  }
  add_workload_labels(l, w);
  return l;
}

// A family with a sample for each row that has a value (`value` gives nullopt for none).
// `labels[i]` are rows[i]'s, made once for all the families of the rows; rows whose
// labels are equal (one container's processes) are summed.
template <typename Row, typename Value>
void write_family(ExpositionWriter& out, std::string_view name, const std::vector<Row>& rows,
                  const std::vector<Labels>& labels, Value value) {
  begin_family(out, name);
  MergedSeries merged;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (const std::optional<std::uint64_t> v = value(rows[i])) merged.add(labels[i], *v);
  }
  merged.write(out);
}

std::optional<std::uint64_t> nonzero(std::uint64_t v) { return v > 0 ? std::optional(v) : std::nullopt; }

// The functions with the most time keep their series (rows() order); the rest fold into
// domain="other", function="other", whose durations merge into `other_durations`.
// Returns how many folded.
std::uint64_t fold_functions(std::vector<CallSummaryRow>& rows, std::size_t cap,
                             analysis::LatencySketch& other_durations) {
  CallSummaryRow other;
  other.domain = other.function = "other";
  other.sketch = &other_durations;
  const std::uint64_t folded = fold_past_cap(rows, cap, [&](const CallSummaryRow& r) {
    other.calls += r.calls;
    other.errors += r.errors;
    other.nested += r.nested;
    other.estimated += r.estimated;
    if (r.has_bytes) {
      other.has_bytes = true;
      other.bytes += r.bytes;
    }
    if (r.sketch != nullptr) (void)other_durations.merge(*r.sketch);
  });
  if (folded > 0) rows.push_back(std::move(other));
  return folded;
}

}  // namespace

std::span<const double> call_duration_bounds() { return kBounds; }

std::vector<HistogramBucket> fold_sketch(const analysis::LatencySketch& sketch) {
  std::vector<HistogramBucket> out(kBounds.size());
  for (std::size_t i = 0; i < kBounds.size(); ++i) out[i].upper_bound = kBounds[i];
  out[0].count += sketch.zero_count();
  for (const auto& b : sketch.buckets()) {
    const double seconds = sketch.bucket_value(b.index) / 1e9;
    auto it = std::lower_bound(kBounds.begin(), kBounds.end(), seconds);
    // Above the last bound: only in +Inf, which the writer takes from the total count.
    if (it != kBounds.end()) out[static_cast<std::size_t>(it - kBounds.begin())].count += b.count;
  }
  return out;
}

void append_call_metrics(ExpositionWriter& out, const analysis::AnalysisSnapshot& snap,
                         const CallMetricsOptions& options) {
  auto functions = snap.get<analysis::CallSummary>().rows(false);
  analysis::LatencySketch other_durations;
  const std::uint64_t folded_functions =
      fold_functions(functions, options.max_function_series, other_durations);
  std::vector<Labels> function_labels;
  function_labels.reserve(functions.size());
  for (const auto& f : functions) function_labels.push_back({{"domain", f.domain}, {"function", f.function}});
  auto function_family = [&](std::string_view name, auto value) {
    write_family(out, name, functions, function_labels, value);
  };
  function_family("eacgm_calls_total", [](const CallSummaryRow& f) { return std::optional(f.calls); });
  function_family("eacgm_call_errors_total", [](const CallSummaryRow& f) { return std::optional(f.errors); });
  // Nested and estimated calls only where there are some; bytes for functions that move them.
  function_family("eacgm_nested_calls_total", [](const CallSummaryRow& f) { return nonzero(f.nested); });
  function_family("eacgm_calls_estimated_total",
                  [](const CallSummaryRow& f) { return nonzero(f.estimated); });
  function_family("eacgm_bytes_total", [](const CallSummaryRow& f) {
    return f.has_bytes ? std::optional(f.bytes) : std::nullopt;
  });

  begin_family(out, "eacgm_kernel_launches_total");
  {
    // Kernels past the cap, and those the kernel table had no room for, in kernel="other".
    const analysis::KernelStats& stats = snap.get<analysis::KernelStats>();
    auto kernels = stats.rows();
    std::uint64_t other_launches = stats.folded_launches();
    const std::uint64_t folded =
        fold_past_cap(kernels, options.max_function_series,
                      [&](const analysis::KernelRow& k) { other_launches += k.launches; });
    for (const auto& k : kernels) out.add({{"kernel", k.name}}, k.launches);
    if (folded > 0 || stats.folded_launches() > 0) out.add({{"kernel", "other"}}, other_launches);
  }

  begin_family(out, "eacgm_call_duration_seconds");
  std::size_t histograms = 0;
  for (std::size_t i = 0; i < functions.size(); ++i) {
    const analysis::LatencySketch* d = functions[i].sketch;
    if (d == nullptr || d->count() == 0) continue;
    if (histograms++ >= options.max_histogram_series) break;
    out.add_histogram(function_labels[i], fold_sketch(*d), static_cast<double>(d->sum()) / 1e9, d->count());
  }

  // Processes: one series per pid (GpuActivity has a row per GPU), most calls first.
  std::map<std::uint32_t, ProcessActivityRow> by_pid;
  for (const auto& p : snap.get<analysis::GpuActivity>().processes()) by_pid.emplace(p.pid, p);
  std::vector<ProcessActivityRow> procs;
  for (const auto& [pid, p] : by_pid) {
    if (p.calls > 0 || p.errors > 0) procs.push_back(p);
  }
  ProcessActivityRow other_process;
  const std::uint64_t folded_processes = fold_top_n(
      procs, options.max_process_series, [](const ProcessActivityRow& p) { return p.calls; },
      [&](const ProcessActivityRow& p) {
        other_process.calls += p.calls;
        other_process.errors += p.errors;
      });
  std::vector<Labels> process_labels;
  process_labels.reserve(procs.size() + 1);
  for (const auto& p : procs) process_labels.push_back(traced_labels(options, p.pid, p.name));
  if (folded_processes > 0) {
    procs.push_back(std::move(other_process));
    process_labels.push_back({{"pid", "other"}, {"comm", "other"}});
  }
  write_family(out, "eacgm_process_calls_total", procs, process_labels,
               [](const ProcessActivityRow& p) { return std::optional(p.calls); });
  write_family(out, "eacgm_process_call_errors_total", procs, process_labels,
               [](const ProcessActivityRow& p) { return std::optional(p.errors); });

  // The memory ledger: running processes only (an exited one holds nothing), the most
  // memory first; `cuda_device` is -1 where the device is unknown.
  std::vector<const MemoryLedgerRow*> ledger;
  for (const auto& r : snap.get<analysis::MemorySummary>().rows) {
    if (!r.exited) ledger.push_back(&r);
  }
  const std::uint64_t folded_memory = fold_top_n(
      ledger, options.max_process_series, [](const MemoryLedgerRow* r) { return r->live_bytes; }, leave_out);
  std::vector<Labels> ledger_labels;
  for (const auto* r : ledger) {
    const Label device{"cuda_device", std::to_string(r->device)};
    ledger_labels.push_back(traced_labels(options, r->pid, r->comm, &device));
  }
  write_family(out, "eacgm_process_gpu_allocated_bytes", ledger, ledger_labels,
               [](const MemoryLedgerRow* r) { return std::optional(r->live_bytes); });
  write_family(out, "eacgm_process_gpu_allocated_peak_bytes", ledger, ledger_labels,
               [](const MemoryLedgerRow* r) { return std::optional(r->peak_bytes); });
  // Leaks are counted at each exit, of every process the ledger saw (no per-process
  // series: the process is gone); /api/v1/memory names them.
  begin_family(out, "eacgm_memory_leaks_total");
  const analysis::MemorySummary& memory = snap.get<analysis::MemorySummary>();
  out.add({}, memory.leaks_total);
  begin_family(out, "eacgm_memory_leaked_bytes_total");
  out.add({}, memory.leaked_bytes_total);

  if (const auto* anomalies = snap.find<analysis::AnomalySummary>()) {
    begin_family(out, "eacgm_anomalies_total");
    out.add({{"kind", "call"}}, anomalies->total);
    out.add({{"kind", "interval"}}, anomalies->interval_total);
    out.add({{"kind", "hang"}}, snap.get<analysis::HangSummary>().total);
  }

  // The probes' cost (always-on, calibrated at start): one hit here, and per running
  // traced process the estimated slowdown over the last few seconds.
  const OverheadReport& overhead = snap.get<OverheadReport>();
  if (overhead.costs.measured) {
    const TrapCosts& c = overhead.costs;
    begin_family(out, "eacgm_probe_hit_cost_seconds");
    out.add({{"kind", "entry"}}, c.entry_ns / 1e9);
    out.add({{"kind", "entry_return"}}, c.entry_return_ns / 1e9);
    out.add({{"kind", "stepped_entry"}}, c.stepped_entry_ns / 1e9);
    out.add({{"kind", "per_call"}}, c.per_call_ns / 1e9);
    begin_family(out, "eacgm_probe_duty_cycle_ratio");
    out.add({}, overhead.duty_fraction);
    begin_family(out, "eacgm_process_probe_overhead_ratio");
    std::size_t shown = 0;
    MergedSeries worst(MergedSeries::Merge::kMax);  // a container's: its worst process's
    for (const ProcessOverhead& row : overhead.processes) {
      if (row.exited || shown++ >= options.max_process_series) continue;
      const auto it = by_pid.find(row.pid);
      worst.add(traced_labels(options, row.pid, it != by_pid.end() ? it->second.name : std::string()),
                row.ratio);
    }
    worst.write(out);
  }

  begin_family(out, "eacgm_series_folded_total");
  out.add({{"kind", "functions"}}, folded_functions);
  out.add({{"kind", "processes"}}, folded_processes);
  out.add({{"kind", "memory"}}, folded_memory);
  out.add({{"kind", "nccl"}}, nccl_series_left_out(snap, options.max_function_series));
  out.add({{"kind", "waits"}}, host_wait_processes_folded(snap, options.max_process_series));

  // Calls of processes a per-process table had no room for (counted in the totals only).
  begin_family(out, "eacgm_process_table_overflow_calls_total");
  out.add({{"table", "activity"}}, snap.get<analysis::GpuActivity>().overflow_calls());
  out.add({{"table", "memory"}}, snap.get<analysis::MemorySummary>().overflow_calls);
  if (const auto* by_process = snap.find<analysis::ProcessCallsView>()) {
    out.add({{"table", "history"}}, by_process->overflow_events);
  }

  append_gpu_time_metrics(out, snap, options.max_function_series);
  append_nccl_metrics(out, snap, options.max_function_series);
  append_host_wait_metrics(out, snap, options);
  append_inflight_metrics(out, snap, options);
}

}  // namespace eacgm::exporting
