// A GpuSnapshot as Prometheus families: dcgm-exporter's names, units and labels for the
// fields it exports by default (so its Grafana dashboards and alerts work unchanged),
// eacgm_gpu_* for the rest, and eacgm_process_* per (process, GPU). Families and help
// come from metrics_table.h; an absent field writes no sample.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/gpu_sample.h"
#include "core/prometheus_text.h"
#include "sample/process_env.h"
#include "sample/workload.h"

namespace eacgm::exporting {

// The Kubernetes workload a GPU is assigned to.
struct PodLabels {
  std::string pod;
  std::string namespace_;
  std::string container;
};

struct GpuMetricsOptions {
  // The `Hostname` label; omitted when empty (as dcgm-exporter does).
  std::string hostname;
  // Hook for Kubernetes attribution (pod resources API, or the containers of the
  // processes on the GPU); unset or nullopt: no container/pod/namespace labels.
  std::function<std::optional<PodLabels>(const DeviceSample&)> pod_of_gpu;
  // Rank labels of a process; unset or an empty RankInfo: none. read_rank_info (from
  // sample/process_env.h) is the usual source, ideally cached per pid by the caller.
  std::function<sample::RankInfo(std::uint32_t pid)> rank_of_pid;
  // The per-process GPU families: a process's workload labels, and pod labels instead of
  // pid/comm for processes in named pods (summed per container), as CallMetricsOptions.
  std::function<sample::Workload(std::uint32_t pid)> workload_of_pid;
  bool pod_series = true;
};

// dcgm-exporter's label names (`UUID`, `modelName`, `Hostname`, `DCGM_FI_DRIVER_VERSION`)
// for the DCGM_FI_* families, whose dashboards expect them; Prometheus's snake_case
// (`uuid`, `model_name`, `hostname`, `driver_version`) for eacgm's own.
enum class LabelStyle { kDcgm, kEacgm };

// The labels of one GPU's series, in dcgm-exporter's order.
Labels gpu_labels(const DeviceSample& gpu, const GpuSystemInfo& system, const GpuMetricsOptions& options,
                  LabelStyle style = LabelStyle::kDcgm);

// A MIG GPU instance's labels on the DCGM_FI_PROF_* families: its GPU's (dcgm style) with
// dcgm-exporter's `GPU_I_PROFILE` and `GPU_I_ID` after `modelName`.
Labels mig_instance_labels(const Labels& gpu, const GpmInstanceCounters& instance);

// Device families (DCGM_FI_* and eacgm_gpu_*), family by family over all GPUs; a GPU in MIG
// mode has one series per GPU instance in the DCGM_FI_PROF_* families.
void append_gpu_metrics(ExpositionWriter& out, const GpuSnapshot& snap, const GpuMetricsOptions& options);

// eacgm_process_* families for snap.processes.
void append_process_metrics(ExpositionWriter& out, const GpuSnapshot& snap, const GpuMetricsOptions& options);

}  // namespace eacgm::exporting
