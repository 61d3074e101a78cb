// JobStragglers: the ranks' kept starts joined by instance across nodes
// (analysis/job_stragglers.h).
#include "analysis/job_stragglers.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace eacgm::analysis {
namespace {

using InstanceKey = std::pair<NcclCollective, std::uint64_t>;

std::string ms(double ns) { return fmt::format("{:.2f} ms", ns / 1e6); }

JobCommStragglers judge(std::uint64_t comm_id, std::vector<const RankReport*> rows,
                        const JobStragglerOptions& o) {
  JobCommStragglers out;
  out.comm_id = comm_id;
  std::sort(rows.begin(), rows.end(),
            [](const RankReport* a, const RankReport* b) { return a->standing.rank < b->standing.rank; });
  std::set<std::string> nodes;
  // Each node's clock bound: the largest of its rows' (unknown wins).
  std::map<std::string, std::int64_t> bound;
  for (const RankReport* r : rows) {
    nodes.insert(r->node);
    auto [it, added] = bound.emplace(r->node, r->clock_uncertainty_ns);
    if (!added && (it->second < 0 || r->clock_uncertainty_ns < 0))
      it->second = -1;
    else if (!added)
      it->second = std::max(it->second, r->clock_uncertainty_ns);
  }
  out.nodes.assign(nodes.begin(), nodes.end());

  // The instances every rank kept: the first rank's, narrowed by each other's.
  std::map<InstanceKey, std::vector<std::uint64_t>> starts;  // by instance: per row, its start
  for (const NcclArrival& a : rows.front()->standing.arrivals) starts[{a.kind, a.seq}];
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::map<InstanceKey, std::uint64_t> own;
    for (const NcclArrival& a : rows[i]->standing.arrivals) own[{a.kind, a.seq}] = a.ts_ns;
    for (auto it = starts.begin(); it != starts.end();) {
      auto o2 = own.find(it->first);
      if (o2 == own.end()) {
        it = starts.erase(it);
      } else {
        it->second.push_back(o2->second);
        ++it;
      }
    }
  }
  out.instances = starts.size();
  out.ranks.resize(rows.size());
  std::vector<double> lateness_sum(rows.size(), 0);
  for (const auto& [key, ts] : starts) {
    const std::uint64_t earliest = *std::min_element(ts.begin(), ts.end());
    const auto latest = static_cast<std::size_t>(std::max_element(ts.begin(), ts.end()) - ts.begin());
    ++out.ranks[latest].last;
    for (std::size_t i = 0; i < ts.size(); ++i) lateness_sum[i] += static_cast<double>(ts[i] - earliest);
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    JobRankLateness& l = out.ranks[i];
    l.node = rows[i]->node;
    l.rank = rows[i]->standing.rank;
    l.instances = out.instances;
    l.mean_lateness_ns = out.instances == 0 ? 0 : lateness_sum[i] / static_cast<double>(out.instances);
    // Against the earliest, which may be on any other node: its bound and the largest other.
    std::int64_t own = bound[l.node], other = 0;
    for (const auto& [node, b] : bound) {
      if (node == l.node) continue;
      if (b < 0)
        other = -1;
      else if (other >= 0)
        other = std::max(other, b);
    }
    l.uncertainty_ns = own < 0 || other < 0 ? -1 : own + other;
  }

  if (out.instances < o.min_instances) {
    out.verdict = fmt::format("{} instance(s) kept by every rank, fewer than the {} to compare",
                              out.instances, o.min_instances);
    return out;
  }
  const auto worst = std::max_element(out.ranks.begin(), out.ranks.end(), [](const auto& a, const auto& b) {
    return std::tie(a.last, a.mean_lateness_ns) < std::tie(b.last, b.mean_lateness_ns);
  });
  const double share = static_cast<double>(worst->last) / static_cast<double>(out.instances);
  const std::string who = fmt::format("rank {} on node {}", worst->rank, worst->node);
  const std::string clocks = worst->uncertainty_ns < 0
                                 ? std::string("clocks not measured")
                                 : fmt::format("clocks ±{}", ms(static_cast<double>(worst->uncertainty_ns)));
  const std::string facts = fmt::format("{} arrives last at {} of {} instances, {} late on average ({})", who,
                                        worst->last, out.instances, ms(worst->mean_lateness_ns), clocks);
  if (share <= o.min_share || worst->mean_lateness_ns < static_cast<double>(o.min_lateness_ns)) {
    out.verdict = fmt::format("no straggler: the latest, {}", facts);
  } else if (worst->uncertainty_ns < 0 ||
             worst->mean_lateness_ns <= static_cast<double>(worst->uncertainty_ns)) {
    out.verdict = fmt::format("no straggler named: {}: within the clocks' uncertainty", facts);
  } else {
    out.straggler = worst->rank;
    out.straggler_node = worst->node;
    out.verdict = fmt::format("straggler: {}", facts);
  }
  return out;
}

}  // namespace

std::vector<JobCommStragglers> job_stragglers(std::span<const RankReport> reports,
                                              const JobStragglerOptions& options) {
  std::map<std::uint64_t, std::vector<const RankReport*>> by_comm;
  for (const RankReport& r : reports) by_comm[r.comm_id].push_back(&r);
  std::vector<JobCommStragglers> out;
  for (auto& [id, rows] : by_comm) {
    std::set<std::string> nodes;
    for (const RankReport* r : rows) nodes.insert(r->node);
    if (nodes.size() < 2 || rows.size() < 2) continue;  // one node: NcclSkew's
    out.push_back(judge(id, std::move(rows), options));
  }
  return out;
}

}  // namespace eacgm::analysis
