// History documents.
#include "export/history_json.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "export/history_jobs.h"
#include "export/json_opt.h"
#include "export/json_text.h"
#include "history/history_window.h"

namespace eacgm::exporting {
namespace {

// Unknown text facts are null.
json or_null(const std::string& v) { return v.empty() ? json(nullptr) : json(v); }

json window(const history::HistoryQuery& q, history::Tier tier) {
  json w{{"from_ns", q.from_ns}, {"to_ns", q.to_ns}, {"tier", history::tier_name(tier)}};
  if (q.node) w["node"] = *q.node;
  if (q.pid) w["pid"] = *q.pid;
  if (q.comm) w["comm"] = *q.comm;
  return w;
}

json process_json(const history::StoredProcess& p) {
  const auto& r = p.record;
  return json{{"node", p.node},
              {"pid", r.key.pid},
              {"start_ns", r.key.start_ns},
              {"comm", r.comm},
              {"cmdline", r.cmdline},
              {"rank", opt(r.rank)},
              {"local_rank", opt(r.local_rank)},
              {"world_size", opt(r.world_size)},
              {"container_id", or_null(r.container)},
              {"pod_uid", or_null(r.pod_uid)},
              {"pod", or_null(r.pod)},
              {"namespace", or_null(r.namespace_)},
              {"container", or_null(r.container_name)},
              {"job", or_null(r.job)},
              {"job_step", or_null(r.job_step)},
              {"first_ns", r.first_ns},
              {"last_ns", r.last_ns},
              {"exited", r.exited},
              {"calls", p.calls},
              {"errors", p.errors}};
}

json function_json(const history::StoredFunction& f) {
  const bool timed = f.latency.count > 0;
  return json{
      {"domain", f.domain},
      {"function", f.function},
      {"calls", f.calls},
      {"errors", f.errors},
      {"timed", f.timed},
      {"estimated", f.estimated > 0},
      {"calls_error", f.estimated > 0 ? json(std::llround(std::sqrt(f.calls_variance))) : json(nullptr)},
      {"bytes", f.bytes},
      {"total_ns", f.latency.sum_ns},
      {"mean_ns", timed ? json(f.latency.mean()) : json(nullptr)},
      {"p50_ns", timed ? json(f.latency.quantile(0.5)) : json(nullptr)},
      {"p90_ns", timed ? json(f.latency.quantile(0.9)) : json(nullptr)},
      {"p99_ns", timed ? json(f.latency.quantile(0.99)) : json(nullptr)},
      {"max_ns", timed ? json(f.latency.max_ns) : json(nullptr)}};
}

json gpu_json(const history::StoredGpuPoint& g) {
  return json{{"node", g.node},
              {"gpu", g.gpu},
              {"uuid", g.uuid},
              {"name", g.name},
              {"t_ns", g.t_ns},
              {"utilization_mean_percent", opt(g.util_mean)},
              {"utilization_max_percent", opt(g.util_max)},
              {"sm_active_mean", opt(g.sm_active_mean)},
              {"sm_active_max", opt(g.sm_active_max)},
              {"tensor_active_mean", opt(g.tensor_active_mean)},
              {"tensor_active_max", opt(g.tensor_active_max)},
              {"dram_active_mean", opt(g.dram_active_mean)},
              {"dram_active_max", opt(g.dram_active_max)},
              {"memory_used_mean_bytes", opt(g.memory_used_mean)},
              {"memory_used_max_bytes", opt(g.memory_used_max)},
              {"memory_total_bytes", opt(g.memory_total)},
              {"power_mean_watts", opt(g.power_mean_w)},
              {"power_max_watts", opt(g.power_max_w)},
              {"temperature_max_celsius", opt(g.temperature_max)}};
}

json anomaly_json(const history::StoredAnomaly& a) {
  const auto& r = a.record;
  // Every kind has its value in ns beside the median and their quotient (null for a hang,
  // which has no median): a slow interval's dur_ns is its calls' geometric mean duration.
  const std::optional<double> ratio = r.ratio();
  json j{{"node", a.node},       {"kind", r.kind},
         {"t_ns", r.t_ns},       {"end_ns", r.end_ns},
         {"domain", r.domain},   {"function", r.function},
         {"score", r.score},     {"median_ns", r.median_ns},
         {"dur_ns", r.dur_ns()}, {"ratio", ratio ? json(*ratio) : json(nullptr)}};
  // A hang's pid is its first missing rank's; an interval's calls are every process's.
  if (r.kind == "call" || r.kind == "hang" || (r.kind == "gpu" && r.process.pid != 0))
    j["pid"] = r.process.pid;
  return j;
}

json leak_json(const history::StoredLeak& l) {
  return json{{"node", l.node},
              {"t_ns", l.t_ns},
              {"pid", l.record.process.pid},
              {"comm", l.comm},
              {"cuda_device", l.record.device},
              {"allocations", l.record.allocations},
              {"bytes", l.record.bytes}};
}

template <typename Row, typename Fn>
json list(const std::vector<Row>& rows, Fn fn) {
  json out = json::array();
  for (const auto& r : rows) out.push_back(fn(r));
  return out;
}

json node_json(const history::StoredNode& n) {
  return json{{"node", n.node},   {"processes", n.processes}, {"running", n.running}, {"jobs", n.jobs},
              {"calls", n.calls}, {"errors", n.errors},       {"last_ns", n.last_ns}};
}

// The cursor of the page after `rows` (null when they are the window's last).
json next_page(const history::HistoryQuery& q, std::size_t rows, std::uint64_t total) {
  const std::size_t next = q.offset + rows;
  return rows > 0 && next < total ? json(history::page_cursor(q, next)) : json(nullptr);
}

// {"window", "total", "next", `key`: the page's rows}.
json page_doc(json w, const history::HistoryQuery& q, const char* key, json rows, std::uint64_t total) {
  json next = next_page(q, rows.size(), total);
  return json{{"window", std::move(w)}, {"total", total}, {"next", std::move(next)}, {key, std::move(rows)}};
}

json kernel_json(const history::StoredKernel& k) {
  return json{{"name", k.kernel}, {"launches", k.launches}};
}

}  // namespace

std::string history_processes_json(const history::HistoryQuery& q, history::Tier tier,
                                   const history::ProcessPage& page) {
  json doc = page_doc(window(q, tier), q, "processes", list(page.rows, process_json), page.totals.processes);
  doc["totals"] = json{{"processes", page.totals.processes},
                       {"running", page.totals.running},
                       {"calls", page.totals.calls},
                       {"errors", page.totals.errors}};
  return json_text(doc);
}

std::string history_functions_json(const history::HistoryQuery& q, history::Tier tier,
                                   const std::vector<history::StoredFunction>& rows) {
  return json_text(json{{"window", window(q, tier)}, {"functions", list(rows, function_json)}});
}

std::string history_kernels_json(const history::HistoryQuery& q, history::Tier tier,
                                 const std::vector<history::StoredKernel>& rows) {
  return json_text(json{{"window", window(q, tier)}, {"kernels", list(rows, kernel_json)}});
}

std::string history_gpus_json(const history::HistoryQuery& q, history::Tier tier,
                              const std::vector<history::StoredGpuPoint>& rows) {
  json w = window(q, tier);
  w["step_ns"] = q.step_ns;
  return json_text(json{{"window", std::move(w)}, {"points", list(rows, gpu_json)}});
}

std::string history_anomalies_json(const history::HistoryQuery& q,
                                   const history::Page<history::StoredAnomaly>& anomalies,
                                   const history::Page<history::StoredLeak>& leaks) {
  json doc = page_doc(window(q, history::Tier::kRaw), q, "anomalies", list(anomalies.rows, anomaly_json),
                      anomalies.total);
  doc["leaks_total"] = leaks.total;
  doc["leaks"] = list(leaks.rows, leak_json);
  return json_text(doc);
}

std::string history_leaks_json(const history::HistoryQuery& q,
                               const history::Page<history::StoredLeak>& leaks) {
  return json_text(
      page_doc(window(q, history::Tier::kRaw), q, "leaks", list(leaks.rows, leak_json), leaks.total));
}

std::string history_jobs_json(const history::HistoryQuery& q, history::Tier tier,
                              const history::Page<history::StoredJob>& jobs,
                              const std::vector<history::JobReportRow>& usage) {
  return json_text(page_doc(window(q, tier), q, "jobs", history_jobs_array(jobs.rows, usage), jobs.total));
}

std::string history_nodes_json(const history::HistoryQuery& q, history::Tier tier,
                               const history::Page<history::StoredNode>& nodes) {
  return json_text(page_doc(window(q, tier), q, "nodes", list(nodes.rows, node_json), nodes.total));
}

std::string history_report_json(const HistoryReport& r) {
  json w = window(r.query, r.tier);
  return json_text(json{{"window", std::move(w)},
                        {"functions", list(r.functions, function_json)},
                        {"processes", list(r.processes.rows, process_json)},
                        {"kernels", list(r.kernels, kernel_json)},
                        {"gpus", list(r.gpus, gpu_json)},
                        {"anomalies", list(r.anomalies.rows, anomaly_json)},
                        {"leaks", list(r.leaks.rows, leak_json)},
                        {"jobs", history_jobs_array(r.jobs.rows, r.job_usage)},
                        {"totals",
                         {{"processes", r.processes.totals.processes},
                          {"jobs", r.jobs.total},
                          {"anomalies", r.anomalies.total},
                          {"leaks", r.leaks.total}}}},
                   2);
}

std::vector<analysis::CallSummaryRow> history_summary_rows(const std::vector<history::StoredFunction>& rows) {
  std::vector<analysis::CallSummaryRow> out;
  out.reserve(rows.size());
  for (const auto& f : rows) {
    analysis::CallSummaryRow r;
    r.domain = f.domain;
    r.function = f.function;
    r.calls = f.calls;
    r.errors = f.errors;
    r.timed = f.latency.count;
    r.total_ns = f.latency.sum_ns;
    r.mean_ns = f.latency.mean();
    r.p50_ns = f.latency.quantile(0.5);
    r.p99_ns = f.latency.quantile(0.99);
    r.max_ns = f.latency.max_ns;
    r.bytes = f.bytes;
    r.has_bytes = f.bytes > 0;
    r.estimated = f.estimated;
    r.calls_error = std::sqrt(f.calls_variance);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace eacgm::exporting
