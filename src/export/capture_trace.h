// The document an on-demand capture answers with: a Perfetto/Chrome JSON trace in
// Kineto's conventions (named process and thread tracks, calls as nested complete
// events with their arguments, GPU counters, anomalies and Python samples as instants)
// and an `eacgm_capture` object that says what the window was and what was left out.
#pragma once

#include <string>
#include <vector>

#include "analysis/anomaly_detector.h"
#include "core/capture.h"

namespace eacgm::exporting {

// `anomalies`: the detector's recent ones; those of the captured process inside the
// window are written. `limits` are the caps the capture ran under (said in the trace).
std::string capture_trace_json(const CapturedWindow& window, const std::vector<analysis::Anomaly>& anomalies,
                               const CaptureControl::Limits& limits);

}  // namespace eacgm::exporting
