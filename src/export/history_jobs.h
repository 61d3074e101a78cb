// Jobs over a window of the history (history::StoredJob: the processes that carried one
// batch job id, SLURM_JOB_ID or torchrun's run id, gathered across nodes by the store),
// with the ranks below their world size that none had and the job report's headline
// figures (history/job_report.h: GPU-hours, idle, energy, cost), as /api/v1/history/jobs
// and `eacgm history` give them (the text table is export/history_tables.h's).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "history/history_query.h"
#include "history/job_report.h"

namespace eacgm::exporting {

// Ranks below world_size that no process of the job had: a rank that never came (or ran
// on a node that keeps no history in this store). None past 65536 ranks.
std::vector<long> missing_ranks(const history::StoredJob& job);

// The report's row of `job` in `usage`; none where the job held no GPU in the window.
const history::JobReportRow* usage_of(const std::vector<history::JobReportRow>& usage,
                                      const std::string& job);

// [{"job","nodes","ranks","world_size","missing_ranks","pods","processes","running",
//   "calls","errors","first_ns","last_ns","gpu_hours","idle_gpu_hours","idle_share",
//   "energy_kwh","cost","idle_cost","activity_basis"}] (history_json.h's documents embed
// it); the report's columns from `usage` (a job not in it held no GPU: 0, "none").
nlohmann::ordered_json history_jobs_array(const std::vector<history::StoredJob>& jobs,
                                          const std::vector<history::JobReportRow>& usage);

}  // namespace eacgm::exporting
