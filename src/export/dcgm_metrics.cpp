#include "export/dcgm_metrics.h"

#include <optional>
#include <string>
#include <variant>

#include "export/merged_series.h"
#include "export/metrics_table.h"
#include "export/workload_labels.h"

namespace eacgm::exporting {
namespace {

using Value = std::variant<std::monostate, std::uint64_t, double>;

template <typename T>
Value u(const std::optional<T>& v) {
  return v ? Value{static_cast<std::uint64_t>(*v)} : Value{};
}
template <typename T>
Value scaled(const std::optional<T>& v, double divisor) {
  return v ? Value{static_cast<double>(*v) / divisor} : Value{};
}
Value mib(const std::optional<std::uint64_t>& bytes) { return bytes ? Value{*bytes >> 20} : Value{}; }
Value ratio(const std::optional<double>& v) { return v ? Value{*v} : Value{}; }
Value flag(const std::optional<bool>& v) { return v ? Value{std::uint64_t{*v ? 1u : 0u}} : Value{}; }

// A profiling field (DCGM_FI_PROF_*) from the GPU's GPM counters.
Value gpm_value(std::string_view name, const GpmCounters& c) {
  if (name == "DCGM_FI_PROF_GR_ENGINE_ACTIVE") return ratio(c.graphics_active);
  if (name == "DCGM_FI_PROF_SM_ACTIVE") return ratio(c.sm_active);
  if (name == "DCGM_FI_PROF_SM_OCCUPANCY") return ratio(c.sm_occupancy);
  if (name == "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE") return ratio(c.tensor_active);
  if (name == "DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE") return ratio(c.tensor_hmma_active);
  if (name == "DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE") return ratio(c.tensor_imma_active);
  if (name == "DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE") return ratio(c.tensor_dfma_active);
  if (name == "DCGM_FI_PROF_PIPE_FP64_ACTIVE") return ratio(c.fp64_active);
  if (name == "DCGM_FI_PROF_PIPE_FP32_ACTIVE") return ratio(c.fp32_active);
  if (name == "DCGM_FI_PROF_PIPE_FP16_ACTIVE") return ratio(c.fp16_active);
  if (name == "DCGM_FI_PROF_DRAM_ACTIVE") return ratio(c.dram_active);
  if (name == "DCGM_FI_PROF_PCIE_TX_BYTES") return ratio(c.pcie_tx_bytes_per_second);
  if (name == "DCGM_FI_PROF_PCIE_RX_BYTES") return ratio(c.pcie_rx_bytes_per_second);
  if (name == "DCGM_FI_PROF_NVLINK_TX_BYTES") return ratio(c.nvlink_tx_bytes_per_second);
  if (name == "DCGM_FI_PROF_NVLINK_RX_BYTES") return ratio(c.nvlink_rx_bytes_per_second);
  return {};
}

// The value of a GPU family for one device; monostate when absent.
Value device_value(std::string_view name, const DeviceSample& d) {
  if (name == "eacgm_gpu_lost") return std::uint64_t{d.lost ? 1u : 0u};
  if (d.lost) return {};
  if (name == "DCGM_FI_DEV_GPU_UTIL") return u(d.utilization_gpu_percent);
  if (name == "DCGM_FI_DEV_MEM_COPY_UTIL") return u(d.utilization_memory_percent);
  if (name == "DCGM_FI_DEV_ENC_UTIL") return u(d.encoder_utilization_percent);
  if (name == "DCGM_FI_DEV_DEC_UTIL") return u(d.decoder_utilization_percent);
  if (name == "DCGM_FI_DEV_FB_FREE") return mib(d.memory_free_bytes);
  if (name == "DCGM_FI_DEV_FB_USED") return mib(d.memory_used_bytes);
  if (name == "DCGM_FI_DEV_FB_RESERVED") return mib(d.memory_reserved_bytes);
  if (name == "DCGM_FI_DEV_GPU_TEMP") return u(d.temperature_gpu_celsius);
  if (name == "DCGM_FI_DEV_MEMORY_TEMP") return u(d.temperature_memory_celsius);
  if (name == "DCGM_FI_DEV_POWER_USAGE") return scaled(d.power_usage_milliwatts, 1000.0);
  if (name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION") return u(d.energy_total_millijoules);
  if (name == "DCGM_FI_DEV_SM_CLOCK") return u(d.clock_sm_mhz);
  if (name == "DCGM_FI_DEV_MEM_CLOCK") return u(d.clock_memory_mhz);
  if (name == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER") return u(d.pcie_replay_total);
  if (name == "DCGM_FI_DEV_XID_ERRORS") {
    // dcgm-exporter shows 0 until the first XID; absent where events are unsupported.
    return d.xid_errors_total ? Value{d.last_xid.value_or(0)} : Value{};
  }
  if (name == "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL") return u(d.ecc_corrected_volatile_total);
  if (name == "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL") return u(d.ecc_uncorrected_volatile_total);
  if (name == "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS") return u(d.remapped_rows_correctable);
  if (name == "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS") return u(d.remapped_rows_uncorrectable);
  if (name == "DCGM_FI_DEV_ROW_REMAP_FAILURE") return flag(d.remapped_rows_failure);
  if (d.gpm && name.starts_with("DCGM_FI_PROF_")) return gpm_value(name, *d.gpm);
  if (name == "eacgm_gpu_memory_total_bytes") return u(d.memory_total_bytes);
  if (name == "eacgm_gpu_power_limit_watts") return scaled(d.power_limit_milliwatts, 1000.0);
  if (name == "eacgm_gpu_fan_speed_ratio") return scaled(d.fan_speed_percent, 100.0);
  if (name == "eacgm_gpu_pcie_tx_bytes_per_second") return u(d.pcie_tx_bytes_per_second);
  if (name == "eacgm_gpu_pcie_rx_bytes_per_second") return u(d.pcie_rx_bytes_per_second);
  if (name == "eacgm_gpu_nvlink_tx_bytes_total") return u(d.nvlink_tx_bytes_total);
  if (name == "eacgm_gpu_nvlink_rx_bytes_total") return u(d.nvlink_rx_bytes_total);
  if (name == "eacgm_gpu_xid_errors_total") return u(d.xid_errors_total);
  return {};
}

Value process_value(std::string_view name, const ProcessSample& p) {
  if (name == "eacgm_process_gpu_memory_bytes") return u(p.used_memory_bytes);
  if (name == "eacgm_process_sm_utilization_ratio") return scaled(p.sm_utilization_percent, 100.0);
  if (name == "eacgm_process_memory_utilization_ratio") return scaled(p.memory_utilization_percent, 100.0);
  return {};
}

void put(ExpositionWriter& out, const Labels& labels, const Value& v) {
  if (const auto* i = std::get_if<std::uint64_t>(&v)) out.add(labels, *i);
  if (const auto* d = std::get_if<double>(&v)) out.add(labels, *d);
}

// One series per GPU and NVLink that GPM reports traffic for.
void append_link_family(ExpositionWriter& out, const MetricDef& def, const GpuSnapshot& snap,
                        const std::vector<Labels>& labels) {
  const bool tx = def.name == "eacgm_gpu_nvlink_link_tx_bytes_per_second";
  out.begin_family(family_of(def));
  for (std::size_t i = 0; i < snap.devices.size(); ++i) {
    const DeviceSample& d = snap.devices[i];
    if (d.lost || !d.gpm) continue;
    for (const NvlinkRate& link : d.gpm->nvlinks) {
      Labels l = labels[i];
      l.push_back({"link", std::to_string(link.link)});
      out.add(l, tx ? link.tx_bytes_per_second : link.rx_bytes_per_second);
    }
  }
}

}  // namespace

Labels gpu_labels(const DeviceSample& gpu, const GpuSystemInfo& system, const GpuMetricsOptions& options,
                  LabelStyle style) {
  // dcgm-exporter's contract for DCGM_FI_*; Prometheus's snake_case for eacgm's own.
  const bool dcgm = style == LabelStyle::kDcgm;
  Labels l{{"gpu", std::to_string(gpu.index)},
           {dcgm ? "UUID" : "uuid", gpu.uuid},
           {"pci_bus_id", gpu.pci_bus_id},
           {"device", "nvidia" + std::to_string(gpu.index)},
           {dcgm ? "modelName" : "model_name", gpu.name}};
  if (!options.hostname.empty()) l.push_back({dcgm ? "Hostname" : "hostname", options.hostname});
  if (!system.driver_version.empty()) {
    l.push_back({dcgm ? "DCGM_FI_DRIVER_VERSION" : "driver_version", system.driver_version});
  }
  if (options.pod_of_gpu) {
    if (auto pod = options.pod_of_gpu(gpu)) {
      l.push_back({"container", pod->container});
      l.push_back({"namespace", pod->namespace_});
      l.push_back({"pod", pod->pod});
    }
  }
  return l;
}

void append_gpu_metrics(ExpositionWriter& out, const GpuSnapshot& snap, const GpuMetricsOptions& options) {
  std::vector<Labels> dcgm_labels, own_labels;
  dcgm_labels.reserve(snap.devices.size());
  own_labels.reserve(snap.devices.size());
  for (const auto& d : snap.devices) {
    dcgm_labels.push_back(gpu_labels(d, snap.system, options, LabelStyle::kDcgm));
    own_labels.push_back(gpu_labels(d, snap.system, options, LabelStyle::kEacgm));
  }
  for (const auto& def : metric_table()) {
    if (def.labels == LabelSet::kGpuLink) {
      append_link_family(out, def, snap, own_labels);
      continue;
    }
    if (def.labels != LabelSet::kGpu) continue;
    const auto& labels = def.name.starts_with("DCGM_") ? dcgm_labels : own_labels;
    const bool profiling = def.name.starts_with("DCGM_FI_PROF_");
    out.begin_family(family_of(def));
    for (std::size_t i = 0; i < snap.devices.size(); ++i) {
      const DeviceSample& d = snap.devices[i];
      put(out, labels[i], device_value(def.name, d));
      if (!profiling || d.lost) continue;
      for (const GpmInstanceCounters& in : d.gpm_instances) {
        put(out, mig_instance_labels(labels[i], in), gpm_value(def.name, in.counters));
      }
    }
  }
}

Labels mig_instance_labels(const Labels& gpu, const GpmInstanceCounters& instance) {
  // After modelName, where dcgm-exporter's template puts them.
  Labels l;
  l.reserve(gpu.size() + 2);
  for (const auto& label : gpu) {
    l.push_back(label);
    if (label.name == "modelName") {
      l.push_back({"GPU_I_PROFILE", instance.profile});
      l.push_back({"GPU_I_ID", std::to_string(instance.gpu_instance_id)});
    }
  }
  return l;
}

void append_process_metrics(ExpositionWriter& out, const GpuSnapshot& snap,
                            const GpuMetricsOptions& options) {
  std::vector<Labels> labels;
  labels.reserve(snap.processes.size());
  for (const auto& p : snap.processes) {
    sample::Workload w;
    if (options.workload_of_pid) w = options.workload_of_pid(p.pid);
    Labels l;
    if (!options.pod_series || w.pod.empty()) l = {{"pid", std::to_string(p.pid)}, {"comm", p.name}};
    l.push_back({"gpu", std::to_string(p.gpu_index)});
    l.push_back({"uuid", p.gpu_uuid});
    if (!p.container_id.empty() && w.pod.empty()) l.push_back({"container_id", p.container_id});
    if (options.rank_of_pid) {
      const sample::RankInfo r = options.rank_of_pid(p.pid);
      if (r.rank) l.push_back({"rank", std::to_string(*r.rank)});
      if (r.local_rank) l.push_back({"local_rank", std::to_string(*r.local_rank)});
      if (r.world_size) l.push_back({"world_size", std::to_string(*r.world_size)});
    }
    add_workload_labels(l, w);
    labels.push_back(std::move(l));
  }
  for (const auto& def : metric_table()) {
    if (def.labels != LabelSet::kProcess) continue;
    out.begin_family(family_of(def));
    MergedSeries merged;  // one container's processes on one GPU: summed
    for (std::size_t i = 0; i < snap.processes.size(); ++i) {
      const Value v = process_value(def.name, snap.processes[i]);
      if (const auto* n = std::get_if<std::uint64_t>(&v)) merged.add(labels[i], *n);
      if (const auto* d = std::get_if<double>(&v)) merged.add(labels[i], *d);
    }
    merged.write(out);
  }
}

}  // namespace eacgm::exporting
