// JSON documents for the API routes.
#include "export/api_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "analysis/anomaly_detector.h"
#include "analysis/call_summary.h"
#include "analysis/gpu_activity.h"
#include "analysis/gpu_times.h"
#include "analysis/gpu_work.h"
#include "analysis/hang_diagnosis.h"
#include "analysis/host_waits.h"
#include "analysis/inflight_calls.h"
#include "analysis/kernel_stats.h"
#include "analysis/memory_ledger.h"
#include "analysis/nccl_skew.h"
#include "analysis/nccl_stats.h"
#include "analysis/op_kernels.h"
#include "analysis/python_profile.h"
#include "core/gpu_sample.h"
#include "core/probe_cost.h"
#include "export/anomaly_report.h"
#include "export/flight_recorder_json.h"
#include "export/gpu_json.h"
#include "export/gpu_time_table.h"
#include "export/hang_json.h"
#include "export/host_waits_json.h"
#include "export/inflight_json.h"
#include "export/job_stragglers_json.h"
#include "export/json_text.h"
#include "export/overhead_report.h"
#include "export/python_hot_spots_table.h"
#include "export/top_n_fold.h"
#include "export/workload_labels.h"

namespace eacgm::exporting {
namespace {

json header(std::chrono::system_clock::time_point time, std::uint64_t sequence) {
  return json{
      {"time_ns", std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count()},
      {"sequence", sequence}};
}

json header(const analysis::AnalysisSnapshot& snap) { return header(snap.time, snap.sequence); }

// The snapshot's header, then the keys of `body`, as text.
std::string with_header(const analysis::AnalysisSnapshot& snap, json body) {
  json doc = header(snap);
  for (auto& [key, value] : body.items()) doc[key] = std::move(value);
  return json_text(doc);
}

}  // namespace

json gpus_json(const analysis::AnalysisSnapshot& snap) {
  json gpus = json::array();
  if (const GpuSnapshot* pass = snap.find<GpuSnapshot>()) {
    for (const auto& d : pass->devices) gpus.push_back(device_json(d));
  }
  return gpus;
}

std::string api_gpus(const analysis::AnalysisSnapshot& snap) {
  json doc = header(snap);
  const GpuSnapshot* pass = snap.find<GpuSnapshot>();
  if (pass != nullptr && !pass->errors.empty()) doc["errors"] = pass->errors;
  doc["gpus"] = gpus_json(snap);
  return json_text(doc);
}

void add_workload_and_rank(json& entry, const ApiOptions& options, std::uint32_t pid) {
  if (options.workload_of_pid) add_workload_fields(entry, options.workload_of_pid(pid));
  if (options.rank_of_pid) {
    const sample::RankInfo r = options.rank_of_pid(pid);
    entry["rank"] = opt(r.rank);
    entry["local_rank"] = opt(r.local_rank);
    entry["world_size"] = opt(r.world_size);
  }
}

json processes_json(const analysis::AnalysisSnapshot& snap, const ApiOptions& options) {
  // GpuActivity has one row per (process, GPU); group them by pid.
  std::map<std::uint32_t, json> by_pid;
  for (const auto& p : snap.get<analysis::GpuActivity>().processes()) {
    json& entry = by_pid[p.pid];
    if (entry.is_null()) {
      entry = json{{"pid", p.pid},
                   {"comm", p.name},
                   {"calls", p.calls},
                   {"errors", p.errors},
                   {"gpus", json::array()},
                   {"first_seen_ns", p.first_seen_ns ? json(p.first_seen_ns) : json(nullptr)},
                   {"last_seen_ns", p.last_seen_ns ? json(p.last_seen_ns) : json(nullptr)}};
    }
    if (p.gpu) {
      entry["gpus"].push_back(json{{"gpu", *p.gpu},
                                   {"samples", p.samples},
                                   {"memory_max_bytes", opt(p.memory_max_bytes)},
                                   {"sm_mean_percent", opt(p.sm_mean_percent)},
                                   {"sm_max_percent", opt(p.sm_max_percent)}});
    }
  }
  std::vector<json> list;
  list.reserve(by_pid.size());
  for (auto& [pid, entry] : by_pid) list.push_back(std::move(entry));
  const std::uint64_t folded = fold_top_n(
      list, options.max_processes, [](const json& p) { return p["calls"].get<std::uint64_t>(); }, leave_out);
  std::vector<std::uint32_t> ledger_exited;
  for (const auto& r : snap.get<analysis::MemorySummary>().rows) {
    if (r.exited) ledger_exited.push_back(r.pid);
  }
  std::sort(ledger_exited.begin(), ledger_exited.end());
  for (auto& entry : list) {
    const auto pid = entry["pid"].get<std::uint32_t>();
    if (options.cmdline_of_pid) entry["cmdline"] = options.cmdline_of_pid(pid);
    if (options.process_alive) {
      entry["exited"] =
          std::binary_search(ledger_exited.begin(), ledger_exited.end(), pid) || !options.process_alive(pid);
    }
    add_workload_and_rank(entry, options, pid);
  }
  return json{{"processes", std::move(list)}, {"folded", folded}};
}

std::string api_processes(const analysis::AnalysisSnapshot& snap, const ApiOptions& options) {
  json doc = header(snap);
  json body = processes_json(snap, options);
  doc["processes"] = std::move(body["processes"]);
  doc["folded"] = std::move(body["folded"]);
  return json_text(doc);
}

json functions_json(const analysis::AnalysisSnapshot& snap) {
  return call_rows_json(snap.get<analysis::CallSummary>());
}

json call_rows_json(const analysis::CallSummary& calls) {
  json list = json::array();
  for (const auto& r : calls.rows()) {
    const analysis::LatencySketch* sketch = r.sketch;
    const bool timed = r.timed > 0;
    list.push_back(
        json{{"domain", r.domain},
             {"function", r.function},
             {"calls", r.calls},
             {"errors", r.errors},
             {"nested", r.nested},
             {"entry_only", r.entry_only},
             {"timed", r.timed},
             {"counted", r.counted},
             {"sampled", r.sampled()},
             {"error_share",
              timed ? json(static_cast<double>(r.errors) / static_cast<double>(r.timed)) : json(nullptr)},
             {"estimated", r.estimated > 0},
             {"calls_error", r.estimated > 0 ? json(std::llround(r.calls_error)) : json(nullptr)},
             {"bytes", r.has_bytes ? json(r.bytes) : json(nullptr)},
             {"total_ns", r.total_ns},
             {"mean_ns", timed ? json(r.mean_ns) : json(nullptr)},
             {"p50_ns", timed ? json(r.p50_ns) : json(nullptr)},
             {"p90_ns", timed && sketch != nullptr ? json(sketch->quantile(0.9)) : json(nullptr)},
             {"p99_ns", timed ? json(r.p99_ns) : json(nullptr)},
             {"max_ns", timed ? json(r.max_ns) : json(nullptr)}});
  }
  return list;
}

std::string api_functions(const analysis::AnalysisSnapshot& snap) {
  json doc = header(snap);
  doc["functions"] = functions_json(snap);
  doc["overflow_events"] = snap.get<analysis::CallSummary>().overflow_events();
  return json_text(doc);
}

json kernels_json(const analysis::AnalysisSnapshot& snap, std::size_t max_kernels) {
  const analysis::KernelStats& stats = snap.get<analysis::KernelStats>();
  auto rows = stats.rows();
  std::uint64_t folded = stats.folded_launches();
  fold_past_cap(rows, max_kernels, [&](const analysis::KernelRow& k) { folded += k.launches; });
  json list = json::array();
  for (const auto& k : rows) {
    json shapes = json::array();
    for (const auto& s : k.shapes) {
      shapes.push_back(json{{"grid", s.grid}, {"block", s.block}, {"launches", s.launches}});
    }
    list.push_back(json{{"name", k.name},
                        {"launches", k.launches},
                        {"errors", k.errors},
                        {"shapes", std::move(shapes)},
                        {"folded_shapes", k.folded_shapes},
                        {"unknown_shape", k.unknown_shape}});
  }
  return json{{"kernels", std::move(list)}, {"folded", folded}};
}

json gpu_work_json(const analysis::GpuWorkStats& work) {
  json rows = json::array();
  for (const auto& r : work.rows()) {
    json row{{"pid", r.pid},
             {"comm", r.comm},
             {"stream", fmt::format("{:#x}", r.stream)},
             {"kind", analysis::gpu_work_kind_name(r.kind)},
             {"count", r.count},
             {"graph", r.graph},
             {"errors", r.errors}};
    if (r.kind == GpuWork::kKernel) row["name"] = r.name;
    if (r.kind == GpuWork::kCopy) row["direction"] = r.direction;
    if (r.kind != GpuWork::kKernel) row["bytes"] = r.bytes;
    rows.push_back(std::move(row));
  }
  return json{{"kernels", work.total(GpuWork::kKernel)},
              {"memsets", work.total(GpuWork::kMemset)},
              {"copies", work.total(GpuWork::kCopy)},
              {"rows", std::move(rows)},
              {"folded", work.folded()},
              {"exited_dropped", work.exited_dropped()},
              {"graph_launches_unknown", work.unknown_graph_launches()}};
}

std::string api_kernels(const analysis::AnalysisSnapshot& snap, std::size_t max_kernels) {
  return with_header(snap, kernels_json(snap, max_kernels));
}

namespace {

json nccl_gpu_json(const std::optional<analysis::NcclGpuTime>& gpu) {
  if (!gpu) return nullptr;
  json sizes = json::array();
  for (const auto& s : gpu->sizes) {
    sizes.push_back(json{{"min_bytes", s.min_bytes},
                         {"max_bytes", s.max_bytes},
                         {"calls", s.calls},
                         {"p50_ns", s.p50_ns},
                         {"algbw_bytes_per_s", opt(s.algbw)},
                         {"busbw_bytes_per_s", opt(s.busbw)}});
  }
  return json{{"calls", gpu->calls},
              {"kernels", gpu->kernels},
              {"idle_starts", gpu->idle_starts},
              {"gpu_ns", gpu->gpu_ns},
              {"p50_ns", gpu->p50_ns},
              {"p99_ns", gpu->p99_ns},
              {"max_ns", gpu->max_ns},
              {"algbw_bytes_per_s", opt(gpu->algbw)},
              {"busbw_bytes_per_s", opt(gpu->busbw)},
              {"sizes", std::move(sizes)}};
}

}  // namespace

json nccl_json(const analysis::AnalysisSnapshot& snap) {
  const analysis::NcclStats& nccl = snap.get<analysis::NcclStats>();
  const analysis::NcclSkewSummary& skew = snap.get<analysis::NcclSkewSummary>();
  json list = json::array();
  for (const auto& r : nccl.rows()) {
    const bool timed = r.timed > 0;
    list.push_back(json{{"comm_id", fmt::format("0x{:016x}", r.comm_id)},
                        {"function", r.function},
                        {"rank", r.rank >= 0 ? json(r.rank) : json(nullptr)},
                        {"nranks", r.nranks >= 0 ? json(r.nranks) : json(nullptr)},
                        {"calls", r.calls},
                        {"errors", r.errors},
                        {"bytes", r.bytes},
                        {"timed", r.timed},
                        {"p50_ns", timed ? json(r.p50_ns) : json(nullptr)},
                        {"p99_ns", timed ? json(r.p99_ns) : json(nullptr)},
                        {"max_ns", timed ? json(r.max_ns) : json(nullptr)},
                        {"bandwidth_calls", r.bandwidth_calls},
                        {"algbw_bytes_per_s", opt(r.algbw)},
                        {"busbw_bytes_per_s", opt(r.busbw)},
                        {"gpu", nccl_gpu_json(r.gpu)}});
  }
  json comms = json::array();
  for (const auto& c : skew.comms) {
    const bool any = c.instances > 0;
    json ranks = json::array();
    for (const auto& r : c.ranks) {
      ranks.push_back(json{{"rank", r.rank},
                           {"pid", r.pid},
                           {"instances", r.instances},
                           {"last", r.last},
                           {"mean_lateness_ns", r.instances > 0 ? json(r.mean_lateness_ns) : json(nullptr)},
                           {"straggler", r.straggler}});
    }
    comms.push_back(json{{"comm_id", fmt::format("0x{:016x}", c.comm_id)},
                         {"nranks", c.nranks > 0 ? json(c.nranks) : json(nullptr)},
                         {"local_ranks", c.local_ranks},
                         {"instances", c.instances},
                         {"incomplete", c.incomplete},
                         {"mismatched", c.mismatched},
                         {"late", c.late},
                         {"pending", c.pending},
                         {"skew_p50_ns", any ? json(c.skew.quantile(0.5)) : json(nullptr)},
                         {"skew_p99_ns", any ? json(c.skew.quantile(0.99)) : json(nullptr)},
                         {"skew_max_ns", any ? json(c.skew.max()) : json(nullptr)},
                         {"straggler", c.straggler >= 0 ? json(c.straggler) : json(nullptr)},
                         {"ranks", std::move(ranks)}});
  }
  return json{
      {"collectives", std::move(list)},
      {"folded", nccl.folded_calls()},
      {"gpu_unjoined", nccl.gpu_unjoined()},
      {"communicators", std::move(comms)},
      {"untracked_calls", skew.untracked_calls},
      {"job_stragglers", job_stragglers_json(snap.get<analysis::JobStragglersSummary>().communicators)}};
}

json ops_json(const analysis::OpKernelSummary& ops) {
  json list = json::array();
  for (const auto& op : ops.ops) {
    json kernels = json::array();
    for (const auto& k : op.kernels) kernels.push_back(json{{"kernel", k.kernel}, {"launches", k.launches}});
    list.push_back(json{{"op", op.op}, {"launches", op.launches}, {"kernels", std::move(kernels)}});
  }
  return json{{"ops", std::move(list)},
              {"attributed", ops.attributed},
              {"unattributed", ops.unattributed},
              {"untracked", ops.untracked}};
}

std::string api_nccl(const analysis::AnalysisSnapshot& snap) { return with_header(snap, nccl_json(snap)); }

std::string api_flight_recorder(const analysis::AnalysisSnapshot& snap, const FlightFilter& filter) {
  return with_header(snap, flight_recorder_json(snap.get<analysis::FlightRecord>(), filter));
}

std::string api_gpu_time(const analysis::AnalysisSnapshot& snap, std::size_t max_kernels) {
  return with_header(snap, gpu_time_json(snap.get<analysis::GpuTimeSummary>(), max_kernels));
}

json counters_json(const analysis::AnalysisSnapshot& snap) {
  json counters = json::object();
  for (const auto& v : snap.counters.values) counters[v.def->key] = v.value;
  return counters;
}

std::string api_counters(const analysis::AnalysisSnapshot& snap) {
  json doc = header(snap);
  doc["counters"] = counters_json(snap);
  return json_text(doc);
}

json python_function_json(const analysis::PythonFunctionRow& f, std::uint64_t base) {
  auto share = [base](std::uint64_t n) {
    return base == 0 ? 0.0 : static_cast<double>(n) / static_cast<double>(base);
  };
  return json{{"function", f.function},
              {"file", f.file},
              {"line", f.line},
              {"self", f.self},
              {"total", f.total},
              {"self_share", share(f.self)},
              {"total_share", share(f.total)},
              {"native", f.native}};
}

// Sample counts and shares of each process's samples in Python code; states the rate
// and how far back the profile reaches. With `pid`, that process only.
json python_json(const analysis::PythonHotSpots* hot, std::optional<std::uint32_t> pid) {
  json doc = json::object();
  doc["sample_hz"] = hot ? hot->hz : 0;
  doc["note"] = python_sampling_note(hot ? hot->hz : 0);
  doc["window_s"] = hot && hot->window_ns > 0 ? json(hot->window_ns / 1000000000) : json(nullptr);
  doc["samples"] = hot ? hot->samples : 0;
  const analysis::PythonOverCap over = hot ? hot->over_cap : analysis::PythonOverCap{};
  doc["over_cap"] = json{{"processes", over.processes}, {"rows", over.rows}, {"stacks", over.stacks}};
  json processes = json::array();
  if (hot) {
    for (const auto& p : hot->processes) {
      if (pid && p.pid != *pid) continue;
      json functions = json::array(), lines = json::array(), threads = json::array();
      for (const auto& f : p.functions) functions.push_back(python_function_json(f, p.python_samples));
      for (const auto& l : p.lines) {
        lines.push_back(json{{"function", l.function},
                             {"file", l.file},
                             {"line", l.line},
                             {"call", l.call.empty() ? json(nullptr) : json(l.call)},
                             {"self", l.self}});
      }
      for (const auto& t : p.threads) {
        json tf = json::array();
        for (const auto& f : t.functions) tf.push_back(python_function_json(f, t.python_samples));
        threads.push_back(json{{"tid", t.tid},
                               {"samples", t.samples},
                               {"python_samples", t.python_samples},
                               {"functions", std::move(tf)}});
      }
      processes.push_back(json{{"pid", p.pid},
                               {"comm", p.comm},
                               {"samples", p.samples},
                               {"python_samples", p.python_samples},
                               {"truncated_stacks", p.truncated},
                               {"functions", std::move(functions)},
                               {"lines", std::move(lines)},
                               {"threads", std::move(threads)}});
    }
  }
  doc["processes"] = std::move(processes);
  return doc;
}

json memory_json(const analysis::MemorySummary& memory) {
  json list = json::array();
  for (const auto& r : memory.rows) {
    json histogram = json::array();
    for (std::size_t i = 0; i < r.size_histogram.size(); ++i) {
      if (r.size_histogram[i] == 0) continue;
      histogram.push_back(json{{"min_bytes", i == 0 ? std::uint64_t{0} : std::uint64_t{1} << i},
                               {"count", r.size_histogram[i]}});
    }
    json largest = json::array();
    for (const auto& l : r.largest_leaks) {
      largest.push_back(json{{"ptr", fmt::format("{:#x}", l.ptr)},
                             {"size", l.size},
                             {"kind", std::string(analysis::alloc_kind_name(l.kind))},
                             {"ts_ns", l.ts_ns}});
    }
    // What failed_allocations counts, function by function, as the function rows name them;
    // left out when nothing failed.
    json failed = json::object();
    for (const auto& f : r.failed_by_function) failed[f.function] = f.calls;
    list.push_back(json{
        {"pid", r.pid},
        {"comm", r.comm},
        {"device", r.device},
        {"allocations", r.allocations},
        {"allocated_bytes", r.allocated_bytes},
        {"frees", r.frees},
        {"live_allocations", r.live_allocations},
        {"live_bytes", r.live_bytes},
        {"peak_bytes", r.peak_bytes},
        {"unknown_frees", r.unknown_frees},
        {"double_frees", r.double_frees},
        {"failed_allocations", r.failed_allocations},
        {"failed_allocations_by_function", std::move(failed)},
        {"failed_frees", r.failed_frees},
        {"unreadable", r.unreadable},
        {"dropped", r.dropped},
        {"size_histogram", std::move(histogram)},
        {"leaks", json{{"count", r.leak_count}, {"bytes", r.leak_bytes}, {"largest", std::move(largest)}}},
        {"exited", r.exited}});
    if (r.failed_by_function.empty()) list.back().erase("failed_allocations_by_function");
  }
  return json{{"processes", std::move(list)},
              {"exited_dropped", memory.exited_dropped},
              {"overflow_calls", memory.overflow_calls}};
}

std::string api_memory(const analysis::AnalysisSnapshot& snap) {
  return with_header(snap, memory_json(snap.get<analysis::MemorySummary>()));
}

namespace {

// A second's mean GPM activity, to 6 decimals: the ring sums in floats, whose noise past
// that would read as made-up precision.
json activity_json(const analysis::RollupGpu& g, analysis::RollupActivity a) {
  const std::optional<double> mean = g.activity(a);
  if (!mean) return nullptr;
  return std::round(*mean * 1e6) / 1e6;
}

}  // namespace

std::string api_series(const analysis::SeriesWindow& window) {
  const auto& names = window.domains;
  json points = json::array();
  for (const auto& p : window.points) {
    json domains = json::object();
    for (std::size_t i = 0; i < names.size() && i < p.domains.size(); ++i) {
      if (p.domains[i] > 0) domains[names[i]] = p.domains[i];
    }
    json gpus = json::array();
    for (std::size_t i = 0; i < p.gpu_count; ++i) {
      const auto& g = p.gpus[i];
      gpus.push_back(json{{"gpu", g.index},
                          {"util", g.util_samples ? json(g.util_sum / g.util_samples) : json(nullptr)},
                          {"sm_active", activity_json(g, analysis::RollupActivity::kSm)},
                          {"tensor_active", activity_json(g, analysis::RollupActivity::kTensor)},
                          {"dram_active", activity_json(g, analysis::RollupActivity::kDram)},
                          {"memory_used_bytes", g.has_memory ? json(g.memory_used_bytes) : json(nullptr)}});
    }
    points.push_back(json{{"t", p.t},
                          {"calls", p.calls},
                          {"errors", p.errors},
                          {"domains", std::move(domains)},
                          {"gpus", std::move(gpus)}});
  }
  json doc = header(window.time, window.sequence);
  doc["interval_s"] = 1;
  doc["window_s"] = window.window_s;
  doc["points"] = std::move(points);
  return json_text(doc);
}

std::string api_anomalies(const analysis::AnalysisSnapshot& snap) {
  json doc = header(snap);
  json found = anomalies_json(snap.get<analysis::AnomalySummary>());
  doc["anomalies"] = std::move(found["calls"]);
  found.erase("calls");
  doc.update(found);
  const analysis::HangSummary& hangs = snap.get<analysis::HangSummary>();
  doc["hangs"] = hang_anomalies_json(hangs);
  doc["hang_total"] = hangs.total;
  return json_text(doc);
}

std::string api_python(const analysis::AnalysisSnapshot& snap, std::optional<std::uint32_t> pid) {
  json doc = header(snap);
  doc.update(python_json(snap.find<analysis::PythonHotSpots>(), pid));
  return json_text(doc);
}

std::string run_report_json(const analysis::AnalysisSnapshot& snap, const ApiOptions& options) {
  json doc = json::object();
  doc["functions"] = functions_json(snap);
  doc["gpus"] = gpus_json(snap);
  doc["processes"] = std::move(processes_json(snap, options)["processes"]);
  doc["memory"] = memory_json(snap.get<analysis::MemorySummary>());
  doc["gpu_work"] = gpu_work_json(snap.get<analysis::GpuWorkStats>());
  doc["gpu_time"] = gpu_time_json(snap.get<analysis::GpuTimeSummary>());
  doc["nccl"] = nccl_json(snap);
  doc["ops"] = ops_json(snap.get<analysis::OpKernelSummary>());
  doc["overhead"] = overhead_json(snap.get<OverheadReport>());
  doc["python_hot_spots"] = python_json(snap.find<analysis::PythonHotSpots>(), std::nullopt);
  doc["anomalies"] = anomalies_json(snap.get<analysis::AnomalySummary>());
  doc["waits"] = host_waits_json(snap.get<analysis::HostWaitSummary>());
  doc["in_flight"] = inflight_json(snap.get<analysis::InflightSummary>(), options);
  doc["in_flight"].update(hangs_json(snap.get<analysis::HangSummary>()));
  doc["accounting"] = counters_json(snap);
  return json_text(doc, 2) + "\n";
}

}  // namespace eacgm::exporting
