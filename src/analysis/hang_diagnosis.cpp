// Hangs per communicator and by age (analysis/hang_diagnosis.h).
#include "analysis/hang_diagnosis.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <unordered_map>
#include <utility>

#include "analysis/nccl_bandwidth.h"

namespace eacgm::analysis {
namespace {

std::string collective_function(NcclCollective kind) {
  return fmt::format("nccl{}", nccl_collective_name(kind));
}

std::uint64_t whole_seconds(std::uint64_t ns) { return ns / 1'000'000'000; }

// An open instance as this scan sees it: the skew's, and those the calls in flight are in.
struct Open {
  NcclCollective kind = NcclCollective::kNone;
  std::uint64_t seq = 0;
  std::set<std::int32_t> arrived;
  std::uint64_t first_ts_ns = 0;
};

// The oldest call in flight of each process (the rows are oldest first).
std::unordered_map<std::uint32_t, const InflightRow*> oldest_by_pid(const InflightSummary& inflight) {
  std::unordered_map<std::uint32_t, const InflightRow*> out;
  for (const InflightRow& row : inflight.rows) out.emplace(row.call.call.pid, &row);
  return out;
}

std::string ranks_with_pids(const std::vector<HangRank>& ranks) {
  std::vector<std::int32_t> numbers;
  std::string pids;
  bool exited = false;
  for (const HangRank& r : ranks) {
    numbers.push_back(r.rank);
    pids += fmt::format("{}{}", pids.empty() ? "" : ",", r.pid);
    exited = exited || !r.alive;
  }
  const bool one = ranks.size() == 1;
  std::string exits;
  if (exited) {
    for (const HangRank& r : ranks) {
      if (!r.alive) exits += fmt::format("{}{}", exits.empty() ? "" : ",", r.pid);
    }
    exits = one ? std::string(", exited") : fmt::format("; exited: {}", exits);
  }
  return fmt::format("{} {} ({} {}{})", one ? "rank" : "ranks", rank_list(numbers), one ? "pid" : "pids",
                     pids, exits);
}

std::string ranks_only(const std::vector<HangRank>& ranks) {
  std::vector<std::int32_t> numbers;
  numbers.reserve(ranks.size());
  for (const HangRank& r : ranks) numbers.push_back(r.rank);
  return fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", rank_list(numbers));
}

std::string verdict_of(const CommDiagnosis& d) {
  const std::string instance = fmt::format("{} #{}", d.function, d.number);
  const std::uint64_t s = whole_seconds(d.age_ns);
  std::string out;
  if (d.missing.empty()) {
    out = fmt::format("{} in {} for {} s", ranks_only(d.in), instance, s);
  } else if (d.hang) {
    out = fmt::format("{} never entered {}; {} waiting in it for {} s", ranks_with_pids(d.missing), instance,
                      ranks_only(d.in), s);
  } else {
    out = fmt::format("{} not in {} yet; {} entered it {} s ago", ranks_with_pids(d.missing), instance,
                      ranks_only(d.in), s);
  }
  if (!d.unseen.empty()) {
    out += fmt::format("; {} {} not seen on this node", d.unseen.size() == 1 ? "rank" : "ranks",
                       rank_list(d.unseen));
  }
  return out;
}

}  // namespace

std::string rank_list(std::span<const std::int32_t> ranks) {
  std::vector<std::int32_t> sorted(ranks.begin(), ranks.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    if (j - i >= 2) {
      out += fmt::format("{}-{}", sorted[i], sorted[j]);
    } else {
      for (std::size_t k = i; k <= j; ++k) out += fmt::format("{}{}", k == i ? "" : ",", sorted[k]);
    }
    i = j + 1;
  }
  return out;
}

void HangDiagnosis::update(std::span<const NcclCommProgress> comms, const InflightSummary& inflight,
                           std::uint64_t now_ns, const ProcessAlive& alive) {
  const auto by_pid = oldest_by_pid(inflight);
  const auto is_alive = [&](std::uint32_t pid) { return !alive || alive(pid); };
  HangSummary s;
  std::map<std::string, Hang> found;
  std::set<std::uint32_t> covered;  // processes in a communicator hang

  for (const NcclCommProgress& c : comms) {
    std::unordered_map<std::int32_t, const NcclRankProgress*> rank_at;
    for (const NcclRankProgress& r : c.ranks) rank_at.emplace(r.rank, &r);
    std::vector<Open> open;
    for (const NcclOpenInstance& o : c.open) {
      open.push_back({o.kind, o.seq, {o.arrived.begin(), o.arrived.end()}, o.first_ts_ns});
    }
    // A rank inside a collective call now is in its next instance (its record comes at the return).
    for (const InflightRow& row : inflight.rows) {
      const CallEvent& e = row.call.call;
      if (e.nccl_comm_id != c.comm_id || e.nccl_rank < 0) continue;
      const NcclCollective kind = nccl_collective_of(e.function());
      if (!nccl_is_collective(kind)) continue;
      auto r = rank_at.find(e.nccl_rank);
      const std::uint64_t seq = r == rank_at.end() ? 0 : r->second->entered[static_cast<std::size_t>(kind)];
      auto it = std::find_if(open.begin(), open.end(),
                             [&](const Open& o) { return o.kind == kind && o.seq == seq; });
      if (it == open.end()) {
        open.push_back({kind, seq, {}, e.ts_ns});
        it = std::prev(open.end());
      }
      it->arrived.insert(e.nccl_rank);
      it->first_ts_ns = std::min(it->first_ts_ns, e.ts_ns);
    }
    if (open.empty()) continue;
    const Open& oldest = *std::min_element(
        open.begin(), open.end(), [](const Open& a, const Open& b) { return a.first_ts_ns < b.first_ts_ns; });
    const std::uint64_t age = now_ns > oldest.first_ts_ns ? now_ns - oldest.first_ts_ns : 0;
    if (age < inflight.min_age_ns) continue;

    CommDiagnosis d;
    d.comm_id = c.comm_id;
    d.nranks = c.nranks;
    d.function = collective_function(oldest.kind);
    d.number = oldest.seq + 1;
    d.age_ns = age;
    const auto describe = [&](std::int32_t rank, std::uint32_t pid) {
      HangRank h;
      h.rank = rank;
      h.pid = pid;
      h.alive = is_alive(pid);
      if (auto it = by_pid.find(pid); it != by_pid.end()) {
        h.in_call = std::string(it->second->call.call.function());
        h.in_call_ns = it->second->age_ns;
        h.in_call_tid = it->second->call.call.tid;
        h.python_stack = it->second->call.python_stack;
      }
      if (auto r = rank_at.find(rank); r != rank_at.end() && r->second->last_kind != NcclCollective::kNone) {
        h.last_entered = collective_function(r->second->last_kind);
        h.last_number = r->second->entered[static_cast<std::size_t>(r->second->last_kind)];
      }
      return h;
    };
    std::set<std::int32_t> seen;
    for (const NcclRankProgress& r : c.ranks) {
      seen.insert(r.rank);
      const bool entered =
          oldest.arrived.contains(r.rank) || r.entered[static_cast<std::size_t>(oldest.kind)] > oldest.seq;
      (entered ? d.in : d.missing).push_back(describe(r.rank, r.pid));
    }
    for (std::int32_t rank : oldest.arrived) {  // in the call, its communicator's first
      if (!seen.contains(rank)) d.in.push_back(describe(rank, 0));
    }
    for (std::int32_t r = 0; r < c.nranks && d.unseen.size() < 1024; ++r) {
      if (!seen.contains(r) && !oldest.arrived.contains(r)) d.unseen.push_back(r);
    }
    bool waiting = false, in_alive = false, missing_alive = false;
    for (const HangRank& h : d.in) {
      waiting = waiting || !h.in_call.empty();
      in_alive = in_alive || (h.pid != 0 && h.alive);
    }
    for (const HangRank& h : d.missing) missing_alive = missing_alive || h.alive;
    if (!in_alive && !missing_alive) continue;  // a job that is gone
    d.hang = !d.missing.empty() && in_alive && (waiting || (hang_after_ns_ > 0 && age >= hang_after_ns_));
    d.verdict = verdict_of(d);

    if (d.hang) {
      Hang h;
      h.rule = "communicator";
      h.start_ns = oldest.first_ts_ns;
      h.age_ns = age;
      h.comm_id = c.comm_id;
      h.domain = "nccl";
      h.function = d.function;
      h.number = d.number;
      h.pid = d.missing.front().pid;
      h.rank = d.missing.front().rank;
      for (const HangRank& r : d.missing) h.missing_ranks.push_back(r.rank);
      for (const HangRank& r : d.in) {
        h.waiting_ranks.push_back(r.rank);
        covered.insert(r.pid);
        if (r.python_stack) h.stacks.push_back(r);
      }
      for (const HangRank& r : d.missing) {
        if (r.python_stack) h.stacks.push_back(r);  // in another call: where it is stuck instead
      }
      h.verdict = d.verdict;
      found.emplace(fmt::format("comm:{:x}", c.comm_id), std::move(h));
    }
    s.communicators.push_back(std::move(d));
  }

  if (hang_after_ns_ > 0) {
    for (const InflightRow& row : inflight.rows) {
      const CallEvent& e = row.call.call;
      if (row.age_ns < hang_after_ns_ || covered.contains(e.pid)) continue;
      Hang h;
      h.rule = "age";
      h.start_ns = e.ts_ns;
      h.age_ns = row.age_ns;
      h.domain = std::string(e.domain());
      h.function = std::string(e.function());
      h.pid = e.pid;
      h.tid = e.tid;
      h.rank = e.nccl_rank;
      h.comm_id = e.nccl_comm_id;
      h.verdict = fmt::format("pid {} tid {} ({}) stuck in {} for {} s", e.pid, e.tid, e.comm_view(),
                              h.function, whole_seconds(row.age_ns));
      if (row.call.python_stack) {
        HangRank r;
        r.rank = e.nccl_rank;
        r.pid = e.pid;
        r.in_call = h.function;
        r.in_call_ns = row.age_ns;
        r.in_call_tid = e.tid;
        r.python_stack = row.call.python_stack;
        h.stacks.push_back(std::move(r));
      }
      found.emplace(fmt::format("call:{}:{}:{}", e.pid, e.tid, row.call.entry_mono_ns), std::move(h));
    }
  }

  // What lasts keeps its start; what is gone is over.
  for (auto& [key, h] : current_) {
    auto it = found.find(key);
    if (it != found.end()) {
      it->second.start_ns = std::min(it->second.start_ns, h.start_ns);
      continue;
    }
    h.end_ns = std::max(now_ns, h.start_ns);
    h.age_ns = h.end_ns - h.start_ns;
    summary_.ended.push_back(std::move(h));
    if (summary_.ended.size() > kKeepEnded) summary_.ended.pop_front();
  }
  for (const auto& [key, h] : found) {
    if (!current_.contains(key)) ++summary_.total;
  }
  current_ = std::move(found);
  s.ended = std::move(summary_.ended);
  s.total = summary_.total;
  for (const auto& [key, h] : current_) s.current.push_back(h);
  std::sort(s.current.begin(), s.current.end(),
            [](const Hang& a, const Hang& b) { return a.start_ns < b.start_ns; });
  summary_ = std::move(s);
}

}  // namespace eacgm::analysis
