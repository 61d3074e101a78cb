// A job report as JSON, CSV and a text table.
#include "export/job_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "export/json_text.h"
#include "export/text_columns.h"

namespace eacgm::exporting {
namespace {

using json = nlohmann::ordered_json;

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// `part` of `whole`; none of nothing.
std::optional<double> share_of(double part, double whole) {
  return whole > 0 ? std::optional<double>(part / whole) : std::nullopt;
}

// Where the job's time went: host waits over its processes' traced time, its GPU time
// (null where the hook measured none) with NCCL's part and the top kernels.
json time_json(const history::JobTime& t) {
  json waits = json::array();
  for (const auto& w : t.host_waits) {
    waits.push_back({{"kind", w.kind},
                     {"calls", w.calls},
                     {"seconds", w.seconds},
                     {"share", or_null(share_of(w.seconds, t.wall_seconds))},
                     {"estimated", w.estimated}});
  }
  json kernels = json::array();
  for (const auto& k : t.top_kernels) {
    kernels.push_back({{"name", k.name},
                       {"launches", k.launches},
                       {"timed", k.timed},
                       {"gpu_s", k.gpu_seconds},
                       {"share", or_null(share_of(k.gpu_seconds, t.gpu_seconds.value_or(0)))}});
  }
  const std::optional<double> nccl_share =
      t.nccl_gpu_seconds ? share_of(*t.nccl_gpu_seconds, t.gpu_seconds.value_or(0)) : std::nullopt;
  return json{{"wall_s", t.wall_seconds},
              {"wall_basis", "process_life"},
              {"processes", t.processes},
              {"host_wait_s", t.host_wait_seconds},
              {"host_wait_share", or_null(share_of(t.host_wait_seconds, t.wall_seconds))},
              {"host_waits", std::move(waits)},
              {"gpu_time_measured", t.gpu_seconds.has_value()},
              {"gpu_s", or_null(t.gpu_seconds)},
              {"gpu_timed_launches", t.gpu_timed_launches},
              {"nccl_gpu_s", or_null(t.nccl_gpu_seconds)},
              {"nccl_share", or_null(nccl_share)},
              {"nccl_timed_launches", t.nccl_timed_launches},
              {"top_kernels", std::move(kernels)}};
}

json row_json(const history::JobReportRow& r) {
  return json{{"job", r.job},
              {"nodes", r.nodes},
              {"gpus", r.gpus},
              {"gpu_hours", r.gpu_hours},
              {"active_gpu_hours", r.active_gpu_hours},
              {"idle_gpu_hours", r.idle_gpu_hours},
              {"unmeasured_gpu_hours", r.unmeasured_gpu_hours},
              {"idle_share", or_null(idle_share(r))},
              {"longest_idle_s", static_cast<double>(r.longest_idle_ns) / 1e9},
              {"activity_basis", r.activity_basis},
              {"tensor_active_mean", or_null(r.tensor_active_mean)},
              {"memory_peak_bytes", r.memory_peak_bytes},
              {"memory_capacity_bytes", or_null(r.memory_capacity_bytes)},
              {"energy_kwh", r.energy_kwh},
              {"energy_basis", r.energy_basis},
              {"share_basis", r.share_basis},
              {"cost", r.cost},
              {"idle_cost", r.idle_cost},
              {"first_ns", r.first_ns},
              {"last_ns", r.last_ns},
              {"time", time_json(r.time)}};
}

// A CSV field: quoted when it holds a separator, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// CSV leaves an unknown cell empty.
template <typename T>
std::string or_empty(const std::optional<T>& v, const char* format = "{}") {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string();
}

// "2h05m", "45m", "30s".
std::string span_text(std::int64_t ns) {
  const std::int64_t s = ns / 1'000'000'000;
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
  if (s >= 60) return fmt::format("{}m", s / 60);
  return fmt::format("{}s", s);
}

// The time columns of a CSV line: lists as "name=seconds" ";"-joined, GPU figures empty
// where not measured.
std::string time_csv(const history::JobTime& t) {
  std::string waits, kernels;
  bool estimated = false;
  for (const auto& w : t.host_waits) {
    waits += fmt::format("{}{}={:.6f}", waits.empty() ? "" : ";", w.kind, w.seconds);
    estimated = estimated || w.estimated;
  }
  for (const auto& k : t.top_kernels)
    kernels += fmt::format("{}{}={:.6f}", kernels.empty() ? "" : ";", k.name, k.gpu_seconds);
  const std::optional<double> nccl_share =
      t.nccl_gpu_seconds ? share_of(*t.nccl_gpu_seconds, t.gpu_seconds.value_or(0)) : std::nullopt;
  return fmt::format(
      "{:.3f},{:.6f},{},{},{},{},{},{},{},{}", t.wall_seconds, t.host_wait_seconds,
      or_empty(share_of(t.host_wait_seconds, t.wall_seconds), "{:.4f}"), csv_field(waits), estimated ? 1 : 0,
      or_empty(t.gpu_seconds, "{:.6f}"), t.gpu_seconds ? std::to_string(t.gpu_timed_launches) : std::string(),
      or_empty(t.nccl_gpu_seconds, "{:.6f}"), or_empty(nccl_share, "{:.4f}"), csv_field(kernels));
}

// "2h05m", "45m", "12.5s".
std::string seconds_text(double s) {
  return s >= 60 ? span_text(static_cast<std::int64_t>(s * 1e9)) : fmt::format("{:.1f}s", s);
}

// A kernel's name in a line: its first 48 characters.
std::string kernel_text(const std::string& name) {
  return name.size() > 48 ? name.substr(0, 47) + "~" : name;
}

// The lines of where a job's time went, under the table.
std::string time_text(const history::JobReportRow& r) {
  const history::JobTime& t = r.time;
  std::string out = fmt::format("  {}: ", r.job);
  if (t.wall_seconds > 0) {
    out += fmt::format("{} traced over {} process{}, host waits {} ({})", seconds_text(t.wall_seconds),
                       t.processes, t.processes == 1 ? "" : "es", seconds_text(t.host_wait_seconds),
                       format_ratio_percent(share_of(t.host_wait_seconds, t.wall_seconds)));
    std::string kinds;
    for (const auto& w : t.host_waits) {
      kinds += fmt::format("{}{} {}{}", kinds.empty() ? "" : ", ", w.kind, seconds_text(w.seconds),
                           w.estimated ? " (est.)" : "");
    }
    if (!kinds.empty()) out += ": " + kinds;
  } else {
    out += "no traced time";
  }
  if (!t.gpu_seconds) return out + "\n    GPU time not measured\n";
  out += fmt::format("\n    GPU {} ({} timed launches), NCCL {} ({})\n", seconds_text(*t.gpu_seconds),
                     t.gpu_timed_launches, seconds_text(t.nccl_gpu_seconds.value_or(0)),
                     format_ratio_percent(share_of(t.nccl_gpu_seconds.value_or(0), *t.gpu_seconds)));
  for (const auto& k : t.top_kernels) {
    out += fmt::format("      {:<48} {:>8} {:>7} {:>10} launches\n", kernel_text(k.name),
                       seconds_text(k.gpu_seconds),
                       format_ratio_percent(share_of(k.gpu_seconds, *t.gpu_seconds)), k.launches);
  }
  return out;
}

std::string money(double v, const std::string& currency) {
  return currency.empty() ? fmt::format("{:.2f}", v) : fmt::format("{:.2f} {}", v, currency);
}

}  // namespace

std::optional<double> idle_share(const history::JobReportRow& r) {
  return r.gpu_hours > 0 ? std::optional<double>(r.idle_gpu_hours / r.gpu_hours) : std::nullopt;
}

std::string job_report_json(const history::JobReport& report) {
  const history::HistoryQuery& q = report.query;
  json w{{"from_ns", q.from_ns}, {"to_ns", q.to_ns}, {"tier", history::tier_name(report.tier)}};
  if (q.node) w["node"] = *q.node;
  json selector{{"by", history::selector_name(report.selector.by)}};
  selector["value"] =
      report.selector.by == history::JobSelector::By::kAll ? json(nullptr) : json(report.selector.value);
  json jobs = json::array();
  for (const auto& r : report.rows) jobs.push_back(row_json(r));
  return json_text(json{{"window", std::move(w)},
                        {"selector", std::move(selector)},
                        {"idle_threshold", report.options.idle_threshold},
                        {"gpu_hour_price", report.options.gpu_hour_price},
                        {"currency", report.options.currency},
                        {"jobs", std::move(jobs)}});
}

std::string job_report_csv(const history::JobReport& report) {
  std::string out =
      "job,nodes,gpus,gpu_hours,active_gpu_hours,idle_gpu_hours,unmeasured_gpu_hours,idle_share,longest_idle_"
      "s,"
      "activity_basis,tensor_active_mean,memory_peak_bytes,memory_capacity_bytes,energy_kwh,energy_basis,"
      "share_basis,cost,idle_cost,currency,first_ns,last_ns,wall_s,host_wait_s,host_wait_share,host_waits,"
      "host_wait_estimated,gpu_s,gpu_timed_launches,nccl_gpu_s,nccl_share,top_kernels\n";
  for (const auto& r : report.rows) {
    std::string nodes;
    for (const auto& n : r.nodes) nodes += (nodes.empty() ? "" : ";") + n;
    out += fmt::format(
        "{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{},{},{},{},{:.6f},{},{},{:.4f},{:.4f},{},{},{}\n",
        csv_field(r.job), csv_field(nodes), r.gpus, r.gpu_hours, r.active_gpu_hours, r.idle_gpu_hours,
        r.unmeasured_gpu_hours, or_empty(idle_share(r), "{:.4f}"), r.longest_idle_ns / 1'000'000'000,
        r.activity_basis, or_empty(r.tensor_active_mean, "{:.4f}"), r.memory_peak_bytes,
        or_empty(r.memory_capacity_bytes), r.energy_kwh, r.energy_basis, r.share_basis, r.cost, r.idle_cost,
        csv_field(report.options.currency), r.first_ns, r.last_ns);
    out.back() = ',';
    out += time_csv(r.time) + "\n";
  }
  return out;
}

std::string job_report_text(const history::JobReport& report) {
  const std::string& cur = report.options.currency;
  if (report.rows.empty()) return "no job held a GPU in this window\n";
  std::vector<std::vector<std::string>> rows{{"JOB", "NODES", "GPUS", "GPU-H", "ACTIVE-H", "IDLE-H", "IDLE",
                                              "LONGEST IDLE", "ACTIVITY", "TENSOR", "MEM PEAK/CAP MiB",
                                              "ENERGY kWh", "COST", "IDLE COST"}};
  for (const auto& r : report.rows) {
    rows.push_back({r.job, std::to_string(r.nodes.size()), std::to_string(r.gpus),
                    fmt::format("{:.2f}", r.gpu_hours), fmt::format("{:.2f}", r.active_gpu_hours),
                    fmt::format("{:.2f}", r.idle_gpu_hours), format_ratio_percent(idle_share(r)),
                    span_text(r.longest_idle_ns), r.activity_basis,
                    format_ratio_percent(r.tensor_active_mean),
                    format_mib(r.memory_peak_bytes) + "/" + format_mib(r.memory_capacity_bytes),
                    fmt::format("{:.3f}", r.energy_kwh), money(r.cost, cur), money(r.idle_cost, cur)});
  }
  std::string out = render_columns(
      rows, {false, true, true, true, true, true, true, true, false, true, true, true, true, true});
  out +=
      "\nWhere the time went (host waits against the processes' traced time; GPU time where the hook "
      "timed kernels):\n";
  for (const auto& r : report.rows) out += time_text(r);
  out += fmt::format(
      "\n{} from the {} rows. Idle: a held GPU's activity under {:.0f}%. Price: {} per GPU-hour{}.\n",
      report.rows.size() == 1 ? "1 job" : fmt::format("{} jobs", report.rows.size()),
      history::tier_name(report.tier), report.options.idle_threshold * 100,
      money(report.options.gpu_hour_price, cur),
      report.options.gpu_hour_price > 0 ? "" : " (set [report] gpu_hour_price)");
  return out;
}

}  // namespace eacgm::exporting
