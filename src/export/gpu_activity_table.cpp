// GPU activity tables: MiB, W, J and percentages, "-" for what was never reported.
#include "export/gpu_activity_table.h"

#include <fmt/format.h>

#include <optional>
#include <vector>

#include "export/text_columns.h"

namespace eacgm::exporting {

std::string render_gpu_activity(const analysis::GpuActivity& activity) {
  if (!activity.has_samples()) return "";
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"gpu", "name", "samples", "util mean", "util max", "mem max MiB", "mem total MiB",
                  "power mean W", "power max W", "energy J", "temp max", "xid"});
  for (const auto& d : activity.devices()) {
    std::string samples = fmt::format("{}", d.samples);
    if (d.lost > 0) samples += fmt::format(" ({} lost)", d.lost);
    rows.push_back({fmt::format("{}", d.index), d.name.empty() ? "-" : d.name, samples,
                    or_dash(d.utilization_mean_percent, "{:.0f}%"), or_dash(d.utilization_max_percent, "{}%"),
                    format_mib(d.memory_used_max_bytes), format_mib(d.memory_total_bytes),
                    or_dash(d.power_mean_watts, "{:.1f}"), or_dash(d.power_max_watts, "{:.1f}"),
                    or_dash(d.energy_joules, "{:.0f}"), or_dash(d.temperature_max_celsius, "{}C"),
                    or_dash(d.xid_errors, "{}")});
  }
  std::string out = "\n";
  out += render_columns(rows, {true, false, true, true, true, true, true, true, true, true, true, true});

  rows.clear();
  rows.push_back({"pid", "process", "gpu", "calls", "errors", "samples", "mem max MiB", "sm mean", "sm max"});
  for (const auto& p : activity.processes()) {
    rows.push_back({fmt::format("{}", p.pid), p.name.empty() ? "-" : p.name, or_dash(p.gpu, "{}"),
                    fmt::format("{}", p.calls), fmt::format("{}", p.errors), fmt::format("{}", p.samples),
                    format_mib(p.memory_max_bytes), or_dash(p.sm_mean_percent, "{:.0f}%"),
                    or_dash(p.sm_max_percent, "{}%")});
  }
  out += '\n';
  if (rows.size() == 1) {
    out += "no process made traced calls or was seen on a GPU\n";
  } else {
    out += render_columns(rows, {true, false, true, true, true, true, true, true, true});
  }
  if (activity.overflow_calls() > 0) {
    out += fmt::format("({} calls of further processes are not in this table)\n", activity.overflow_calls());
  }
  return out;
}

}  // namespace eacgm::exporting
