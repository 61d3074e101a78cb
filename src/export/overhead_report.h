// The probes' estimated cost (core/probe_cost.h) as `eacgm run` shows it: a few
// lines of text, and the `overhead` object of the JSON report and the API.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "core/probe_cost.h"

namespace eacgm::exporting {

// "probe overhead" and one line per process (the costliest first, at most `max_rows`);
// empty when nothing was estimated (per-call mode, or no calibration).
std::string render_overhead(const OverheadReport& report, std::size_t max_rows = 10);

// {"calibrated", "sessions", "hit_cost_ns": {...}, "budget", "over_budget", "at_entry_floor",
//  "reduced_probes", "max_sample_shift", "processes": [...]} (docs/report.md).
nlohmann::json overhead_json(const OverheadReport& report);

}  // namespace eacgm::exporting
