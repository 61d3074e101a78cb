// An analysis snapshot as Prometheus families: per (domain, function) calls, errors,
// nested calls and duration histograms; per traced process calls and errors; the NCCL
// families (nccl_metrics.h); and the agent's own CPU and memory. Cardinality is capped:
// the functions and processes past the caps are folded into one `other` series and
// counted.
#pragma once

#include <cstdint>
#include <functional>

#include "analysis/analysis_snapshot.h"
#include "analysis/latency_sketch.h"
#include "core/prometheus_text.h"
#include "sample/process_env.h"
#include "sample/workload.h"

namespace eacgm::exporting {

struct CallMetricsOptions {
  std::size_t max_function_series = 2000;
  std::size_t max_process_series = 500;
  // Duration histograms only for this many functions (the ones with the most time, in
  // rows() order); the others keep their counts. A histogram is 27 series.
  std::size_t max_histogram_series = 200;
  // Rank labels of a traced process (cached by the caller); unset: none.
  std::function<sample::RankInfo(std::uint32_t pid)> rank_of_pid;
  // Its container, pod and job (export/workload_labels.h); unset: none.
  std::function<sample::Workload(std::uint32_t pid)> workload_of_pid;
  // A process in a named pod: its series carry the pod's labels instead of pid and comm,
  // and the processes of one container (and rank) merge into one series (`[kubernetes]
  // process_series = "auto"`); false: pid and comm always, the pod's labels added.
  bool pod_series = true;
};

// The `le` bounds of eacgm_call_duration_seconds, in seconds: 1-2.5-5 steps from 1 us
// to 50 s. Fixed, so series stay comparable across scrapes and nodes.
std::span<const double> call_duration_bounds();

// Folds a sketch into call_duration_bounds() (per-bucket counts, not cumulative): each
// sketch bucket goes to the first bound at or above its representative value, so a
// count lands on the right side of a bound unless the value is within 1% of it.
std::vector<HistogramBucket> fold_sketch(const analysis::LatencySketch& sketch);

void append_call_metrics(ExpositionWriter& out, const analysis::AnalysisSnapshot& snap,
                         const CallMetricsOptions& options);

}  // namespace eacgm::exporting
