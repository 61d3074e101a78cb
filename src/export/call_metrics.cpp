// Call and agent families for /metrics.
#include "export/call_metrics.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "export/host_wait_metrics.h"
#include "export/metrics_table.h"
#include "export/nccl_metrics.h"
#include "export/top_n_fold.h"

namespace eacgm::exporting {
namespace {

constexpr std::array kBounds = {1e-6, 2.5e-6, 5e-6,   1e-5, 2.5e-5, 5e-5,   1e-4, 2.5e-4,
                                5e-4, 1e-3,   2.5e-3, 5e-3, 1e-2,   2.5e-2, 5e-2, 0.1,
                                0.25, 0.5,    1.0,    2.5,  5.0,    10.0,   25.0, 50.0};

using analysis::CallSummaryRow;

Labels function_labels(const CallSummaryRow& r) { return {{"domain", r.domain}, {"function", r.function}}; }

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
  auto series = snap.calls.rows(false);
  analysis::LatencySketch other_durations;
  const std::uint64_t folded_functions = fold_functions(series, options.max_function_series, other_durations);

  begin_family(out, "eacgm_calls_total");
  for (const auto& s : series) out.add(function_labels(s), s.calls);
  begin_family(out, "eacgm_call_errors_total");
  for (const auto& s : series) out.add(function_labels(s), s.errors);
  begin_family(out, "eacgm_nested_calls_total");
  for (const auto& s : series) {
    if (s.nested > 0) out.add(function_labels(s), s.nested);
  }
  begin_family(out, "eacgm_calls_estimated_total");
  for (const auto& s : series) {
    if (s.estimated > 0) out.add(function_labels(s), s.estimated);
  }
  begin_family(out, "eacgm_bytes_total");
  for (const auto& s : series) {
    if (s.has_bytes) out.add(function_labels(s), s.bytes);
  }
  begin_family(out, "eacgm_kernel_launches_total");
  {
    // Kernels past the cap, and those the kernel table had no room for, in kernel="other".
    auto kernels = snap.kernels.rows();
    std::uint64_t other_launches = snap.kernels.folded_launches();
    const std::uint64_t folded =
        fold_past_cap(kernels, options.max_function_series,
                      [&](const analysis::KernelRow& k) { other_launches += k.launches; });
    for (const auto& k : kernels) out.add({{"kernel", k.name}}, k.launches);
    if (folded > 0 || snap.kernels.folded_launches() > 0) out.add({{"kernel", "other"}}, other_launches);
  }
  begin_family(out, "eacgm_call_duration_seconds");
  std::size_t histograms = 0;
  for (const auto& s : series) {
    if (s.sketch == nullptr || s.sketch->count() == 0) continue;
    if (histograms++ >= options.max_histogram_series) break;
    auto buckets = fold_sketch(*s.sketch);
    out.add_histogram(function_labels(s), buckets, static_cast<double>(s.sketch->sum()) / 1e9,
                      s.sketch->count());
  }

  // Processes: one series per pid (GpuActivity has a row per GPU), most calls first.
  std::map<std::uint32_t, analysis::ProcessActivityRow> by_pid;
  for (const auto& p : snap.gpu.processes()) by_pid.emplace(p.pid, p);
  std::vector<analysis::ProcessActivityRow> procs;
  for (auto& [pid, p] : by_pid) {
    if (p.calls > 0 || p.errors > 0) procs.push_back(p);
  }
  std::uint64_t other_calls = 0, other_errors = 0;
  const std::uint64_t folded_processes = fold_top_n(
      procs, options.max_process_series, [](const analysis::ProcessActivityRow& p) { return p.calls; },
      [&](const analysis::ProcessActivityRow& p) {
        other_calls += p.calls;
        other_errors += p.errors;
      });
  auto process_labels = [&](const analysis::ProcessActivityRow& p) {
    Labels l{{"pid", std::to_string(p.pid)}, {"comm", p.name}};
    if (options.rank_of_pid) {
      RankInfo r = options.rank_of_pid(p.pid);
      if (r.rank) l.push_back({"rank", std::to_string(*r.rank)});
      if (r.local_rank) l.push_back({"local_rank", std::to_string(*r.local_rank)});
      if (r.world_size) l.push_back({"world_size", std::to_string(*r.world_size)});
    }
    return l;
  };
  const Labels other_labels{{"pid", "other"}, {"comm", "other"}};
  begin_family(out, "eacgm_process_calls_total");
  for (const auto& p : procs) out.add(process_labels(p), p.calls);
  if (folded_processes > 0) out.add(other_labels, other_calls);
  begin_family(out, "eacgm_process_call_errors_total");
  for (const auto& p : procs) out.add(process_labels(p), p.errors);
  if (folded_processes > 0) out.add(other_labels, other_errors);

  // The memory ledger: running processes only (an exited one holds nothing), the most
  // memory first; `cuda_device` is -1 where the device is unknown.
  std::vector<const analysis::MemoryLedgerRow*> ledger;
  for (const auto& r : snap.memory.rows) {
    if (!r.exited) ledger.push_back(&r);
  }
  const std::uint64_t folded_memory = fold_top_n(
      ledger, options.max_process_series, [](const analysis::MemoryLedgerRow* r) { return r->live_bytes; },
      leave_out);
  auto ledger_labels = [&](const analysis::MemoryLedgerRow& r) {
    analysis::ProcessActivityRow p;
    p.pid = r.pid;
    p.name = r.comm;
    Labels l = process_labels(p);
    l.insert(l.begin() + 2, {"cuda_device", std::to_string(r.device)});
    return l;
  };
  begin_family(out, "eacgm_process_gpu_allocated_bytes");
  for (const auto* r : ledger) out.add(ledger_labels(*r), r->live_bytes);
  begin_family(out, "eacgm_process_gpu_allocated_peak_bytes");
  for (const auto* r : ledger) out.add(ledger_labels(*r), r->peak_bytes);

  // The probes' cost (always-on, calibrated at start): one hit here, and per running
  // traced process the estimated slowdown over the last few seconds.
  if (snap.overhead.costs.measured) {
    const TrapCosts& c = snap.overhead.costs;
    begin_family(out, "eacgm_probe_hit_cost_seconds");
    out.add({{"kind", "entry"}}, c.entry_ns / 1e9);
    out.add({{"kind", "entry_return"}}, c.entry_return_ns / 1e9);
    out.add({{"kind", "stepped_entry"}}, c.stepped_entry_ns / 1e9);
    out.add({{"kind", "per_call"}}, c.per_call_ns / 1e9);
    begin_family(out, "eacgm_probe_duty_cycle_ratio");
    out.add({}, snap.overhead.duty_fraction);
    begin_family(out, "eacgm_process_probe_overhead_ratio");
    std::size_t shown = 0;
    for (const ProcessOverhead& row : snap.overhead.processes) {
      if (row.exited || shown++ >= options.max_process_series) continue;
      analysis::ProcessActivityRow p;
      p.pid = row.pid;
      if (auto it = by_pid.find(row.pid); it != by_pid.end()) p.name = it->second.name;
      out.add(process_labels(p), row.ratio);
    }
  }

  begin_family(out, "eacgm_series_folded_total");
  out.add({{"kind", "functions"}}, folded_functions);
  out.add({{"kind", "processes"}}, folded_processes);
  out.add({{"kind", "memory"}}, folded_memory);
  out.add({{"kind", "nccl"}}, nccl_series_left_out(snap, options.max_function_series));
  out.add({{"kind", "waits"}}, host_wait_processes_folded(snap, options.max_process_series));

  append_nccl_metrics(out, snap, options.max_function_series);
  append_host_wait_metrics(out, snap, options);
}

void append_agent_metrics(ExpositionWriter& out, double start_time_seconds) {
  // /proc/self/stat fields 14 and 15 (utime, stime) in clock ticks; statm field 2 in pages.
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close != std::string::npos) {
    std::istringstream rest(text.substr(close + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14) utime = std::stoull(field);
      if (i == 15) stime = std::stoull(field);
    }
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    begin_family(out, "eacgm_agent_cpu_seconds_total");
    out.add({}, static_cast<double>(utime + stime) / ticks);
  }
  std::ifstream statm("/proc/self/statm");
  unsigned long long size = 0, resident = 0;
  if (statm >> size >> resident) {
    begin_family(out, "eacgm_agent_resident_memory_bytes");
    out.add({},
            static_cast<std::uint64_t>(resident * static_cast<unsigned long long>(sysconf(_SC_PAGESIZE))));
  }
  begin_family(out, "eacgm_agent_start_time_seconds");
  out.add({}, start_time_seconds);
}

}  // namespace eacgm::exporting
