// Jobs of the history as JSON (see history_jobs.h).
#include "export/history_jobs.h"

#include <algorithm>

#include "export/job_report.h"

namespace eacgm::exporting {

std::vector<long> missing_ranks(const history::StoredJob& job) {
  std::vector<long> out;
  if (!job.world_size || *job.world_size > 65536) return out;
  for (long r = 0; r < *job.world_size; ++r) {
    if (!std::binary_search(job.ranks.begin(), job.ranks.end(), r)) out.push_back(r);
  }
  return out;
}

const history::JobReportRow* usage_of(const std::vector<history::JobReportRow>& usage,
                                      const std::string& job) {
  const auto it = std::find_if(usage.begin(), usage.end(),
                               [&job](const history::JobReportRow& r) { return r.job == job; });
  return it == usage.end() ? nullptr : &*it;
}

nlohmann::ordered_json history_jobs_array(const std::vector<history::StoredJob>& jobs,
                                          const std::vector<history::JobReportRow>& usage) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& j : jobs) {
    history::JobReportRow none;
    none.activity_basis = "none";
    const history::JobReportRow* u = usage_of(usage, j.job);
    if (u == nullptr) u = &none;
    const std::optional<double> idle = idle_share(*u);
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
                   {"last_ns", j.last_ns},
                   {"gpu_hours", u->gpu_hours},
                   {"idle_gpu_hours", u->idle_gpu_hours},
                   {"idle_share", idle ? nlohmann::ordered_json(*idle) : nullptr},
                   {"energy_kwh", u->energy_kwh},
                   {"cost", u->cost},
                   {"idle_cost", u->idle_cost},
                   {"activity_basis", u->activity_basis}});
  }
  return out;
}

}  // namespace eacgm::exporting
