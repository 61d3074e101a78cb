// eacgm_gpu_health_events_total: the GPU health events per GPU and kind since the start
// (analysis/gpu_health.h), so an alert fires on an XID or an uncorrected ECC error.
#pragma once

#include "analysis/gpu_health.h"
#include "core/prometheus_text.h"
#include "export/dcgm_metrics.h"

namespace eacgm::exporting {

// Nothing before the first event.
void append_gpu_health_metrics(ExpositionWriter& out, const analysis::GpuHealthSummary& health,
                               const GpuSystemInfo& system, const GpuMetricsOptions& options);

}  // namespace eacgm::exporting
