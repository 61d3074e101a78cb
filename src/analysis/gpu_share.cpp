// GPU utilisation divided among workloads (see gpu_share.h).
#include "analysis/gpu_share.h"

#include <map>

namespace eacgm::analysis {

std::vector<GpuShare> gpu_shares(const std::vector<GpuShareInput>& gpus) {
  std::vector<GpuShare> out;
  for (const GpuShareInput& g : gpus) {
    if (!g.utilization_percent || g.processes.empty()) continue;
    bool nvml = false;
    double launches = 0;
    for (const auto& p : g.processes) {
      nvml = nvml || p.sm_percent.value_or(0) > 0;
      launches += p.launches;
    }
    const char* basis = nvml ? "nvml" : launches > 0 ? "launches" : "even";
    std::map<std::string, double> weight;
    double total = 0;
    for (const auto& p : g.processes) {
      const double w = nvml ? static_cast<double>(p.sm_percent.value_or(0)) : launches > 0 ? p.launches : 1.0;
      weight[p.workload] += w;
      total += w;
    }
    for (const auto& [workload, w] : weight) {
      out.push_back(GpuShare{g.gpu, workload, total > 0 ? *g.utilization_percent * w / total : 0, basis});
    }
  }
  return out;
}

}  // namespace eacgm::analysis
