// Jobs over a window of the history (history::StoredJob: the processes that carried one
// batch job id, SLURM_JOB_ID or torchrun's run id, gathered across nodes by the store),
// with the ranks below their world size that none had, as /api/v1/history/jobs and
// `eacgm history` give them (the text table is export/history_tables.h's).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "history/history_query.h"

namespace eacgm::exporting {

// Ranks below world_size that no process of the job had: a rank that never came (or ran
// on a node that keeps no history in this store). None past 65536 ranks.
std::vector<long> missing_ranks(const history::StoredJob& job);

// [{"job","nodes","ranks","world_size","missing_ranks","pods","processes","running",
//   "calls","errors","first_ns","last_ns"}] (history_json.h's documents embed it).
nlohmann::ordered_json history_jobs_array(const std::vector<history::StoredJob>& jobs);

}  // namespace eacgm::exporting
