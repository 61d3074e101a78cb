// The waiting calls in flight as JSON: `GET /api/v1/inflight` and `eacgm run --json`'s
// "in_flight" (docs/api.md, docs/report.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "analysis/inflight_calls.h"
#include "export/api_json.h"
#include "export/gpu_json.h"

namespace eacgm::exporting {

// {"min_age_ns":N,"in_flight":N,"calls":[{"pid","tid","comm","rank","domain","name",
//  "age_ns","ts_ns","args":{...}}],"over_cap":N}: the calls at least min_age_ns old at
// the scan, oldest first; `rank` is the process's (options.rank_of_pid), else the NCCL
// communicator's the call runs on, else null; `args` as in the events (docs/events.md),
// with what the entry did not read null; "python_stack" (innermost first: the call, then
// the Python frames; export/python_stack_text.h) when the thread's stack was read.
json inflight_json(const analysis::InflightSummary& inflight, const ApiOptions& options);

// The route's document: the snapshot's time and sequence, then inflight_json's fields and
// the hang diagnosis's (export/hang_json.h hangs_json), and "job" (job_verdict_json).
json inflight_doc(const analysis::AnalysisSnapshot& snap, const ApiOptions& options);
std::string api_inflight(const analysis::AnalysisSnapshot& snap, const ApiOptions& options);

// The Python stack of each of `pids` waiting in a call: its oldest call in flight whose
// thread's stack was read, {"pid","tid","name","age_ns","python_stack"}; a pid with none is
// left out. `GET /api/v1/inflight/stacks?pids=` and the job verdict's stacks.
json inflight_stacks_json(const analysis::InflightSummary& inflight, std::span<const std::uint32_t> pids);

}  // namespace eacgm::exporting
