// The in-flight families of /metrics: per (domain, function) the age of its oldest call in
// flight, and per traced process the age of its oldest one, of the calls listed in flight
// ([hangs] min_age_s and older). A series exists while such a call does.
#pragma once

#include "analysis/analysis_snapshot.h"
#include "export/call_metrics.h"

namespace eacgm::exporting {

// At most options.max_function_series functions and options.max_process_series
// processes, those with the oldest calls; the others are left out.
void append_inflight_metrics(ExpositionWriter& out, const analysis::AnalysisSnapshot& snap,
                             const CallMetricsOptions& options);

}  // namespace eacgm::exporting
