// Where a job's ranks run, from the fleet's store (history/job_ranks.h).
#include "history/job_ranks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace eacgm::history {
namespace {

// The most pages of processes read (each kMaxPageRows): a window of more is a store
// this command does not walk whole.
constexpr std::size_t kMaxProcessPages = 20;

}  // namespace

JobPlaces job_places_of(const std::string& job, const std::vector<StoredProcess>& processes,
                        const std::vector<analysis::RankReport>& standings, const AgentList& agents,
                        const std::vector<NodeClock>& clocks) {
  // The job's live processes by (node, pid): the last row of each.
  std::map<std::pair<std::string, std::uint32_t>, const StoredProcess*> live;
  for (const auto& p : processes) {
    if (p.record.job != job) continue;
    auto [it, added] = live.emplace(std::pair{p.node, p.record.key.pid}, &p);
    if (!added && p.record.last_ns >= it->second->record.last_ns) it->second = &p;
  }
  std::map<std::pair<std::string, std::uint32_t>, JobRankPlace> places;
  for (const auto& [key, p] : live) {
    if (p->record.exited) continue;
    places[key] = JobRankPlace{p->record.rank.value_or(-1), key.second, p->record.comm};
  }
  // The communicators the job's processes are in, and each process's rank in the widest
  // of them where its row has none.
  std::set<std::uint64_t> comms;
  std::map<std::pair<std::string, std::uint32_t>, const analysis::RankReport*> widest;
  for (const auto& s : standings) {
    const auto key = std::pair{s.node, s.standing.pid};
    if (!places.contains(key)) continue;
    comms.insert(s.comm_id);
    auto [w, added] = widest.emplace(key, &s);
    if (!added && s.nranks > w->second->nranks) w->second = &s;
  }
  for (const auto& [key, s] : widest) {
    if (places[key].rank < 0) places[key].rank = s->standing.rank;
  }
  // The other ranks of those communicators: on nodes whose processes are not in the store
  // yet (shipped later than the standings are written).
  for (const auto& s : standings) {
    if (!comms.contains(s.comm_id)) continue;
    const auto key = std::pair{s.node, s.standing.pid};
    if (places.contains(key) || live.contains(key)) continue;
    places[key] = JobRankPlace{s.standing.rank, s.standing.pid, ""};
  }
  JobPlaces out;
  out.job = job;
  std::map<std::string, JobNodePlace> nodes;
  for (auto& [key, place] : places) {
    auto& n = nodes[key.first];
    n.node = key.first;
    n.ranks.push_back(std::move(place));
  }
  for (auto& [name, n] : nodes) {
    std::sort(n.ranks.begin(), n.ranks.end(), [](const JobRankPlace& a, const JobRankPlace& b) {
      const bool ua = a.rank < 0, ub = b.rank < 0;
      return std::tie(ua, a.rank, a.pid) < std::tie(ub, b.rank, b.pid);
    });
    for (const auto& a : agents.rows) {
      if (a.node != name) continue;
      n.agent_url = a.url;
      n.agent_up = agent_up(a, agents.now_ns);
    }
    for (const auto& c : clocks) {
      if (c.node == name) n.clock = c.estimate;
    }
    out.nodes.push_back(std::move(n));
  }
  return out;
}

Result<JobPlaces> read_job_places(Store& store, const std::string& job, std::int64_t now_ns,
                                  std::int64_t lookback_ns, std::int64_t standings_ns) {
  HistoryQuery q;
  q.from_ns = now_ns - lookback_ns;
  q.to_ns = now_ns + 60'000'000'000;  // a node's clock a little ahead of ours
  const Tier tier = store.tier_for(q, now_ns, Retention{});
  std::vector<StoredProcess> processes;
  for (std::size_t page = 0; page < kMaxProcessPages; ++page) {
    q.offset = page * kMaxPageRows;
    auto got = store.processes(q, tier);
    if (!got)
      return make_error(fmt::format("reading the processes of {}: {}", store.description(), got.error()));
    const std::size_t n = got->rows.size();
    processes.insert(processes.end(), std::make_move_iterator(got->rows.begin()),
                     std::make_move_iterator(got->rows.end()));
    if (n < kMaxPageRows || processes.size() >= got->totals.processes) break;
  }
  auto standings = store.standings({}, now_ns - standings_ns, analysis::JobVerdict::kMaxRanks);
  if (!standings) {
    return make_error(
        fmt::format("reading the NCCL standings of {}: {}", store.description(), standings.error()));
  }
  auto agents = store.agents();
  if (!agents)
    return make_error(fmt::format("reading the agents of {}: {}", store.description(), agents.error()));
  auto clocks = store.node_clocks();
  if (!clocks) {
    return make_error(
        fmt::format("reading the nodes' clocks of {}: {}", store.description(), clocks.error()));
  }
  return job_places_of(job, processes, *standings, *agents, *clocks);
}

}  // namespace eacgm::history
