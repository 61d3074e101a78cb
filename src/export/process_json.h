// The documents of one process and of the agent's overhead for the web UI's pages
// (docs/api.md: /api/v1/process, /api/v1/overhead, /api/v1/work), from one snapshot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "analysis/analysis_snapshot.h"

namespace eacgm::exporting {

// {"time_ns","sequence","pid","comm","functions":[...],"work":[{"stream","kind","name",
//  "direction","count","graph","errors","bytes"}],"waits":{"wall_ns","exited","waits":[...]}
//  or null,"overhead":{...} or null}: one process's functions (as /api/v1/functions), its
// GPU work by stream, its host waits and its probe overhead.
std::string api_process(const analysis::AnalysisSnapshot& snap, std::uint32_t pid);

// {"time_ns","sequence",...overhead object (docs/report.md)}: the budget, the duty cycle
// and each traced process's estimated probe cost.
std::string api_overhead(const analysis::AnalysisSnapshot& snap);

// {"time_ns","sequence","processes":[{"pid","comm","kernels","memsets","copies","errors"}]}:
// the GPU operations each process issued (totals), most kernels first.
std::string api_work(const analysis::AnalysisSnapshot& snap);

}  // namespace eacgm::exporting
