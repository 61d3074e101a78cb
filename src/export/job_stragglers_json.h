// Stragglers across a job's nodes as JSON (analysis/job_stragglers.h): `job_stragglers`
// of `GET /api/v1/nccl` and of `eacgm job --json` (docs/api.md, docs/cli.md).
#pragma once

#include <span>

#include "analysis/job_stragglers.h"
#include "export/json_opt.h"

namespace eacgm::exporting {

// [{"comm_id" (hex string),"nodes":[name],"instances","straggler" (rank, null when none),
//   "straggler_node" (null when none),"verdict","ranks":[{"node","rank","instances","last",
//   "mean_lateness_ns","uncertainty_ns" (null: a clock not measured)}]}]
json job_stragglers_json(std::span<const analysis::JobCommStragglers> comms);

}  // namespace eacgm::exporting
