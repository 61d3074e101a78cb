// Renders GPU snapshots for people (aligned columns, MiB/W/°C) and for programs (JSON in
// base units with nulls for what a GPU does not report).
#include "export/gpu_report.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "export/gpu_json.h"
#include "export/json_text.h"
#include "export/text_columns.h"

namespace eacgm::exporting {
namespace {

std::string watts(const std::optional<std::uint32_t>& mw, const char* format) {
  return mw ? fmt::format(fmt::runtime(format), *mw / 1000.0) : std::string("-");
}

std::string process_type(const ProcessSample& p) {
  if (p.compute && p.graphics) return "C+G";
  return p.compute ? "C" : "G";
}

std::string iso_time(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000;
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z", fmt::gmtime(std::chrono::system_clock::to_time_t(t)),
                     static_cast<int>(ms));
}

// A GPM activity as a whole percentage, "-" without GPM or without that unit.
std::string activity(const std::optional<GpmCounters>& gpm, std::optional<double> GpmCounters::*field) {
  return format_ratio_percent(gpm ? (*gpm).*field : std::nullopt);
}

json opt_double(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json gpm_json(const GpmCounters& c) {
  json links = json::array();
  for (const NvlinkRate& l : c.nvlinks) {
    links.push_back({{"link", l.link},
                     {"tx_bytes_per_second", l.tx_bytes_per_second},
                     {"rx_bytes_per_second", l.rx_bytes_per_second}});
  }
  return json{
      {"interval_seconds", c.interval_seconds},
      {"graphics_active", opt_double(c.graphics_active)},
      {"sm_active", opt_double(c.sm_active)},
      {"sm_occupancy", opt_double(c.sm_occupancy)},
      {"tensor_active", opt_double(c.tensor_active)},
      {"tensor_hmma_active", opt_double(c.tensor_hmma_active)},
      {"tensor_imma_active", opt_double(c.tensor_imma_active)},
      {"tensor_dfma_active", opt_double(c.tensor_dfma_active)},
      {"fp16_active", opt_double(c.fp16_active)},
      {"fp32_active", opt_double(c.fp32_active)},
      {"fp64_active", opt_double(c.fp64_active)},
      {"integer_active", opt_double(c.integer_active)},
      {"dram_active", opt_double(c.dram_active)},
      {"pcie_tx_bytes_per_second", opt_double(c.pcie_tx_bytes_per_second)},
      {"pcie_rx_bytes_per_second", opt_double(c.pcie_rx_bytes_per_second)},
      {"nvlink_tx_bytes_per_second", opt_double(c.nvlink_tx_bytes_per_second)},
      {"nvlink_rx_bytes_per_second", opt_double(c.nvlink_rx_bytes_per_second)},
      {"nvlinks", std::move(links)},
  };
}

// GPUs in MIG mode: one row per GPU instance, since GPM gives nothing for the whole GPU.
std::string render_mig_instances(const GpuSnapshot& snap) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"GPU", "GI", "Profile", "SM", "Tensor", "DRAM", "Graphics", "FP16", "FP32", "FP64"});
  std::vector<std::string> without;
  bool any = false;
  for (const DeviceSample& d : snap.devices) {
    if (d.lost || !d.gpm_mig) continue;
    any = true;
    if (d.gpm_instances.empty()) without.push_back(std::to_string(d.index));
    for (const GpmInstanceCounters& in : d.gpm_instances) {
      const std::optional<GpmCounters> c = in.counters;
      rows.push_back({fmt::format("{}", d.index), fmt::format("{}", in.gpu_instance_id),
                      in.profile.empty() ? "-" : in.profile, activity(c, &GpmCounters::sm_active),
                      activity(c, &GpmCounters::tensor_active), activity(c, &GpmCounters::dram_active),
                      activity(c, &GpmCounters::graphics_active), activity(c, &GpmCounters::fp16_active),
                      activity(c, &GpmCounters::fp32_active), activity(c, &GpmCounters::fp64_active)});
    }
  }
  if (!any) return "";
  std::string out = "\nMIG: GPM counters per GPU instance (none for the whole GPU)\n";
  if (rows.size() > 1) {
    out += render_columns(rows, {true, true, false, true, true, true, true, true, true, true});
  }
  if (!without.empty()) {
    out += fmt::format("GPU {}: no GPU instance with GPM counters in this pass\n", fmt::join(without, ", "));
  }
  return out;
}

json instances_json(const DeviceSample& d) {
  json out = json::array();
  for (const GpmInstanceCounters& in : d.gpm_instances) {
    json j = {{"gpu_instance_id", in.gpu_instance_id},
              {"profile", in.profile.empty() ? json(nullptr) : json(in.profile)}};
    j.update(gpm_json(in.counters));
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

std::vector<std::string> clock_event_reason_names(std::uint64_t mask) {
  std::vector<std::string> names;
  std::uint64_t known = 0;
  for (const ClockEventReason& r : kClockEventReasons) {
    known |= r.bit;
    if (mask & r.bit) names.emplace_back(r.name);
  }
  if (mask & ~known) names.push_back(fmt::format("{:#x}", mask & ~known));
  return names;
}

std::string render_gpu_table(const GpuSnapshot& snap, bool processes) {
  std::string out = fmt::format(
      "Driver {}  CUDA {}  {} GPU{}\n", snap.system.driver_version.empty() ? "-" : snap.system.driver_version,
      snap.system.cuda_driver_version ? format_cuda_version(*snap.system.cuda_driver_version) : "-",
      snap.devices.size(), snap.devices.size() == 1 ? "" : "s");
  if (snap.devices.empty()) {
    out += "No GPUs found by NVML\n";
  } else {
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"GPU", "Name", "Bus-Id", "Util", "SM", "Tensor", "DRAM", "MemUtil",
                    "Memory used/total MiB", "Temp", "Power/limit W", "SM MHz", "Mem MHz", "Fan", "XID"});
    for (const DeviceSample& d : snap.devices) {
      if (d.lost || !d.error.empty()) {
        rows.push_back({fmt::format("{}", d.index), d.name.empty() ? "-" : d.name,
                        d.pci_bus_id.empty() ? "-" : d.pci_bus_id, d.lost ? "LOST" : "ERROR", "-", "-", "-",
                        "-", "-", "-", "-", "-", "-", "-", "-"});
        continue;
      }
      std::string memory =
          (d.memory_used_bytes || d.memory_total_bytes)
              ? fmt::format("{} / {}", format_mib(d.memory_used_bytes), format_mib(d.memory_total_bytes))
              : "-";
      std::string power = (d.power_usage_milliwatts || d.power_limit_milliwatts)
                              ? fmt::format("{} / {}", watts(d.power_usage_milliwatts, "{:.1f}"),
                                            watts(d.power_limit_milliwatts, "{:.0f}"))
                              : "-";
      rows.push_back(
          {fmt::format("{}", d.index), d.name, d.pci_bus_id, or_dash(d.utilization_gpu_percent, "{}%"),
           activity(d.gpm, &GpmCounters::sm_active), activity(d.gpm, &GpmCounters::tensor_active),
           activity(d.gpm, &GpmCounters::dram_active), or_dash(d.utilization_memory_percent, "{}%"), memory,
           or_dash(d.temperature_gpu_celsius, "{}C"), power, or_dash(d.clock_sm_mhz),
           or_dash(d.clock_memory_mhz), or_dash(d.fan_speed_percent, "{}%"), or_dash(d.xid_errors_total)});
    }
    out += render_columns(
        rows, {true, false, false, true, true, true, true, true, true, true, true, true, true, true, true});
    std::vector<std::string> without;
    for (const DeviceSample& d : snap.devices) {
      if (!d.lost && d.error.empty() && !d.gpm_supported && !snap.system.gpm_off) {
        without.push_back(std::to_string(d.index));
      }
    }
    if (!without.empty()) {
      out += fmt::format(
          "SM, Tensor, DRAM: NVML GPM profiling counters, not on GPU {} (they need a Hopper or newer GPU and "
          "driver R520+)\n",
          fmt::join(without, ", "));
    }
    out += render_mig_instances(snap);
  }

  if (processes) {
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"GPU", "PID", "Type", "Process", "Container", "Memory MiB", "SM", "Mem", "Enc", "Dec"});
    for (const ProcessSample& p : snap.processes) {
      rows.push_back(
          {fmt::format("{}", p.gpu_index), fmt::format("{}", p.pid), process_type(p),
           p.name.empty() ? "-" : p.name, p.container_id.empty() ? "-" : p.container_id.substr(0, 12),
           format_mib(p.used_memory_bytes), or_dash(p.sm_utilization_percent, "{}%"),
           or_dash(p.memory_utilization_percent, "{}%"), or_dash(p.encoder_utilization_percent, "{}%"),
           or_dash(p.decoder_utilization_percent, "{}%")});
    }
    out += '\n';
    if (snap.processes.empty()) {
      out += "No processes on the GPUs\n";
    } else {
      out += render_columns(rows, {true, true, false, false, false, true, true, true, true, true});
    }
  }

  for (const DeviceSample& d : snap.devices) {
    if (d.lost) {
      out += fmt::format("GPU {}: lost ({}): reset the GPU or reboot\n", d.index, d.error);
    } else if (!d.error.empty()) {
      out += fmt::format("GPU {}: {}\n", d.index, d.error);
    }
    for (const std::string& e : d.field_errors) out += fmt::format("GPU {}: {}\n", d.index, e);
  }
  for (const std::string& e : snap.errors) out += e + "\n";
  return out;
}

json device_json(const DeviceSample& d) {
  json reasons = nullptr;
  if (d.clock_event_reasons) reasons = clock_event_reason_names(*d.clock_event_reasons);
  json j{
      {"index", d.index},
      {"name", d.name},
      {"uuid", d.uuid},
      {"pci_bus_id", d.pci_bus_id},
      {"lost", d.lost},
      {"error", d.error.empty() ? json(nullptr) : json(d.error)},
      {"field_errors", d.field_errors},
      {"utilization_gpu_percent", opt(d.utilization_gpu_percent)},
      {"utilization_memory_percent", opt(d.utilization_memory_percent)},
      {"memory_total_bytes", opt(d.memory_total_bytes)},
      {"memory_used_bytes", opt(d.memory_used_bytes)},
      {"memory_free_bytes", opt(d.memory_free_bytes)},
      {"memory_reserved_bytes", opt(d.memory_reserved_bytes)},
      {"temperature_gpu_celsius", opt(d.temperature_gpu_celsius)},
      {"temperature_memory_celsius", opt(d.temperature_memory_celsius)},
      {"power_usage_milliwatts", opt(d.power_usage_milliwatts)},
      {"power_limit_milliwatts", opt(d.power_limit_milliwatts)},
      {"energy_total_millijoules", opt(d.energy_total_millijoules)},
      {"clock_sm_mhz", opt(d.clock_sm_mhz)},
      {"clock_memory_mhz", opt(d.clock_memory_mhz)},
      {"fan_speed_percent", opt(d.fan_speed_percent)},
      {"encoder_utilization_percent", opt(d.encoder_utilization_percent)},
      {"decoder_utilization_percent", opt(d.decoder_utilization_percent)},
      {"pcie_tx_bytes_per_second", opt(d.pcie_tx_bytes_per_second)},
      {"pcie_rx_bytes_per_second", opt(d.pcie_rx_bytes_per_second)},
      {"pcie_replay_total", opt(d.pcie_replay_total)},
      {"nvlink_tx_bytes_total", opt(d.nvlink_tx_bytes_total)},
      {"nvlink_rx_bytes_total", opt(d.nvlink_rx_bytes_total)},
      {"ecc_corrected_volatile_total", opt(d.ecc_corrected_volatile_total)},
      {"ecc_uncorrected_volatile_total", opt(d.ecc_uncorrected_volatile_total)},
      {"remapped_rows_correctable", opt(d.remapped_rows_correctable)},
      {"remapped_rows_uncorrectable", opt(d.remapped_rows_uncorrectable)},
      {"remapped_rows_pending", opt(d.remapped_rows_pending)},
      {"remapped_rows_failure", opt(d.remapped_rows_failure)},
      {"clock_event_reasons", opt(d.clock_event_reasons)},
      {"clock_event_reason_names", reasons},
      {"xid_errors_total", opt(d.xid_errors_total)},
      {"last_xid", opt(d.last_xid)},
      {"gpm_supported", d.gpm_supported},
      {"gpm", d.gpm ? gpm_json(*d.gpm) : json(nullptr)},
  };
  // Only for GPUs in MIG mode, so that the document of every other GPU stays as it was.
  if (d.gpm_mig) j["gpm_instances"] = instances_json(d);
  return j;
}

json process_json(const ProcessSample& p) {
  return json{
      {"pid", p.pid},
      {"gpu", p.gpu_index},
      {"gpu_uuid", p.gpu_uuid},
      {"name", p.name.empty() ? json(nullptr) : json(p.name)},
      {"container_id", p.container_id.empty() ? json(nullptr) : json(p.container_id)},
      {"type", process_type(p)},
      {"used_memory_bytes", opt(p.used_memory_bytes)},
      {"sm_utilization_percent", opt(p.sm_utilization_percent)},
      {"memory_utilization_percent", opt(p.memory_utilization_percent)},
      {"encoder_utilization_percent", opt(p.encoder_utilization_percent)},
      {"decoder_utilization_percent", opt(p.decoder_utilization_percent)},
  };
}

std::string render_gpu_json(const GpuSnapshot& snap, bool processes, int indent) {
  json gpus = json::array();
  for (const DeviceSample& d : snap.devices) gpus.push_back(device_json(d));
  json doc = {
      {"time", iso_time(snap.time)},
      {"sequence", snap.sequence},
      {"pass_cpu_seconds", std::chrono::duration<double>(snap.pass_cpu_time).count()},
      {"driver_version",
       snap.system.driver_version.empty() ? json(nullptr) : json(snap.system.driver_version)},
      {"cuda_driver_version", snap.system.cuda_driver_version
                                  ? json(format_cuda_version(*snap.system.cuda_driver_version))
                                  : json(nullptr)},
      {"gpus", std::move(gpus)},
  };
  if (processes) {
    json procs = json::array();
    for (const ProcessSample& p : snap.processes) procs.push_back(process_json(p));
    doc["processes"] = std::move(procs);
  }
  doc["errors"] = snap.errors;
  return json_text(doc, indent) + "\n";
}

std::string render_gpu_error_json(std::string_view error, bool processes, int indent) {
  json doc = {{"error", std::string(error)}, {"gpus", json::array()}};
  if (processes) doc["processes"] = json::array();
  return json_text(doc, indent) + "\n";
}

}  // namespace eacgm::exporting
