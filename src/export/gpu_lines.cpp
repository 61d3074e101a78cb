// Renders a snapshot as trace-stream lines; JSON through the shared device/process
// objects, text with the same units as `eacgm gpu`.
#include "export/gpu_lines.h"

#include <chrono>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "export/event_format.h"
#include "export/gpu_json.h"
#include "export/json_text.h"
#include "export/text_columns.h"

namespace eacgm::exporting {
namespace {

std::uint64_t epoch_ns(const GpuSnapshot& snap) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(snap.time.time_since_epoch()).count());
}

void put_line(fmt::memory_buffer& out, const json& line) {
  const std::string text = json_text(line);
  out.append(text.data(), text.data() + text.size());
  out.push_back('\n');
}

void put_parts(fmt::memory_buffer& out, const std::vector<std::string>& parts) {
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out.append(std::string_view(", "));
    out.append(parts[i]);
  }
  out.push_back('\n');
}

}  // namespace

void append_gpu_jsonl(fmt::memory_buffer& out, const GpuSnapshot& snap) {
  const std::uint64_t ts = epoch_ns(snap);
  // Every field of a call line is present, so that a consumer that reads calls keeps
  // working; pid 0 marks a line that is not about one process.
  auto line = [ts](std::uint32_t pid, const char* name) {
    return json{{"ts_ns", ts},       {"pid", pid},      {"tid", 0},
                {"comm", ""},        {"domain", "gpu"}, {"name", name},
                {"dur_ns", nullptr}, {"ret", nullptr},  {"args", json::object()}};
  };
  for (const DeviceSample& d : snap.devices) {
    json l = line(0, "device");
    l["gpu"] = device_json(d);
    put_line(out, l);
  }
  for (const ProcessSample& p : snap.processes) {
    json l = line(p.pid, "process");
    l["process"] = process_json(p);
    put_line(out, l);
  }
  if (!snap.errors.empty()) {
    json l = line(0, "errors");
    l["errors"] = snap.errors;
    put_line(out, l);
  }
}

void append_gpu_text(fmt::memory_buffer& out, const GpuSnapshot& snap) {
  const std::uint64_t ts = epoch_ns(snap);
  for (const DeviceSample& d : snap.devices) {
    append_clock(out, ts);
    fmt::format_to(std::back_inserter(out), "gpu {} {}: ", d.index, d.name.empty() ? "-" : d.name);
    if (d.lost || !d.error.empty()) {
      fmt::format_to(std::back_inserter(out), "{} ({})\n", d.lost ? "LOST" : "ERROR", d.error);
      continue;
    }
    std::vector<std::string> parts;
    if (d.utilization_gpu_percent) parts.push_back(fmt::format("util {}%", *d.utilization_gpu_percent));
    if (d.gpm) {
      // Beside utilization, how much of the GPU computed (GPM; none on older GPUs).
      const std::pair<const char*, std::optional<double>> activities[] = {
          {"sm", d.gpm->sm_active}, {"tensor", d.gpm->tensor_active}, {"dram", d.gpm->dram_active}};
      for (const auto& [what, ratio] : activities) {
        if (ratio) parts.push_back(fmt::format("{} active {:.0f}%", what, *ratio * 100.0));
      }
    }
    if (d.memory_used_bytes && d.memory_total_bytes) {
      parts.push_back(
          fmt::format("mem {}/{} MiB", format_mib(d.memory_used_bytes), format_mib(d.memory_total_bytes)));
    }
    if (d.temperature_gpu_celsius) parts.push_back(fmt::format("{}C", *d.temperature_gpu_celsius));
    if (d.power_usage_milliwatts) {
      parts.push_back(d.power_limit_milliwatts
                          ? fmt::format("{:.1f}/{:.0f} W", *d.power_usage_milliwatts / 1000.0,
                                        *d.power_limit_milliwatts / 1000.0)
                          : fmt::format("{:.1f} W", *d.power_usage_milliwatts / 1000.0));
    }
    if (d.clock_sm_mhz) parts.push_back(fmt::format("sm {} MHz", *d.clock_sm_mhz));
    if (d.xid_errors_total && *d.xid_errors_total > 0) {
      parts.push_back(fmt::format("xid {} (last {})", *d.xid_errors_total, d.last_xid.value_or(0)));
    }
    if (parts.empty()) parts.emplace_back("no metrics");
    put_parts(out, parts);
  }
  for (const ProcessSample& p : snap.processes) {
    append_clock(out, ts);
    fmt::format_to(std::back_inserter(out), "gpu {} pid {} {}: ", p.gpu_index, p.pid,
                   p.name.empty() ? "-" : p.name);
    std::vector<std::string> parts;
    if (p.used_memory_bytes) parts.push_back(fmt::format("mem {} MiB", format_mib(p.used_memory_bytes)));
    if (p.sm_utilization_percent) parts.push_back(fmt::format("sm {}%", *p.sm_utilization_percent));
    if (p.memory_utilization_percent)
      parts.push_back(fmt::format("mem-util {}%", *p.memory_utilization_percent));
    if (parts.empty()) parts.emplace_back("no metrics");
    put_parts(out, parts);
  }
  for (const std::string& e : snap.errors) {
    append_clock(out, ts);
    fmt::format_to(std::back_inserter(out), "gpu: {}\n", e);
  }
}

}  // namespace eacgm::exporting
