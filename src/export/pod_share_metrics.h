// eacgm_pod_gpu_share_ratio: each pod's share of each GPU's time (analysis/gpu_share.h)
// from the latest sampling pass, the traced kernel launches and the processes' pods.
#pragma once

#include <cstdint>
#include <functional>

#include "analysis/analysis_snapshot.h"
#include "core/prometheus_text.h"
#include "sample/workload.h"

namespace eacgm::exporting {

// Nothing unless some process on a GPU is in a named pod.
void append_pod_share_metrics(ExpositionWriter& out, const analysis::AnalysisSnapshot& snap,
                              const std::function<sample::Workload(std::uint32_t pid)>& workload_of);

}  // namespace eacgm::exporting
