// Text and JSON of the probes' estimated cost.
#include "export/overhead_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

namespace eacgm::exporting {
namespace {

// Over the whole run, the share of the process's CPU time its probes took. The estimate
// can pass the measured CPU time (the calibrated cost is a loop's best case and CPU time
// is counted in 10 ms ticks): capped at 1.
double cpu_share(const ProcessOverhead& p) {
  return p.total_cpu_ns > 0 ? std::min(1.0, p.total_estimated_ns / p.total_cpu_ns) : 0.0;
}

}  // namespace

std::string render_overhead(const OverheadReport& report, std::size_t max_rows) {
  if (!report.costs.measured || report.processes.empty()) return {};
  std::vector<const ProcessOverhead*> rows;
  for (const auto& p : report.processes) {
    if (p.total_estimated_ns > 0) rows.push_back(&p);
  }
  if (rows.empty()) return {};
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    return a->total_estimated_ns > b->total_estimated_ns;
  });
  std::string out = fmt::format(
      "probe overhead (estimated: traps x calibrated cost, {:.2f} us per counted call, {:.2f} us timed, "
      "{:.2f} us per call recorded; budget {:.1f}%)\n",
      report.costs.entry_ns / 1e3, report.costs.entry_return_ns / 1e3, report.costs.per_call_ns / 1e3,
      report.budget * 100);
  for (std::size_t i = 0; i < rows.size() && i < max_rows; ++i) {
    const ProcessOverhead& p = *rows[i];
    const std::string measured =
        p.measured_slowdown ? fmt::format("; measured: {:.1f}% slower while the cycled probes are attached",
                                          *p.measured_slowdown * 100)
                            : std::string();
    // A process whose CPU time was never read (it ended before the first tick) has no share.
    if (p.total_cpu_ns <= 0) {
      out += fmt::format("  pid {:<8} {:.1f} ms in probes (no CPU time read: traced for under a second){}\n",
                         p.pid, p.total_estimated_ns / 1e6, measured);
    } else {
      out += fmt::format("  pid {:<8} {:6.2f}% of its CPU time in probes ({:.1f} ms of {:.1f} ms){}\n", p.pid,
                         cpu_share(p) * 100, p.total_estimated_ns / 1e6, p.total_cpu_ns / 1e6, measured);
    }
  }
  if (rows.size() > max_rows) out += fmt::format("  ... and {} more processes\n", rows.size() - max_rows);
  if (report.pinned_probes > 0) {
    out += fmt::format("  {} pinned probe(s) left at their configured timing\n", report.pinned_probes);
  }
  if (report.attached_share < 1.0) {
    out += fmt::format(
        "  counted probes attached {:.1f}% of the time (duty cycle, now {:.1f}% of each second): their "
        "counts "
        "are estimates, shown ~N±error\n",
        report.attached_share * 100, report.duty_fraction * 100);
  }
  if (report.reduced_probes > 0) {
    out += fmt::format("  {} probe(s) timed less often to stay within the budget (down to 1 call in {})\n",
                       report.reduced_probes, 1ull << report.max_sample_shift);
  }
  return out;
}

nlohmann::json overhead_json(const OverheadReport& report) {
  nlohmann::json doc = nlohmann::json::object();
  doc["calibrated"] = report.costs.measured;
  doc["sessions"] = report.costs.session;
  doc["hit_cost_ns"] = {{"entry", report.costs.entry_ns},
                        {"entry_return", report.costs.entry_return_ns},
                        {"stepped_entry", report.costs.stepped_entry_ns},
                        {"per_call", report.costs.per_call_ns}};
  doc["budget"] = report.budget;
  doc["over_budget"] = report.over_budget;
  doc["at_entry_floor"] = report.at_entry_floor;
  doc["reduced_probes"] = report.reduced_probes;
  doc["max_sample_shift"] = report.max_sample_shift;
  doc["pinned_probes"] = report.pinned_probes;
  doc["duty_fraction"] = report.duty_fraction;
  doc["attached_share"] = report.attached_share;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : report.processes) {
    list.push_back({{"pid", p.pid},
                    {"exited", p.exited},
                    {"estimated_s", p.total_estimated_ns / 1e9},
                    {"cpu_s", p.total_cpu_ns / 1e9},
                    {"cpu_share", cpu_share(p)},
                    {"recent_ratio", p.ratio},
                    {"measured_slowdown",
                     p.measured_slowdown ? nlohmann::json(*p.measured_slowdown) : nlohmann::json(nullptr)}});
  }
  doc["processes"] = std::move(list);
  return doc;
}

}  // namespace eacgm::exporting
