// GPU activity tables: MiB, W, J and percentages, "-" for what was never reported.
#include "export/gpu_activity_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <vector>

#include "export/text_columns.h"

namespace eacgm::exporting {
std::string render_gpu_activity(const analysis::GpuActivity& activity) {
  if (!activity.has_samples()) return "";
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"gpu", "name", "samples", "util mean", "util max", "sm active", "tensor active",
                  "dram active", "mem max MiB", "mem total MiB", "power mean W", "power max W", "energy J",
                  "temp max", "xid"});
  std::vector<std::string> without_gpm;
  for (const auto& d : activity.devices()) {
    std::string samples = fmt::format("{}", d.samples);
    if (d.lost > 0) samples += fmt::format(" ({} lost)", d.lost);
    if (d.samples > 0 && !d.sm_active_mean) without_gpm.push_back(fmt::format("{}", d.index));
    rows.push_back({fmt::format("{}", d.index), d.name.empty() ? "-" : d.name, samples,
                    or_dash(d.utilization_mean_percent, "{:.0f}%"), or_dash(d.utilization_max_percent, "{}%"),
                    format_ratio_percent(d.sm_active_mean), format_ratio_percent(d.tensor_active_mean),
                    format_ratio_percent(d.dram_active_mean), format_mib(d.memory_used_max_bytes),
                    format_mib(d.memory_total_bytes), or_dash(d.power_mean_watts, "{:.1f}"),
                    or_dash(d.power_max_watts, "{:.1f}"), or_dash(d.energy_joules, "{:.0f}"),
                    or_dash(d.temperature_max_celsius, "{}C"), or_dash(d.xid_errors, "{}")});
  }
  std::string out = "\n";
  std::vector<bool> right(rows.front().size(), true);
  right[1] = false;  // the name
  out += render_columns(rows, right);
  if (!without_gpm.empty()) {
    // Utilization says only that a kernel ran; the activities, where read, say how much of
    // the GPU computed, so their absence is named rather than left as dashes.
    out += fmt::format(
        "sm/tensor/dram active: means of NVML GPM profiling counters, none read on GPU {} "
        "(they need a Hopper or newer GPU)\n",
        fmt::join(without_gpm, ", "));
  }

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
