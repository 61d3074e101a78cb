// A job's hang verdict over every node's rank standings (analysis/job_verdict.h).
#include "analysis/job_verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "analysis/hang_diagnosis.h"
#include "analysis/nccl_bandwidth.h"

namespace eacgm::analysis {
namespace {

std::string collective_function(NcclCollective kind) {
  return nccl_is_collective(kind) ? fmt::format("nccl{}", nccl_collective_name(kind)) : std::string();
}

std::uint64_t age_between(std::int64_t now, std::int64_t then) {
  return now > then ? static_cast<std::uint64_t>(now - then) : 0;
}

JobRank job_rank(const RankReport& r, std::int64_t now_ns) {
  JobRank out;
  out.node = r.node;
  out.rank = r.standing.rank;
  out.pid = r.standing.pid;
  out.entered = r.standing.entered;
  out.finished = r.standing.finished;
  out.report_age_ns = age_between(now_ns, r.written_ns);
  // A wait goes on between the row's write and now (the next row says if it ended).
  out.waiting_ns = r.standing.waiting_ns == 0 ? 0 : r.standing.waiting_ns + out.report_age_ns;
  out.collective = collective_function(r.standing.last);
  return out;
}

// "rank 3 on node b", "ranks 2,3 on node b, rank 7 on node c".
std::string ranks_by_node(const std::vector<JobRank>& ranks) {
  std::map<std::string, std::vector<std::int32_t>> by_node;
  for (const JobRank& r : ranks) by_node[r.node].push_back(r.rank);
  std::string out;
  for (const auto& [node, numbers] : by_node) {
    out += fmt::format("{}{} {} on node {}", out.empty() ? "" : ", ", numbers.size() == 1 ? "rank" : "ranks",
                       rank_list(numbers), node.empty() ? "(unnamed)" : node);
  }
  return out;
}

// "ranks 0-2 on nodes a,b": the waiting side, its nodes together.
std::string ranks_on_nodes(const std::vector<JobRank>& ranks) {
  std::vector<std::int32_t> numbers;
  std::set<std::string> nodes;
  for (const JobRank& r : ranks) {
    numbers.push_back(r.rank);
    nodes.insert(r.node.empty() ? "(unnamed)" : r.node);
  }
  std::string names;
  for (const std::string& n : nodes) names += fmt::format("{}{}", names.empty() ? "" : ",", n);
  return fmt::format("{} {} on {} {}", numbers.size() == 1 ? "rank" : "ranks", rank_list(numbers),
                     nodes.size() == 1 ? "node" : "nodes", names);
}

std::string verdict_of(const JobCommVerdict& v) {
  const std::string instance =
      fmt::format("{} #{}", v.function.empty() ? std::string("collective") : v.function, v.number);
  const std::uint64_t s = v.age_ns / 1'000'000'000;
  std::string out;
  if (!v.missing.empty()) {
    out = fmt::format("{} never entered {}; {} waiting for {} s", ranks_by_node(v.missing), instance,
                      ranks_on_nodes(v.in), s);
  } else {
    out = fmt::format("{} waiting in {} for {} s", ranks_on_nodes(v.in), instance, s);
  }
  if (!v.unreported.empty()) {
    out += fmt::format("; {} {} reported by no agent", v.unreported.size() == 1 ? "rank" : "ranks",
                       rank_list(v.unreported));
  }
  return out;
}

}  // namespace

std::vector<JobCommVerdict> judge_job(std::span<const RankReport> reports, std::int64_t now_ns,
                                      std::uint64_t min_age_ns) {
  std::map<std::uint64_t, std::vector<const RankReport*>> by_comm;
  for (const RankReport& r : reports) by_comm[r.comm_id].push_back(&r);

  std::vector<JobCommVerdict> out;
  for (auto& [comm_id, rows] : by_comm) {
    std::sort(rows.begin(), rows.end(),
              [](const RankReport* a, const RankReport* b) { return a->standing.rank < b->standing.rank; });
    JobCommVerdict v;
    v.comm_id = comm_id;
    std::uint64_t lo = UINT64_MAX, hi = 0;
    std::set<std::int32_t> known;
    std::set<std::string> nodes;
    for (const RankReport* r : rows) {
      v.nranks = std::max(v.nranks, r->nranks);
      lo = std::min(lo, r->standing.entered);
      hi = std::max(hi, r->standing.entered);
      known.insert(r->standing.rank);
      nodes.insert(r->node);
    }
    for (std::int32_t r = 0; r < v.nranks && v.unreported.size() < 1024; ++r) {
      if (!known.contains(r)) v.unreported.push_back(r);
    }
    // Every known rank at one number: open only while a rank is unreported and they are inside it.
    if (hi == 0 || (lo == hi && v.unreported.empty())) continue;
    v.number = lo == hi ? hi : lo + 1;
    for (const RankReport* r : rows) {
      JobRank j = job_rank(*r, now_ns);
      if (r->standing.entered >= v.number) {
        if (r->standing.entered == v.number && v.function.empty()) v.function = j.collective;
        v.age_ns = std::max(v.age_ns, j.waiting_ns);
        v.in.push_back(std::move(j));
      } else {
        v.missing.push_back(std::move(j));
      }
    }
    if (lo == hi &&
        std::none_of(v.in.begin(), v.in.end(), [](const JobRank& j) { return j.entered > j.finished; }))
      continue;  // all returned from it: nothing is open that a rank reported waits in
    if (v.age_ns == 0 || v.age_ns < min_age_ns) continue;
    v.nodes.assign(nodes.begin(), nodes.end());
    v.hang = !v.missing.empty() || !v.unreported.empty();
    v.verdict = verdict_of(v);
    out.push_back(std::move(v));
  }
  return out;
}

void JobVerdict::update(const NcclProgressSummary& local, const FleetReports* fleet, std::uint64_t now_ns) {
  const std::string self = fleet != nullptr ? fleet->node : std::string();
  const std::int64_t offset = fleet != nullptr ? fleet->clock_offset_ns : 0;
  const std::int64_t now_store = static_cast<std::int64_t>(now_ns) + offset;

  // This node's ranks as they stand now; the other nodes' rows of the same communicators,
  // the freshest per rank, unless this node has the rank or the row is stale.
  std::vector<RankReport> reports;
  std::set<std::uint64_t> comms;
  std::set<std::pair<std::uint64_t, std::int32_t>> here;
  for (const NcclCommStanding& c : local.comms) {
    comms.insert(c.comm_id);
    for (const NcclRankStanding& r : c.ranks) {
      reports.push_back({self, c.comm_id, c.nranks, r, now_store});
      here.insert({c.comm_id, r.rank});
    }
  }
  JobVerdictSummary s;
  s.shared = fleet != nullptr;
  s.node = self;
  if (fleet != nullptr) {
    s.read_age_ns = age_between(now_store, fleet->read_ns);
    std::map<std::pair<std::uint64_t, std::int32_t>, const RankReport*> freshest;
    for (const RankReport& r : fleet->rows) {
      const std::pair key{r.comm_id, r.standing.rank};
      if (r.node == self || !comms.contains(r.comm_id) || here.contains(key)) continue;
      if (fleet->stale_ns > 0 && age_between(now_store, r.written_ns) > fleet->stale_ns) continue;
      auto [it, added] = freshest.emplace(key, &r);
      if (!added && r.written_ns > it->second->written_ns) it->second = &r;
    }
    for (const auto& [key, r] : freshest) {
      if (reports.size() >= kMaxRanks) break;
      reports.push_back(*r);
      ++s.other_ranks;
    }
  }
  s.communicators = judge_job(reports, now_store, min_age_ns_);

  // What lasts keeps its start; what is gone is over.
  std::map<std::uint64_t, JobCommVerdict> found;
  for (JobCommVerdict& v : s.communicators) {
    if (!v.hang) continue;
    v.start_ns = now_ns > v.age_ns ? now_ns - v.age_ns : 0;
    if (auto it = current_.find(v.comm_id); it != current_.end())
      v.start_ns = std::min(v.start_ns, it->second.start_ns);
    found.emplace(v.comm_id, v);
  }
  for (auto& [id, v] : current_) {
    if (found.contains(id)) continue;
    v.end_ns = std::max(now_ns, v.start_ns);
    v.age_ns = v.end_ns - v.start_ns;
    summary_.ended.push_back(std::move(v));
    if (summary_.ended.size() > kKeepEnded) summary_.ended.pop_front();
  }
  for (const auto& [id, v] : found) {
    if (!current_.contains(id)) ++summary_.total;
  }
  current_ = std::move(found);
  s.ended = std::move(summary_.ended);
  s.total = summary_.total;
  summary_ = std::move(s);
}

}  // namespace eacgm::analysis
