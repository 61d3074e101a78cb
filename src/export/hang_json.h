// The hang diagnosis as JSON (analysis/hang_diagnosis.h): in `GET /api/v1/inflight`,
// `eacgm run --json`'s "in_flight", and as anomalies of kind "hang" in
// `GET /api/v1/anomalies` (docs/api.md, docs/report.md).
#pragma once

#include "analysis/hang_diagnosis.h"
#include "export/gpu_json.h"

namespace eacgm::exporting {

// {"kind":"hang","rule","over","start_ns","end_ns" (null while it lasts),"age_ns",
//  "comm_id" (hex string, null when none),"domain","name","instance" (null for the age
//  rule),"pid","tid" (null for the communicator rule),"rank" (null when unknown),
//  "missing_ranks","waiting_ranks","python_stacks":[{"rank","pid","tid","in_call","in_call_ns",
//  "python_stack"}] (the threads in a call whose Python stack was read: Hang::stacks),
//  "verdict"}
json hang_json(const analysis::Hang& hang);
// {"communicators":[{"comm_id","nranks","name","instance","age_ns","in":[rank...],
//  "missing":[rank...],"unseen":[...],"hang","verdict"}],"hangs":[hang_json, the current
//  ones, oldest first],"hang_total"}; a rank is {"rank","pid","exited","in_call" (null when
//  none),"in_call_ns","last_entered" (null when none),"last_instance"}, with "tid" and
//  "python_stack" (innermost first, export/python_stack_text.h) when its stack was read.
json hangs_json(const analysis::HangSummary& hangs);
// The hangs as anomalies: the ended ones kept (oldest first), then the current ones.
json hang_anomalies_json(const analysis::HangSummary& hangs);

}  // namespace eacgm::exporting
