// Pods' shares of the GPUs as a family (see pod_share_metrics.h).
#include "export/pod_share_metrics.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/gpu_share.h"
#include "analysis/gpu_work.h"
#include "core/gpu_sample.h"
#include "export/metrics_table.h"

namespace eacgm::exporting {

void append_pod_share_metrics(ExpositionWriter& out, const analysis::AnalysisSnapshot& snap,
                              const std::function<sample::Workload(std::uint32_t pid)>& workload_of) {
  const GpuSnapshot* last = snap.find<GpuSnapshot>();
  if (last == nullptr || !workload_of) return;
  const GpuSnapshot& pass = *last;
  // Traced kernel launches per process, spread evenly over the GPUs it is on.
  std::map<std::uint32_t, double> launches;
  for (const auto& row : snap.get<analysis::GpuWorkStats>().rows()) {
    if (row.kind == GpuWork::kKernel) launches[row.pid] += static_cast<double>(row.count);
  }
  std::map<std::uint32_t, unsigned> gpus_of_pid;
  for (const auto& p : pass.processes) ++gpus_of_pid[p.pid];
  std::map<unsigned, analysis::GpuShareInput> by_gpu;
  std::map<unsigned, double> sm_active_percent;                      // GPUs with GPM
  std::map<std::string, std::pair<std::string, std::string>> names;  // key -> (namespace, pod)
  bool any_pod = false;
  for (const auto& d : pass.devices) {
    if (d.lost) continue;
    auto& in = by_gpu[d.index];
    in.gpu = d.index;
    if (d.utilization_gpu_percent) in.utilization_percent = *d.utilization_gpu_percent;
    if (d.gpm && d.gpm->sm_active) sm_active_percent[d.index] = *d.gpm->sm_active * 100.0;
  }
  for (const auto& p : pass.processes) {
    auto it = by_gpu.find(p.gpu_index);
    if (it == by_gpu.end()) continue;
    const sample::Workload w = workload_of(p.pid);
    std::string key;
    if (!w.pod.empty()) {
      key = w.namespace_ + "/" + w.pod;
      names[key] = {w.namespace_, w.pod};
      any_pod = true;
    }
    const auto l = launches.find(p.pid);
    const double mine = l == launches.end() ? 0.0 : l->second / gpus_of_pid[p.pid];
    it->second.processes.push_back({p.pid, key, p.sm_utilization_percent, mine});
  }
  if (!any_pod) return;
  std::vector<analysis::GpuShareInput> inputs;
  inputs.reserve(by_gpu.size());
  for (auto& [index, in] : by_gpu) inputs.push_back(std::move(in));
  std::map<unsigned, std::string> uuid_of;
  for (const auto& d : pass.devices) uuid_of[d.index] = d.uuid;
  auto write = [&](const std::vector<analysis::GpuShare>& shares) {
    for (const auto& share : shares) {
      Labels l{{"gpu", std::to_string(share.gpu)}, {"uuid", uuid_of[share.gpu]}};
      if (!share.workload.empty()) {
        l.push_back({"pod", names[share.workload].second});
        l.push_back({"namespace", names[share.workload].first});
      }
      l.push_back({"basis", share.basis});
      out.add(l, share.percent / 100.0);
    }
  };
  begin_family(out, "eacgm_pod_gpu_share_ratio");
  write(analysis::gpu_shares(inputs));
  // The same division of the GPUs with GPM, of their SM activity: what the pods computed,
  // not only how long a kernel of theirs was resident.
  std::vector<analysis::GpuShareInput> sm_inputs;
  for (const auto& in : inputs) {
    const auto sm = sm_active_percent.find(in.gpu);
    if (sm == sm_active_percent.end()) continue;
    sm_inputs.push_back(in);
    sm_inputs.back().utilization_percent = sm->second;
  }
  begin_family(out, "eacgm_pod_sm_active_ratio");
  write(analysis::gpu_shares(sm_inputs));
}

}  // namespace eacgm::exporting
