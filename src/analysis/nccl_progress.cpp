// NcclProgress: the skew's per-rank counts joined with the last scan of the calls in flight
// (analysis/nccl_progress.h).
#include "analysis/nccl_progress.h"

#include <algorithm>
#include <map>

#include "analysis/nccl_bandwidth.h"

namespace eacgm::analysis {

void NcclProgress::on_scan(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns) {
  waiting_ns_.clear();
  in_collective_.clear();
  for (const InflightCall& c : calls) {
    const CallEvent& e = c.call;
    const std::uint64_t age = scan_mono_ns > c.entry_mono_ns ? scan_mono_ns - c.entry_mono_ns : 0;
    auto [it, added] = waiting_ns_.emplace(e.pid, age);
    if (!added) it->second = std::max(it->second, age);
    if (e.nccl_comm_id == 0 || e.nccl_rank < 0 || e.nested || e.probe == nullptr) continue;
    const NcclCollective kind = nccl_collective_of(e.function());
    if (!nccl_is_collective(kind)) continue;
    in_collective_.push_back({e.nccl_comm_id, e.nccl_rank, e.nccl_nranks, e.pid, e.ts_ns, kind});
  }
}

NcclProgressSummary NcclProgress::standing(std::span<const NcclCommProgress> comms,
                                           const ProcessAlive& alive) const {
  std::map<std::uint32_t, bool> alive_at;  // one check per process
  const auto is_alive = [&](std::uint32_t pid) {
    auto [it, added] = alive_at.emplace(pid, true);
    if (added && alive) it->second = alive(pid);
    return it->second;
  };
  const auto waiting_ns = [&](std::uint32_t pid) -> std::uint64_t {
    auto it = waiting_ns_.find(pid);
    return it == waiting_ns_.end() ? 0 : it->second;
  };

  std::map<std::uint64_t, NcclCommStanding> by_id;
  for (const NcclCommProgress& c : comms) {
    NcclCommStanding& s = by_id[c.comm_id];
    s.comm_id = c.comm_id;
    s.nranks = c.nranks;
    for (const NcclRankProgress& r : c.ranks) {
      NcclRankStanding rs;
      rs.rank = r.rank;
      rs.pid = r.pid;
      for (std::size_t k = 0; k < r.entered.size(); ++k) {
        if (nccl_is_collective(static_cast<NcclCollective>(k))) rs.finished += r.entered[k];
      }
      rs.entered = rs.finished;
      rs.last = r.last_kind;
      rs.arrivals = r.arrivals;
      // Inside a collective now, entered after the last one whose record came (a call that
      // returned since the scan has both its record and its row: counted once).
      const auto inside =
          std::find_if(in_collective_.begin(), in_collective_.end(), [&](const InCollective& in) {
            return in.comm_id == c.comm_id && in.rank == r.rank && in.ts_ns > r.last_ts_ns;
          });
      if (inside != in_collective_.end()) {
        ++rs.entered;
        rs.last = inside->kind;
      }
      s.ranks.push_back(rs);
    }
  }
  // Ranks inside their communicator's first collective have no record yet.
  for (const InCollective& in : in_collective_) {
    NcclCommStanding& s = by_id[in.comm_id];
    s.comm_id = in.comm_id;
    if (in.nranks > 0) s.nranks = in.nranks;
    const bool known = std::any_of(s.ranks.begin(), s.ranks.end(),
                                   [&](const NcclRankStanding& r) { return r.rank == in.rank; });
    if (!known) s.ranks.push_back({in.rank, in.pid, 1, 0, 0, in.kind, {}});
  }

  NcclProgressSummary out;
  for (auto& [id, s] : by_id) {
    std::erase_if(s.ranks, [&](const NcclRankStanding& r) { return !is_alive(r.pid); });
    if (s.ranks.empty()) continue;
    for (NcclRankStanding& r : s.ranks) r.waiting_ns = waiting_ns(r.pid);
    std::sort(s.ranks.begin(), s.ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    out.comms.push_back(std::move(s));
  }
  return out;
}

}  // namespace eacgm::analysis
