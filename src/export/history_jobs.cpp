// Jobs of the history as JSON (see history_jobs.h).
#include "export/history_jobs.h"

#include <algorithm>

namespace eacgm::exporting {

std::vector<long> missing_ranks(const history::StoredJob& job) {
  std::vector<long> out;
  if (!job.world_size || *job.world_size > 65536) return out;
  for (long r = 0; r < *job.world_size; ++r) {
    if (!std::binary_search(job.ranks.begin(), job.ranks.end(), r)) out.push_back(r);
  }
  return out;
}

nlohmann::ordered_json history_jobs_array(const std::vector<history::StoredJob>& jobs) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& j : jobs) {
    out.push_back({{"job", j.job},
                   {"nodes", j.nodes},
                   {"ranks", j.ranks},
                   {"world_size", j.world_size ? nlohmann::ordered_json(*j.world_size) : nullptr},
                   {"missing_ranks", missing_ranks(j)},
                   {"pods", j.pods},
                   {"processes", j.processes},
                   {"running", j.running},
                   {"calls", j.calls},
                   {"errors", j.errors},
                   {"first_ns", j.first_ns},
                   {"last_ns", j.last_ns}});
  }
  return out;
}

}  // namespace eacgm::exporting
