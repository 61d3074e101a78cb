// Text and JSON of the flagged calls and intervals.
#include "export/anomaly_report.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "export/event_format.h"
#include "export/memory_table.h"
#include "export/summary_table.h"
#include "export/text_columns.h"

namespace eacgm::exporting {
namespace {

std::string function_cell(const std::string& domain, const std::string& name) {
  return domain.empty() ? name : domain + ":" + name;
}

std::string args_cell(const analysis::Anomaly& a) {
  if (a.sampled) return fmt::format("{} sampled call(s)", a.calls);
  std::string out;
  for (std::size_t i = 0; i < a.args.size(); ++i) out += fmt::format("{}{:#x}", i ? " " : "", a.args[i]);
  return out;
}

// "1", or "N in D": the flagged calls merged into the entry and the time from the first
// to the last.
std::string repeats_cell(const analysis::Anomaly& a) {
  if (a.repeats <= 1) return "1";
  return fmt::format(
      "{} in {}", a.repeats,
      format_duration(static_cast<double>(a.last_ts_ns > a.ts_ns ? a.last_ts_ns - a.ts_ns : 0)));
}

// The call's duration, with the part it waited for a CPU (not judged) when there was one.
std::string duration_cell(const analysis::Anomaly& a) {
  std::string cell = format_duration(static_cast<double>(a.dur_ns));
  if (a.run_delay_ns > 0)
    cell += fmt::format(" ({} run delay)", format_duration(static_cast<double>(a.run_delay_ns)));
  return cell;
}

}  // namespace

std::string render_anomalies(const analysis::AnomalySummary& s, std::size_t max_rows) {
  if (s.total == 0 && s.interval_total == 0) return {};
  std::string out = fmt::format("anomalies: {} slow call(s), {} slow interval(s), {} level shift(s)\n",
                                s.total, s.interval_total, s.level_shifts);
  if (!s.recent.empty()) {
    std::vector<std::vector<std::string>> rows{{"PID", "TID", "FUNCTION", "BYTES", "DURATION", "MEDIAN",
                                                "x MEDIAN", "SCORE", "UNDER", "REPEATS", "ARGS"}};
    const std::size_t first = s.recent.size() > max_rows ? s.recent.size() - max_rows : 0;
    std::uint64_t shown = 0;  // flagged calls the rows stand for
    for (std::size_t i = first; i < s.recent.size(); ++i) {
      const auto& a = s.recent[i];
      shown += a.repeats;
      rows.push_back(
          {std::to_string(a.pid), a.sampled ? "-" : std::to_string(a.tid), function_cell(a.domain, a.name),
           a.bytes ? format_bytes(a.bytes) : "-", duration_cell(a), format_duration(a.median_ns),
           fmt::format("{:.0f}",
                       a.median_ns > 0 ? static_cast<double>(a.dur_ns - a.run_delay_ns) / a.median_ns : 0.0),
           fmt::format("{:.1f}", a.score), a.op.empty() ? "-" : a.op, repeats_cell(a), args_cell(a)});
    }
    out += render_columns(rows, {true, true, false, true, true, true, true, true, false, true, false});
    if (s.total > shown) out += fmt::format("  ({} earlier slow call(s) not shown)\n", s.total - shown);
  }
  if (!s.intervals.empty()) {
    // DURATION is the calls' (geometric mean), beside the median it is compared with;
    // SECONDS the interval's length.
    std::vector<std::vector<std::string>> rows{
        {"FUNCTION", "BYTES FROM", "CALLS", "DURATION", "MEDIAN", "x MEDIAN", "SCORE", "SECONDS"}};
    const std::size_t first = s.intervals.size() > max_rows ? s.intervals.size() - max_rows : 0;
    for (std::size_t i = first; i < s.intervals.size(); ++i) {
      const auto& v = s.intervals[i];
      rows.push_back({function_cell(v.domain, v.name), v.bytes_class ? format_bytes(v.bytes_class) : "-",
                      std::to_string(v.calls), format_duration(v.mean_ns), format_duration(v.median_ns),
                      fmt::format("{:.1f}", v.ratio), fmt::format("{:.1f}", v.score),
                      fmt::format("{:.1f}", static_cast<double>(v.end_ns - v.start_ns) / 1e9)});
    }
    out += "slow intervals (calls over a tick, slower together than the model allows):\n";
    out += render_columns(rows, {false, true, true, true, true, true, true, true});
  }
  return out;
}

nlohmann::json anomalies_json(const analysis::AnomalySummary& s) {
  using nlohmann::json;
  json calls = json::array();
  for (const auto& a : s.recent) {
    // args: the call's, named as the events write them; {} for a sampled bucket.
    json call{{"ts_ns", a.ts_ns},
              {"pid", a.pid},
              {"tid", a.tid},
              {"comm", a.comm},
              {"domain", a.domain},
              {"name", a.name},
              {"dur_ns", a.dur_ns},
              {"bytes", a.bytes},
              {"median_ns", a.median_ns},
              {"score", a.score},
              {"args", a.call ? json_args<json>(*a.call) : json::object()},
              {"op", a.op.empty() ? json(nullptr) : json(a.op)},
              {"sampled", a.sampled},
              {"calls", a.calls},
              {"repeats", a.repeats},
              {"last_ts_ns", a.last_ts_ns},
              {"max_dur_ns", a.max_dur_ns}};
    if (a.run_delay_ns > 0) call["run_delay_ns"] = a.run_delay_ns;
    calls.push_back(std::move(call));
  }
  json intervals = json::array();
  for (const auto& v : s.intervals) {
    intervals.push_back(json{{"start_ns", v.start_ns},
                             {"end_ns", v.end_ns},
                             {"domain", v.domain},
                             {"name", v.name},
                             {"bytes_class", v.bytes_class},
                             {"calls", v.calls},
                             {"ratio", v.ratio},
                             {"score", v.score},
                             {"median_ns", v.median_ns},
                             {"dur_ns", static_cast<std::uint64_t>(std::llround(v.mean_ns))}});
  }
  return json{{"calls", std::move(calls)},
              {"intervals", std::move(intervals)},
              {"total", s.total},
              {"interval_total", s.interval_total},
              {"level_shifts", s.level_shifts},
              {"functions", s.functions},
              {"untracked_calls", s.untracked_calls},
              {"coalesced", s.coalesced}};
}

}  // namespace eacgm::exporting
