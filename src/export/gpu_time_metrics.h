// The GPU-time families of /metrics: per kernel name, over the processes whose hook times
// their kernels (docs/gpu-time.md), the exact launches, the GPU durations of the timed
// ones (histogram) and the estimated GPU time; names past the cap in kernel="other".
#pragma once

#include <cstddef>

#include "analysis/analysis_snapshot.h"
#include "core/prometheus_text.h"

namespace eacgm::exporting {

void append_gpu_time_metrics(ExpositionWriter& out, const analysis::AnalysisSnapshot& snap,
                             std::size_t max_series);

}  // namespace eacgm::exporting
