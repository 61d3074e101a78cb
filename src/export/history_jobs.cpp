// Jobs gathered from the history's processes (see history_jobs.h).
#include "export/history_jobs.h"

#include <algorithm>
#include <map>
#include <set>

namespace eacgm::exporting {

std::vector<HistoryJob> history_jobs(const std::vector<history::StoredProcess>& processes) {
  struct Acc {
    HistoryJob job;
    std::set<std::string> nodes, pods;
    std::set<long> ranks;
  };
  std::map<std::string, Acc> by_job;
  for (const auto& p : processes) {
    const auto& r = p.record;
    if (r.job.empty()) continue;
    Acc& a = by_job[r.job];
    HistoryJob& j = a.job;
    if (j.processes == 0) {
      j.job = r.job;
      j.first_ns = r.first_ns;
      j.last_ns = r.last_ns;
    }
    ++j.processes;
    if (!r.exited) ++j.running;
    j.calls += p.calls;
    j.errors += p.errors;
    j.first_ns = std::min(j.first_ns, r.first_ns);
    j.last_ns = std::max(j.last_ns, r.last_ns);
    a.nodes.insert(p.node);
    if (!r.pod.empty()) a.pods.insert(r.namespace_.empty() ? r.pod : r.namespace_ + "/" + r.pod);
    if (r.rank) a.ranks.insert(*r.rank);
    if (r.world_size) j.world_size = std::max(j.world_size.value_or(0), *r.world_size);
  }
  std::vector<HistoryJob> out;
  for (auto& [name, a] : by_job) {
    HistoryJob j = std::move(a.job);
    j.nodes.assign(a.nodes.begin(), a.nodes.end());
    j.pods.assign(a.pods.begin(), a.pods.end());
    j.ranks.assign(a.ranks.begin(), a.ranks.end());
    if (j.world_size && *j.world_size <= 65536) {
      for (long r = 0; r < *j.world_size; ++r) {
        if (!a.ranks.contains(r)) j.missing_ranks.push_back(r);
      }
    }
    out.push_back(std::move(j));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const HistoryJob& a, const HistoryJob& b) { return a.calls > b.calls; });
  return out;
}

nlohmann::ordered_json history_jobs_array(const std::vector<HistoryJob>& jobs) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& j : jobs) {
    out.push_back({{"job", j.job},
                   {"nodes", j.nodes},
                   {"ranks", j.ranks},
                   {"world_size", j.world_size ? nlohmann::ordered_json(*j.world_size) : nullptr},
                   {"missing_ranks", j.missing_ranks},
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
