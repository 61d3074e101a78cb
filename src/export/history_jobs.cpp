// Jobs gathered from the history's processes (see history_jobs.h).
#include "export/history_jobs.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace eacgm::exporting {
namespace {

std::string utc(std::int64_t ns) {
  const std::time_t t = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec);
}

// "0-7", "0-3,5,7": sorted ranks as ranges.
std::string ranges(const std::vector<long>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? std::to_string(v[i]) : fmt::format("{}-{}", v[i], v[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

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

std::string history_jobs_table(const std::vector<HistoryJob>& jobs) {
  if (jobs.empty()) return "";
  std::string out =
      fmt::format("{:<20} {:>5} {:<16} {:>9} {:>10} {:>7} {:<19} {:<19}\n", "job", "nodes", "ranks",
                  "processes", "calls", "errors", "first seen (UTC)", "last seen (UTC)");
  for (const auto& j : jobs) {
    std::string ranks = ranges(j.ranks);
    if (j.world_size) ranks += fmt::format(" of {}", *j.world_size);
    out += fmt::format("{:<20} {:>5} {:<16} {:>9} {:>10} {:>7} {:<19} {:<19}\n", j.job.substr(0, 20),
                       j.nodes.size(), ranks.substr(0, 16), j.processes, j.calls, j.errors, utc(j.first_ns),
                       utc(j.last_ns));
    if (!j.missing_ranks.empty()) {
      out += fmt::format("  ranks {} of {} never seen in this window\n", ranges(j.missing_ranks), j.job);
    }
  }
  return out;
}

}  // namespace eacgm::exporting
