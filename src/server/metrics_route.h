// What one /metrics scrape of the daemon holds (docs/metrics.md), family group by group:
// the GPUs (DCGM_FI_* and eacgm_gpu_*) and the processes on them, the traced calls, the
// Python hot spots, the agent's counters, the agent process itself and the server's own
// counters.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "analysis/analysis_snapshot.h"
#include "core/counter_registry.h"
#include "core/prometheus_text.h"
#include "history/history_writer.h"
#include "sample/pod_directory.h"
#include "sample/process_facts.h"
#include "server/serve_config.h"

namespace eacgm::server {

struct MetricsOptions {
  bool dcgm_metrics = true;  // the DCGM_FI_* families
  std::size_t max_function_series = 2000;
  std::size_t max_process_series = 500;
  std::size_t max_histogram_series = 200;
  std::string hostname;           // the `Hostname` label of the GPU families
  double start_time_seconds = 0;  // eacgm_agent_start_time_seconds
  // The trace mode now ("always-on", "per-call"; a reload may change it): eacgm_build_info.
  std::function<std::string()> mode;
  std::shared_ptr<const sample::ProcessFacts> facts;  // rank and workload labels; null: none
  // The pods holding each GPU (DCGM_FI_* get the pod's labels when one container holds
  // it, as dcgm-exporter's); null: no pod labels on the GPU families.
  std::shared_ptr<sample::PodDirectory> pods;
  bool pod_series = true;  // [kubernetes] process_series = "auto"
  // The history writer's counters (eacgm_store_*); null while no store is kept.
  std::function<history::StoreStats()> store;

  // [serve]'s caps and switches.
  static MetricsOptions from(const ServeConfig& serve);
};

// Writes the scrape: the families of `snap` (none while it is null), the agent process's
// own and then `server_counters`.
void write_metrics(ExpositionWriter& out, const analysis::AnalysisSnapshot* snap,
                   const MetricsOptions& options, const CounterValues& server_counters);

}  // namespace eacgm::server
