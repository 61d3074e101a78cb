// Jobs over a window of the history: the processes that carried one batch job id
// (SLURM_JOB_ID or torchrun's run id), gathered across nodes, so a job spread over a
// fleet is one row with its nodes and ranks (`eacgm history`, /api/v1/history/jobs;
// the text table is export/history_tables.h's).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "history/history_query.h"

namespace eacgm::exporting {

struct HistoryJob {
  std::string job;
  std::vector<std::string> nodes;  // sorted
  std::vector<long> ranks;         // sorted, each once
  std::optional<long> world_size;  // the largest any of its processes said
  std::vector<std::string> pods;   // "namespace/pod", sorted
  std::size_t processes = 0;
  std::size_t running = 0;
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;
  std::int64_t first_ns = 0;
  std::int64_t last_ns = 0;
  // Ranks below world_size that no process of the job had: a rank that never came (or
  // ran on a node that keeps no history in this store).
  std::vector<long> missing_ranks;
};

// Most calls first; processes without a job are left out.
std::vector<HistoryJob> history_jobs(const std::vector<history::StoredProcess>& processes);

// [{"job","nodes","ranks","world_size","missing_ranks","pods","processes","running",
//   "calls","errors","first_ns","last_ns"}] (history_json.h's documents embed it).
nlohmann::ordered_json history_jobs_array(const std::vector<HistoryJob>& jobs);

}  // namespace eacgm::exporting
