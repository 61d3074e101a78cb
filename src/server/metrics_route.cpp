// The /metrics composition, in the order scrapes have always had it (dashboards and
// golden files depend on it only loosely, Prometheus not at all).
#include "server/metrics_route.h"

#include "analysis/python_profile.h"
#include "core/gpu_sample.h"
#include "export/agent_metrics.h"
#include "export/call_metrics.h"
#include "export/dcgm_metrics.h"
#include "export/gpu_health_metrics.h"
#include "export/metrics_table.h"
#include "export/pod_share_metrics.h"
#include "export/python_metrics.h"
#include "export/store_metrics.h"

namespace eacgm::server {

MetricsOptions MetricsOptions::from(const ServeConfig& serve) {
  MetricsOptions m;
  m.dcgm_metrics = serve.dcgm_metrics;
  m.max_function_series = serve.max_function_series;
  m.max_process_series = serve.max_process_series;
  m.max_histogram_series = serve.max_histogram_series;
  return m;
}

void write_metrics(ExpositionWriter& out, const analysis::AnalysisSnapshot* snap,
                   const MetricsOptions& options, const CounterValues& server_counters) {
  std::function<sample::RankInfo(std::uint32_t)> rank_of;
  std::function<sample::Workload(std::uint32_t)> workload_of;
  if (options.facts) {
    rank_of = [facts = options.facts](std::uint32_t pid) { return facts->rank(pid); };
    workload_of = [facts = options.facts](std::uint32_t pid) { return facts->workload(pid); };
  }
  const GpuSnapshot* pass = snap != nullptr ? snap->find<GpuSnapshot>() : nullptr;
  if (pass != nullptr) {
    exporting::GpuMetricsOptions gpu;
    gpu.hostname = options.hostname;
    gpu.rank_of_pid = rank_of;
    gpu.workload_of_pid = workload_of;
    gpu.pod_series = options.pod_series;
    if (options.pods) {
      gpu.pod_of_gpu = [pods = options.pods](const DeviceSample& d) -> std::optional<exporting::PodLabels> {
        const auto holders = pods->holders_of_gpu(d.uuid, d.index);
        // A GPU shared by several pods (time-slicing, MPS) is labelled with none of them:
        // eacgm_pod_gpu_share_ratio gives each pod's part.
        if (holders.size() != 1) return std::nullopt;
        return exporting::PodLabels{holders[0].pod, holders[0].namespace_, holders[0].container};
      };
    }
    if (options.dcgm_metrics) exporting::append_gpu_metrics(out, *pass, gpu);
    exporting::append_process_metrics(out, *pass, gpu);
    if (const auto* health = snap->find<analysis::GpuHealthSummary>())
      exporting::append_gpu_health_metrics(out, *health, pass->system, gpu);
    if (snap) exporting::append_pod_share_metrics(out, *snap, workload_of);
  }
  if (snap) {
    exporting::CallMetricsOptions calls;
    calls.max_function_series = options.max_function_series;
    calls.max_process_series = options.max_process_series;
    calls.max_histogram_series = options.max_histogram_series;
    calls.rank_of_pid = rank_of;
    calls.workload_of_pid = workload_of;
    calls.pod_series = options.pod_series;
    exporting::append_call_metrics(out, *snap, calls);
    if (const auto* python = snap->find<analysis::PythonHotSpots>())
      exporting::append_python_metrics(out, *python);
    exporting::append_counters(out, snap->counters);
  }
  exporting::AgentInfo agent;
  agent.start_time_seconds = options.start_time_seconds;
  agent.mode = options.mode ? options.mode() : std::string();
  agent.gpu_sampling = pass != nullptr;
  exporting::append_agent_metrics(out, agent);
  if (options.store) exporting::append_store_metrics(out, options.store());
  exporting::append_counters(out, server_counters);
}

}  // namespace eacgm::server
