// The host-wait families of /metrics: per traced process and wait kind the waits and the
// time spent in them, and per kind the distribution of the waits' durations.
#pragma once

#include <cstdint>

#include "analysis/analysis_snapshot.h"
#include "export/call_metrics.h"

namespace eacgm::exporting {

// The processes past `max_processes` (those with the least time waiting), which
// append_host_wait_metrics folds into pid="other" per kind.
std::uint64_t host_wait_processes_folded(const analysis::AnalysisSnapshot& snap, std::size_t max_processes);

// Processes past options.max_process_series are folded into pid="other" (per kind).
void append_host_wait_metrics(ExpositionWriter& out, const analysis::AnalysisSnapshot& snap,
                              const CallMetricsOptions& options);

}  // namespace eacgm::exporting
