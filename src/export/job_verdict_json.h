// The job's hang verdict across nodes as JSON (analysis/job_verdict.h): the "job" object
// of `GET /api/v1/inflight` and `eacgm job --json` (docs/api.md, docs/cli.md).
#pragma once

#include <span>

#include "analysis/job_verdict.h"
#include "export/json_opt.h"

namespace eacgm::exporting {

// {"comm_id" (hex string),"nranks","name" (null when unknown),"instance","age_ns",
//  "in":[rank],"missing":[rank],"unreported":[N],"nodes":[name],"hang","start_ns",
//  "end_ns" (null while it lasts),"verdict"}; a rank is {"node","rank","pid","entered",
//  "finished","waiting_ns","collective" (null when none),"report_age_ns"}.
json job_comm_json(const analysis::JobCommVerdict& v);
json job_comms_json(std::span<const analysis::JobCommVerdict> verdicts);
// {"store","node","read_age_ns","other_ranks","communicators":[...],"ended":[...] (the
//  hangs over, oldest first),"hang_total"}.
json job_verdict_json(const analysis::JobVerdictSummary& s);

}  // namespace eacgm::exporting
