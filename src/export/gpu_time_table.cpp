#include "export/gpu_time_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "export/summary_table.h"
#include "export/text_columns.h"

namespace eacgm::exporting {
namespace {

std::string short_name(const analysis::GpuKernelTimeRow& r, std::size_t width) {
  std::string name = r.name.empty() ? fmt::format("(unnamed {:#x})", r.function) : r.name;
  if (name.size() > width && width > 3) name = name.substr(0, width - 3) + "...";
  return name;
}

}  // namespace

std::string render_gpu_time(const analysis::GpuTimeSummary& summary, std::size_t max_rows,
                            std::size_t max_name_width) {
  if (summary.empty()) return {};
  std::uint64_t launches = 0, timed = 0;
  double total = 0;
  for (const auto& k : summary.kernels) {
    launches += k.launches;
    timed += k.timed;
    total += k.est_gpu_ns;
  }
  std::string out = fmt::format(
      "gpu time (CUDA events through the hook; {} of {} launches timed, NCCL kernels all): {} on the GPU\n",
      timed, launches, format_duration(total));
  // n: the timed launches behind p50 and p99 (never the first, shown apart as it ran cold).
  std::vector<std::vector<std::string>> cells = {
      {"pid", "kernel", "launches", "n", "p50", "p99", "first", "gpu time", "±95%", "share"}};
  const std::size_t n = std::min(summary.kernels.size(), max_rows);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = summary.kernels[i];
    const bool any = r.timed > 0;
    const bool steady = r.samples > 0;
    cells.push_back({fmt::format("{}", r.pid), short_name(r, max_name_width) + (r.upper_bound ? " (<=)" : ""),
                     fmt::format("{}", r.launches), fmt::format("{}", r.samples),
                     steady ? format_duration(r.p50_ns) : "-", steady ? format_duration(r.p99_ns) : "-",
                     r.first_launch_ns ? format_duration(*r.first_launch_ns) : "-",
                     any ? format_duration(r.est_gpu_ns) : "-",
                     any && r.est_gpu_ci_ns ? format_duration(*r.est_gpu_ci_ns) : "-",
                     any && total > 0 ? fmt::format("{:.1f}%", 100.0 * r.est_gpu_ns / total) : "-"});
  }
  out += render_columns(cells, {true, false, true, true, true, true, true, true, true, true});
  if (summary.kernels.size() > n)
    out += fmt::format("({} more kernels not shown; all in --json)\n", summary.kernels.size() - n);
  out +=
      "(n: timed launches behind p50 and p99; first: the first launch, cold, kept apart; ±95%: the "
      "gpu time's 95% confidence interval)\n";
  if (std::any_of(summary.kernels.begin(), summary.kernels.end(),
                  [](const auto& r) { return r.upper_bound; }))
    out += "(<=: every timed launch found its stream idle; its times include the launch's latency)\n";
  if (!summary.streams.empty()) {
    std::vector<std::vector<std::string>> s = {{"pid", "device", "stream", "timed", "busy", "busy share"}};
    for (const auto& r : summary.streams) {
      s.push_back({fmt::format("{}", r.pid), fmt::format("{}", r.device), fmt::format("{:#x}", r.stream),
                   fmt::format("{}", r.timed), format_duration(r.est_busy_ns),
                   fmt::format("{:.1f}%", 100.0 * r.busy_share)});
    }
    out += render_columns(s, {true, true, false, true, true, true});
  }
  for (const auto& p : summary.processes) {
    if (p.busy_percent || p.nvml_sm_percent)
      out += fmt::format("pid {}{}: GPU busy {} by the timed spans ({} device{}), NVML SM utilization {}\n",
                         p.ring.pid, p.ring.comm.empty() ? "" : fmt::format(" ({})", p.ring.comm),
                         p.busy_percent ? fmt::format("{:.1f}%", *p.busy_percent) : "-", p.devices,
                         p.devices == 1 ? "" : "s",
                         p.nvml_sm_percent
                             ? fmt::format("{:.1f}% ({} samples)", *p.nvml_sm_percent, p.nvml_samples)
                             : "not sampled");
    if (p.ring.private_driver)
      out += fmt::format(
          "pid {}: runs its own copy of libcuda (--private-driver): the driver's uprobes never see it, "
          "its {} launches are the hook's exact count\n",
          p.ring.pid, p.ring.launches);
    if (p.ring.dropped > 0 || p.ring.errors > 0 || p.ring.skipped_capturing > 0)
      out += fmt::format(
          "pid {}: {} records dropped (ring full), {} event errors, {} launches not timed "
          "while a stream capture was underway\n",
          p.ring.pid, p.ring.dropped, p.ring.errors, p.ring.skipped_capturing);
    if (p.ring.holds_expired > 0)
      out += fmt::format(
          "pid {}: {} of {} holds of an idle stream released by the hook's watchdog (the launching "
          "thread did not come back from the launch within 5 ms)\n",
          p.ring.pid, p.ring.holds_expired, p.ring.held + p.ring.holds_expired);
  }
  return out;
}

json gpu_time_json(const analysis::GpuTimeSummary& summary, std::size_t max_kernels) {
  json kernels = json::array();
  std::size_t shown = 0;
  for (const auto& r : summary.kernels) {
    if (shown++ >= max_kernels) break;
    json row{{"pid", r.pid},
             {"name", r.name},
             {"function", fmt::format("{:#x}", r.function)},
             {"nccl", r.nccl},
             {"graph", r.graph},
             {"launches", r.launches},
             {"timed", r.timed},
             {"idle_starts", r.idle_starts},
             {"upper_bound", r.upper_bound},
             {"samples", r.samples},
             {"timed_ns", r.timed_ns},
             {"first_launch_ns", opt(r.first_launch_ns)}};
    if (r.samples > 0) {
      row["mean_ns"] = r.mean_ns;
      row["p50_ns"] = r.p50_ns;
      row["p99_ns"] = r.p99_ns;
      row["max_ns"] = r.max_ns;
    } else {
      row["mean_ns"] = row["p50_ns"] = row["p99_ns"] = row["max_ns"] = nullptr;
    }
    row["gpu_ns"] = r.timed > 0 ? json(r.est_gpu_ns) : json(nullptr);
    row["gpu_ns_ci95"] = r.timed > 0 ? opt(r.est_gpu_ci_ns) : json(nullptr);
    json shapes = json::array();
    for (const auto& sh : r.shapes) {
      json one{{"grid", {sh.shape.grid[0], sh.shape.grid[1], sh.shape.grid[2]}},
               {"block", {sh.shape.block[0], sh.shape.block[1], sh.shape.block[2]}},
               {"shared_bytes", sh.shape.shared_bytes},
               {"timed", sh.timed},
               {"samples", sh.samples},
               {"idle_starts", sh.idle_starts},
               {"upper_bound", sh.upper_bound},
               {"mean_ns", sh.mean_ns},
               {"p50_ns", sh.p50_ns},
               {"p99_ns", sh.p99_ns},
               {"max_ns", sh.max_ns}};
      shapes.push_back(std::move(one));
    }
    row["shapes"] = std::move(shapes);
    row["shapes_left_out"] = r.shapes_left_out;
    kernels.push_back(std::move(row));
  }
  json streams = json::array();
  for (const auto& r : summary.streams) {
    streams.push_back(json{{"pid", r.pid},
                           {"device", r.device},
                           {"stream", fmt::format("{:#x}", r.stream)},
                           {"timed", r.timed},
                           {"busy_ns", r.est_busy_ns},
                           {"first_ns", r.first_ns},
                           {"last_ns", r.last_ns},
                           {"busy_share", r.busy_share}});
  }
  json processes = json::array();
  for (const auto& p : summary.processes) {
    processes.push_back(json{{"pid", p.ring.pid},
                             {"comm", p.ring.comm},
                             {"launches", p.ring.launches},
                             {"timed", p.ring.sampled},
                             {"sample_every", p.ring.sample_every},
                             {"dropped", p.ring.dropped},
                             {"skipped_capturing", p.ring.skipped_capturing},
                             {"errors", p.ring.errors},
                             {"timing_cost_ns", p.ring.timing_cost_ns},
                             {"dispatch_gap_ns", p.ring.dispatch_gap_ns},
                             {"held", p.ring.held},
                             {"holds_expired", p.ring.holds_expired},
                             {"gpu_ns", p.est_gpu_ns},
                             {"devices", p.devices},
                             {"busy_percent", opt(p.busy_percent)},
                             {"nvml_sm_percent", opt(p.nvml_sm_percent)},
                             {"nvml_samples", p.nvml_samples},
                             {"private_driver", p.ring.private_driver},
                             {"exited", p.ring.exited}});
  }
  const std::size_t left_out =
      summary.kernels.size() > max_kernels ? summary.kernels.size() - max_kernels : 0;
  return json{{"kernels", std::move(kernels)},
              {"kernels_left_out", left_out},
              {"streams", std::move(streams)},
              {"processes", std::move(processes)},
              {"folded_launches", summary.folded_launches}};
}

}  // namespace eacgm::exporting
