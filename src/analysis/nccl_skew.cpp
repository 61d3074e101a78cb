// NcclSkew: collective instances matched across the ranks of a communicator by
// per-rank sequence numbers, in a bounded window per communicator.
#include "analysis/nccl_skew.h"

#include <algorithm>
#include <bit>
#include <tuple>

namespace eacgm::analysis {

NcclSkew::Comm* NcclSkew::comm_for(const CallEvent& event) {
  if (auto it = by_id_.find(event.nccl_comm_id); it != by_id_.end()) return &comms_[it->second];
  if (comms_.size() < options_.max_comms) {
    by_id_.emplace(event.nccl_comm_id, comms_.size());
    Comm& c = comms_.emplace_back();
    c.comm_id = event.nccl_comm_id;
    return &c;
  }
  // At the cap (rare: a new communicator then): the one idle the longest makes room.
  if (comms_.empty()) return nullptr;
  auto idle = std::min_element(comms_.begin(), comms_.end(),
                               [](const Comm& a, const Comm& b) { return a.newest_ts < b.newest_ts; });
  if (event.ts_ns < idle->newest_ts || event.ts_ns - idle->newest_ts < options_.forget_idle_ns)
    return nullptr;
  by_id_.erase(idle->comm_id);
  *idle = Comm{};
  idle->comm_id = event.nccl_comm_id;
  by_id_.emplace(event.nccl_comm_id, static_cast<std::size_t>(idle - comms_.begin()));
  ++forgotten_comms_;
  return &*idle;
}

void NcclSkew::RankState::keep_arrival(NcclCollective kind, std::uint64_t seq, std::uint64_t ts_ns) {
  for (std::size_t level = 0; level < kArrivalLevels; ++level) {
    const unsigned bits = kArrivalLevelBits * static_cast<unsigned>(level + 1);
    if ((seq & ((std::uint64_t{1} << bits) - 1)) != 0) break;  // not a multiple: nor of the next
    arrivals[level][arrivals_next[level]] = {kind, seq, ts_ns};
    arrivals_next[level] = static_cast<std::uint8_t>((arrivals_next[level] + 1) % kArrivalsPerLevel);
  }
}

std::vector<NcclArrival> NcclSkew::RankState::kept_arrivals() const {
  std::vector<NcclArrival> out;
  for (const auto& level : arrivals) {
    for (const NcclArrival& a : level) {
      if (a.ts_ns != 0) out.push_back(a);
    }
  }
  std::sort(out.begin(), out.end(), [](const NcclArrival& a, const NcclArrival& b) {
    return std::tie(a.kind, a.seq) < std::tie(b.kind, b.seq);
  });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The rank's slot; a new rank restarts the wait for the communicator's ranks to settle.
int NcclSkew::slot_for(Comm& c, const CallEvent& event) {
  for (std::size_t i = 0; i < c.ranks.size(); ++i) {
    if (c.ranks[i].rank == event.nccl_rank) {
      c.ranks[i].pid = event.pid;
      return static_cast<int>(i);
    }
  }
  if (c.ranks.size() >= kMaxLocalRanks) return -1;
  RankState& r = c.ranks.emplace_back();
  r.rank = event.nccl_rank;
  r.pid = event.pid;
  c.new_rank_ts = c.newest_ts;
  c.settled = false;
  return static_cast<int>(c.ranks.size() - 1);
}

// Whether the ranks seen are all the ranks to wait for: the communicator's size, or,
// when fewer run here, the ones seen once they have settled.
bool NcclSkew::ready(const Comm& c) const {
  if (c.nranks > 0 && c.ranks.size() >= static_cast<std::size_t>(c.nranks)) return true;
  return c.settled;
}

void NcclSkew::add(const CallEvent& event) {
  // Only NCCL calls carry a communicator id (ingest/nccl_comms.h).
  if (event.nccl_comm_id == 0 || event.nccl_rank < 0 || event.nested || event.probe == nullptr) return;
  if (!nccl_call_issued(event)) return;
  Comm* c = comm_for(event);
  if (c == nullptr) {
    ++untracked_calls_;
    return;
  }
  // The records of several CPUs interleave: the newest start seen is the clock.
  c->newest_ts = std::max(c->newest_ts, event.ts_ns);
  if (event.nccl_nranks > 0) c->nranks = event.nccl_nranks;
  const int slot = slot_for(*c, event);
  if (slot < 0) {
    ++untracked_calls_;
    return;
  }
  const NcclProbeRule& rule = rules_.of(event);
  if (nccl_is_collective(rule.kind)) arrive(*c, slot, rule, event);
  if (!c->settled && c->newest_ts - c->new_rank_ts >= options_.settle_ns) {
    c->settled = true;
    close_ready(*c);
  }
}

void NcclSkew::arrive(Comm& c, int slot, const NcclProbeRule& rule, const CallEvent& event) {
  const auto kind = static_cast<std::size_t>(rule.kind);
  RankState& rs = c.ranks[static_cast<std::size_t>(slot)];
  const std::uint64_t seq = rs.next_seq[kind]++;
  rs.keep_arrival(rule.kind, seq, event.ts_ns);
  if (event.ts_ns >= rs.last_ts) {
    rs.last_kind = rule.kind;
    rs.last_ts = event.ts_ns;
  }
  // One rank here: nothing to compare it with.
  if (ready(c) && c.ranks.size() < 2) return;
  if (c.window.empty()) c.window.resize(std::max<std::size_t>(options_.window, 1));
  c.has_collective = true;

  Instance* inst = nullptr;
  for (auto& w : c.window) {
    if (w.used && w.kind == rule.kind && w.seq == seq) {
      inst = &w;
      break;
    }
  }
  if (inst == nullptr) {
    // Closed already: a rank arriving after the instance was matched without it (its
    // ranks were taken as settled) or given up.
    if (seq < c.closed_below[kind]) {
      ++c.late;
      return;
    }
    Instance* oldest = nullptr;
    for (auto& w : c.window) {
      if (!w.used) {
        inst = &w;
        break;
      }
      if (oldest == nullptr || w.order < oldest->order) oldest = &w;
    }
    if (inst == nullptr) {
      close(c, *oldest, false);  // the window is full: give up the oldest
      inst = oldest;
    }
    *inst = Instance{};
    inst->used = true;
    inst->kind = rule.kind;
    inst->seq = seq;
    inst->order = c.next_order++;
  }
  const std::uint64_t bit = std::uint64_t{1} << slot;
  inst->arrived |= bit;
  inst->start[static_cast<std::size_t>(slot)] = event.ts_ns;
  // Every rank passes the same count and datatype: a different size means the ranks'
  // sequences do not line up (a record was lost), so the instance is left out.
  if (const auto b = rule.bytes.bytes(event)) {
    if (!inst->has_bytes) {
      inst->has_bytes = true;
      inst->bytes = *b;
    } else if (inst->bytes != *b) {
      inst->mismatched = true;
    }
  }
  if (ready(c) && static_cast<std::size_t>(std::popcount(inst->arrived)) == c.ranks.size()) {
    close(c, *inst, true);
  }
}

void NcclSkew::close(Comm& c, Instance& inst, bool complete) {
  auto& below = c.closed_below[static_cast<std::size_t>(inst.kind)];
  below = std::max(below, inst.seq + 1);
  inst.used = false;
  if (!complete) {
    ++c.incomplete;
    return;
  }
  if (inst.mismatched) {
    ++c.mismatched;
    return;
  }
  std::uint64_t first = UINT64_MAX, last = 0;
  std::size_t last_slot = 0;
  bool any = false;
  for (std::size_t i = 0; i < c.ranks.size(); ++i) {
    if ((inst.arrived & (std::uint64_t{1} << i)) == 0) continue;
    first = std::min(first, inst.start[i]);
    if (!any || inst.start[i] > last) {  // ties: the lower slot
      last = inst.start[i];
      last_slot = i;
    }
    any = true;
  }
  ++c.instances;
  c.skew.add(last - first);
  for (std::size_t i = 0; i < c.ranks.size(); ++i) {
    if ((inst.arrived & (std::uint64_t{1} << i)) == 0) continue;
    ++c.ranks[i].instances;
    c.ranks[i].lateness_sum_ns += inst.start[i] - first;
  }
  ++c.ranks[last_slot].last;
}

// The ranks just settled: the instances they all reached are matched; with one rank
// here there is nothing to match, and its instances are let go uncounted.
void NcclSkew::close_ready(Comm& c) {
  for (auto& w : c.window) {
    if (!w.used) continue;
    if (c.ranks.size() < 2) {
      w.used = false;
    } else if (static_cast<std::size_t>(std::popcount(w.arrived)) == c.ranks.size()) {
      close(c, w, true);
    }
  }
}

std::vector<NcclCommSkew> NcclSkew::rows() const {
  std::vector<NcclCommSkew> out;
  for (const Comm& c : comms_) {
    if (!c.has_collective || c.ranks.size() < 2) continue;
    NcclCommSkew r;
    r.comm_id = c.comm_id;
    r.nranks = c.nranks;
    r.local_ranks = static_cast<std::uint32_t>(c.ranks.size());
    r.instances = c.instances;
    r.incomplete = c.incomplete;
    r.mismatched = c.mismatched;
    r.late = c.late;
    r.pending = static_cast<std::uint64_t>(
        std::count_if(c.window.begin(), c.window.end(), [](const Instance& w) { return w.used; }));
    r.skew = c.skew;
    for (const RankState& s : c.ranks) {
      NcclRankArrivals a;
      a.rank = s.rank;
      a.pid = s.pid;
      a.instances = s.instances;
      a.last = s.last;
      a.lateness_sum_ns = s.lateness_sum_ns;
      if (s.instances > 0) a.mean_lateness_ns = static_cast<double>(s.lateness_sum_ns) / s.instances;
      // Last at more than its share (1/n by chance; more than half can be one rank
      // only) and late by more than host-side jitter, over enough instances.
      a.straggler =
          c.instances >= options_.straggler_min_instances && c.instances > 0 &&
          static_cast<double>(s.last) > options_.straggler_min_share * static_cast<double>(c.instances) &&
          a.mean_lateness_ns >= static_cast<double>(options_.straggler_min_lateness_ns);
      if (a.straggler) r.straggler = s.rank;
      r.ranks.push_back(a);
    }
    std::sort(r.ranks.begin(), r.ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.comm_id < b.comm_id; });
  return out;
}

std::vector<NcclCommProgress> NcclSkew::progress() const {
  std::vector<NcclCommProgress> out;
  for (const Comm& c : comms_) {
    bool any = false;
    for (const RankState& s : c.ranks) {
      for (std::uint64_t n : s.next_seq) any = any || n > 0;
    }
    if (!any) continue;
    NcclCommProgress p;
    p.comm_id = c.comm_id;
    p.nranks = c.nranks;
    for (const RankState& s : c.ranks)
      p.ranks.push_back({s.rank, s.pid, s.next_seq, s.last_kind, s.last_ts, s.kept_arrivals()});
    for (const Instance& w : c.window) {
      if (!w.used) continue;
      NcclOpenInstance o;
      o.kind = w.kind;
      o.seq = w.seq;
      o.first_ts_ns = UINT64_MAX;
      for (std::size_t i = 0; i < c.ranks.size(); ++i) {
        if ((w.arrived & (std::uint64_t{1} << i)) == 0) continue;
        o.arrived.push_back(c.ranks[i].rank);
        o.first_ts_ns = std::min(o.first_ts_ns, w.start[i]);
      }
      std::sort(o.arrived.begin(), o.arrived.end());
      p.open.push_back(std::move(o));
    }
    std::sort(p.open.begin(), p.open.end(),
              [](const auto& a, const auto& b) { return a.first_ts_ns < b.first_ts_ns; });
    std::sort(p.ranks.begin(), p.ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.comm_id < b.comm_id; });
  return out;
}

}  // namespace eacgm::analysis
