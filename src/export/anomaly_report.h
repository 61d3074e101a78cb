// The anomaly detector's findings (analysis/anomaly_detector.h) as `eacgm run` shows
// them: a table of the latest slow calls and slow intervals, and the `anomalies` object
// of the JSON report and of the API.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "analysis/anomaly_detector.h"

namespace eacgm::exporting {

// "anomalies": the latest `max_rows` slow calls and intervals, newest last; empty when
// nothing was flagged.
std::string render_anomalies(const analysis::AnomalySummary& summary, std::size_t max_rows = 20);

// {"calls": [...], "intervals": [...], "total", "interval_total", "level_shifts",
//  "functions", "untracked_calls"} (docs/report.md).
nlohmann::json anomalies_json(const analysis::AnomalySummary& summary);

}  // namespace eacgm::exporting
