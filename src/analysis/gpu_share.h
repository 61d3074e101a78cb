// Each workload's share of a GPU's utilisation, for GPUs that several processes (pods)
// share by time-slicing or MPS, where NVML's device utilisation is one figure for all.
// The GPU's utilisation is divided in proportion to a weight per process, taken from the
// best source the GPU has:
//   1. NVML's per-process SM utilisation samples (nvmlDeviceGetProcessUtilization), when
//      any process on the GPU has a non-zero one ("nvml");
//   2. else the kernel launches eacgm traced for each process over the agent's window,
//      a process on several GPUs counted evenly on each ("launches");
//   3. else evenly among the processes with a context on the GPU ("even").
// The shares of a GPU sum to its utilisation by construction; each says which basis it
// came from, so a reader knows how far to trust it (docs/kubernetes.md, "Shared GPUs").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace eacgm::analysis {

struct GpuShareInput {
  unsigned gpu = 0;
  std::optional<double> utilization_percent;  // the device's; no shares without it
  struct Process {
    std::uint32_t pid = 0;
    std::string workload;  // what the share is summed by (a pod's "namespace/name"); "" none
    std::optional<std::uint32_t> sm_percent;  // NVML's per-process sample
    double launches = 0;                      // traced kernel launches counted on this GPU
  };
  std::vector<Process> processes;
};

struct GpuShare {
  unsigned gpu = 0;
  std::string workload;    // "" for the processes in no workload, together
  double percent = 0;      // of the GPU's time; the GPU's rows sum to its utilisation
  const char* basis = "";  // "nvml", "launches" or "even"
};

// One row per (GPU, workload) with processes on the GPU, GPUs in input order and
// workloads sorted.
std::vector<GpuShare> gpu_shares(const std::vector<GpuShareInput>& gpus);

}  // namespace eacgm::analysis
