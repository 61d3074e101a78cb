// History tables.
#include "export/history_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <optional>

#include "core/byte_size.h"
#include "core/running_mean.h"
#include "export/history_jobs.h"
#include "export/summary_table.h"

namespace eacgm::exporting {
namespace {

std::string utc(std::int64_t ns) {
  const std::time_t s = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// "0-7", "0-3,5,7": sorted ranks as ranges.
std::string ranges(const std::vector<long>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? std::to_string(v[i]) : fmt::format("{}-{}", v[i], v[j]);
    i = j + 1;
  }
  return out;
}

std::string rank_of(const history::ProcessRecord& r) {
  if (!r.rank) return "-";
  return r.world_size ? fmt::format("{}/{}", *r.rank, *r.world_size) : std::to_string(*r.rank);
}

// namespace/pod, or the pod's UID when its name is unknown.
std::string pod_of(const history::ProcessRecord& r) {
  if (!r.pod.empty()) return r.namespace_.empty() ? r.pod : r.namespace_ + "/" + r.pod;
  return r.pod_uid;
}

// The job and its step, as Slurm writes them (job.step).
std::string job_of(const history::ProcessRecord& r) {
  if (r.job.empty() || r.job_step.empty()) return r.job;
  return r.job + "." + r.job_step;
}

std::string trimmed(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// "(12 more processes in this window: --limit N or --all)" when the page is not all.
std::string more(std::uint64_t total, std::size_t shown, const char* what) {
  if (total <= shown) return "";
  return fmt::format("({} more {} in this window: --limit N or --all)\n", total - shown, what);
}

std::string processes_table(const history::ProcessPage& page) {
  const auto& rows = page.rows;
  // The pod and job columns only where some process ran in a pod or a job.
  const bool pods = std::any_of(rows.begin(), rows.end(),
                                [](const history::StoredProcess& p) { return !pod_of(p.record).empty(); });
  const bool jobs = std::any_of(rows.begin(), rows.end(),
                                [](const history::StoredProcess& p) { return !p.record.job.empty(); });
  auto workload = [&](const std::string& pod, const std::string& job) {
    std::string s;
    if (pods) s += fmt::format(" {:<32}", pod.substr(0, 32));
    if (jobs) s += fmt::format(" {:<16}", job.substr(0, 16));
    return s;
  };
  std::string head = fmt::format("{:<12} {:>8} {:<16} {:>7} {:>10} {:>7} {:<19} {:<8}", "node", "pid", "comm",
                                 "rank", "calls", "errors", "last seen (UTC)", "state") +
                     workload("pod", "job");
  std::string out = trimmed(head) + "\n";
  for (const auto& p : rows) {
    std::string line =
        fmt::format("{:<12} {:>8} {:<16} {:>7} {:>10} {:>7} {:<19} {:<8}", p.node.substr(0, 12),
                    p.record.key.pid, p.record.comm.substr(0, 16), rank_of(p.record), p.calls, p.errors,
                    utc(p.record.last_ns), p.record.exited ? "exited" : "running") +
        workload(pod_of(p.record), job_of(p.record));
    out += trimmed(line) + "\n";
  }
  const auto& t = page.totals;
  if (t.processes > rows.size()) {
    out += fmt::format("{} processes in this window ({} running), {} calls, {} errors\n", t.processes,
                       t.running, t.calls, t.errors);
  }
  return out + more(t.processes, rows.size(), "processes");
}

std::string kernels_table(const std::vector<history::StoredKernel>& kernels, std::size_t limit) {
  std::string out = fmt::format("{:>12}  {}\n", "launches", "kernel");
  for (std::size_t i = 0; i < kernels.size() && i < limit; ++i) {
    const std::string& name = kernels[i].kernel;
    out += fmt::format("{:>12}  {}\n", kernels[i].launches,
                       name.size() > 100 ? name.substr(0, 97) + "..." : name);
  }
  return out + more(kernels.size(), std::min(limit, kernels.size()), "kernels");
}

// A ratio's mean of the points' means, in percent; "-" where no point had one (a GPU
// without GPM).
std::string percent(const RunningMean& m) {
  const auto v = m.value();
  return v ? fmt::format("{:.1f}%", 100 * *v) : "-";
}

std::string gpus_table(const std::vector<history::StoredGpuPoint>& points) {
  // Per GPU over the window: utilization and GPM activities as means of the points, maxima.
  struct Acc {
    std::string name;
    RunningMean util, sm, tensor, dram;
    std::uint32_t util_max = 0;
    std::uint64_t mem_max = 0;
    double power_max = 0;
  };
  std::map<std::pair<std::string, std::uint32_t>, Acc> gpus;
  for (const auto& g : points) {
    Acc& a = gpus[{g.node, g.gpu}];
    a.name = g.name;
    a.util.add(g.util_mean);
    a.sm.add(g.sm_active_mean);
    a.tensor.add(g.tensor_active_mean);
    a.dram.add(g.dram_active_mean);
    a.util_max = std::max(a.util_max, g.util_max.value_or(0));
    a.mem_max = std::max(a.mem_max, g.memory_used_max.value_or(0));
    a.power_max = std::max(a.power_max, g.power_max_w.value_or(0));
  }
  std::string out =
      fmt::format("{:<12} {:>3} {:<24} {:>9} {:>8} {:>7} {:>11} {:>9} {:>12} {:>9}\n", "node", "gpu", "name",
                  "util mean", "util max", "sm mean", "tensor mean", "dram mean", "memory max", "power max");
  for (const auto& [key, a] : gpus) {
    out += fmt::format("{:<12} {:>3} {:<24} {:>8.1f}% {:>7}% {:>7} {:>11} {:>9} {:>12} {:>8.0f}W\n",
                       key.first.substr(0, 12), key.second, a.name.substr(0, 24),
                       a.util.value().value_or(0.0), a.util_max, percent(a.sm), percent(a.tensor),
                       percent(a.dram), format_byte_size(a.mem_max), a.power_max);
  }
  return out;
}

// A median of the same unit as the duration beside it, or "unknown" (a model with none).
std::string median_text(double median_ns) {
  return median_ns > 0 && std::isfinite(median_ns) ? format_duration(median_ns) : "unknown";
}

// One anomaly as a line, its value and the median in one unit (history_batch.h's
// dur_ns): a slow call with the median of its calls, a slow interval with its calls'
// duration against that median (the ratio only where the median is known), a hang with
// its length (it has no median).
std::string anomaly_line(const history::AnomalyRecord& a) {
  const std::string what = fmt::format("  {} ", utc(a.t_ns));
  if (a.kind == "call") {
    return what + fmt::format("pid {} {} {}: {} (median {})\n", a.process.pid, a.domain, a.function,
                              format_duration(a.dur_ns()), median_text(a.median_ns));
  }
  if (a.kind == "hang") {
    return what + fmt::format("{}{} {}: hang for {}\n",
                              a.process.pid ? fmt::format("pid {} ", a.process.pid) : "", a.domain,
                              a.function, format_duration(a.dur_ns()));
  }
  if (a.kind == "gpu") {
    return what + fmt::format("GPU {} {}: {}{}\n", a.score, a.domain, a.function,
                              a.process.pid ? fmt::format(" (pid {} on it)", a.process.pid) : "");
  }
  const auto ratio = a.ratio();
  if (a.kind == "interval" && ratio && std::isfinite(a.median_ns) && *ratio > 0 && std::isfinite(*ratio)) {
    return what + fmt::format("{} {}: slow interval, {} per call, {:.1f}x the median {}\n", a.domain,
                              a.function, format_duration(a.dur_ns()), *ratio, format_duration(a.median_ns));
  }
  return what + fmt::format("{} {}: slow {} (score {:.1f})\n", a.domain, a.function, a.kind, a.score);
}

}  // namespace

std::string history_jobs_table(const std::vector<history::StoredJob>& jobs,
                               const std::vector<history::JobReportRow>& usage) {
  if (jobs.empty()) return "";
  std::string out =
      fmt::format("{:<20} {:>5} {:<16} {:>9} {:>10} {:>7} {:<19} {:<19}\n", "job", "nodes", "ranks",
                  "processes", "calls", "errors", "first seen (UTC)", "last seen (UTC)");
  for (const auto& j : jobs) {
    std::string ranks = ranges(j.ranks);
    if (j.world_size) ranks += fmt::format(" of {}", *j.world_size);
    out += fmt::format("{:<20} {:>5} {:<16} {:>9} {:>10} {:>7} {:<19} {:<19}\n", j.job.substr(0, 20),
                       j.nodes.size(), ranks.substr(0, 16), j.processes, j.calls, j.errors, utc(j.first_ns),
                       utc(j.last_ns));
    if (const auto missing = missing_ranks(j); !missing.empty()) {
      out += fmt::format("  ranks {} of {} never seen in this window\n", ranges(missing), j.job);
    }
    if (const history::JobReportRow* u = usage_of(usage, j.job); u != nullptr && u->gpu_hours > 0) {
      out += fmt::format(
          "  {:.2f} GPU-h held, {:.2f} idle ({:.0f}%, {}), {:.3f} kWh, cost {:.2f}, idle {:.2f}\n",
          u->gpu_hours, u->idle_gpu_hours, 100 * u->idle_gpu_hours / u->gpu_hours, u->activity_basis,
          u->energy_kwh, u->cost, u->idle_cost);
    }
  }
  return out;
}

std::string render_history_text(const HistoryReport& r, std::size_t limit) {
  std::string out =
      fmt::format("history {} .. {} UTC ({} rows){}{}{}\n\n", utc(r.query.from_ns), utc(r.query.to_ns),
                  history::tier_name(r.tier), r.query.node ? ", node " + *r.query.node : "",
                  r.query.pid ? ", pid " + std::to_string(*r.query.pid) : "",
                  r.query.comm ? ", comm " + *r.query.comm : "");
  if (r.functions.empty() && r.processes.rows.empty() && r.gpus.empty()) {
    out += "nothing was kept in this window\n";
    return out;
  }
  std::vector<history::StoredFunction> calls, gpu_time;
  for (const auto& f : r.functions) (f.domain == history::kGpuTimeDomain ? gpu_time : calls).push_back(f);
  if (!calls.empty()) {
    out += render_table(history_summary_rows(calls));
    const bool estimated = std::any_of(calls.begin(), calls.end(),
                                       [](const history::StoredFunction& f) { return f.estimated > 0; });
    if (estimated) out += "(some calls were counted for part of the time and scaled: estimates)\n";
    out += "\n";
  }
  if (!gpu_time.empty()) {
    out +=
        "gpu time (CUDA events through the hook: calls are the exact launches, the times those of the "
        "timed launches on the GPU)\n";
    out += render_table(history_summary_rows(gpu_time));
    out += "\n";
  }
  if (!r.processes.rows.empty()) out += processes_table(r.processes) + "\n";
  if (const std::string jobs = history_jobs_table(r.jobs.rows, r.job_usage); !jobs.empty()) {
    out += jobs + more(r.jobs.total, r.jobs.rows.size(), "jobs") + "\n";
  }
  if (!r.kernels.empty()) out += kernels_table(r.kernels, limit) + "\n";
  if (!r.gpus.empty()) out += gpus_table(r.gpus) + "\n";
  if (!r.anomalies.rows.empty()) {
    out += fmt::format("anomalies ({}):\n", r.anomalies.total);
    for (const auto& a : r.anomalies.rows) out += anomaly_line(a.record);
    out += more(r.anomalies.total, r.anomalies.rows.size(), "anomalies") + "\n";
  }
  if (!r.leaks.rows.empty()) {
    out += "leaks at exit:\n";
    for (const auto& l : r.leaks.rows) {
      out +=
          fmt::format("  {} pid {} {}: {} allocations, {} on device {}\n", utc(l.t_ns), l.record.process.pid,
                      l.comm, l.record.allocations, format_byte_size(l.record.bytes), l.record.device);
    }
    out += more(r.leaks.total, r.leaks.rows.size(), "leaks");
  }
  return out;
}

}  // namespace eacgm::exporting
