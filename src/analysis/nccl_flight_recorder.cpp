// NcclFlightRecorder: a ring of the last calls per (communicator, rank), bounded in ranks
// and entries; calls seen in flight are completed in place by their record.
#include "analysis/nccl_flight_recorder.h"

#include <algorithm>
#include <optional>

namespace eacgm::analysis {
namespace {

// A call seen in flight and its record carry the same entry time, each turned from the
// BPF clock by its own reader: they agree within microseconds.
constexpr std::uint64_t kSameEntryNs = 1'000'000;
// How far back a record looks for its call seen in flight (a thread's calls are in order).
constexpr std::size_t kStartedLookBack = 16;
// A call is recorded from the scans once in flight this long: the records of its thread's
// earlier calls are in by then (the reader drains them within milliseconds).
constexpr std::uint64_t kInflightMinAgeNs = 100'000'000;

bool near(std::uint64_t a, std::uint64_t b) { return (a > b ? a - b : b - a) <= kSameEntryNs; }

std::optional<std::uint64_t> arg(const CallEvent& e, std::uint8_t index) {
  if (index == NcclProbeRule::kNoArg || index >= e.nargs || (e.fault_mask & (1U << index)) != 0)
    return std::nullopt;
  return e.args[index];
}

}  // namespace

NcclFlightRecorder::NcclFlightRecorder(const Options& options) : options_(options) {
  options_.entries = std::clamp<std::size_t>(options.entries, 1, kMaxEntries);
}

void NcclFlightRecorder::set_entries(std::size_t entries) {
  entries = std::clamp<std::size_t>(entries, 1, kMaxEntries);
  if (entries == options_.entries) return;
  options_.entries = entries;
  for (Ring& r : rings_) resize(r, entries);
  changed_ = true;
}

void NcclFlightRecorder::resize(Ring& r, std::size_t entries) {
  std::vector<FlightEntry> kept;
  const std::size_t keep = std::min(r.size, entries);
  kept.reserve(entries);
  for (std::size_t i = r.size - keep; i < r.size; ++i) {
    kept.push_back(std::move(r.ring[(r.head + r.ring.size() - r.size + i) % r.ring.size()]));
  }
  r.size = keep;
  r.head = keep % entries;
  kept.resize(entries);
  r.ring = std::move(kept);
}

void NcclFlightRecorder::erase(std::size_t index) {
  by_key_.erase({rings_[index].rank.comm_id, rings_[index].rank.rank});
  if (index + 1 != rings_.size()) {
    rings_[index] = std::move(rings_.back());
    by_key_[{rings_[index].rank.comm_id, rings_[index].rank.rank}] = index;
  }
  rings_.pop_back();
  changed_ = true;
}

NcclFlightRecorder::Ring* NcclFlightRecorder::ring_for(const CallEvent& call) {
  const std::pair<std::uint64_t, std::int32_t> key{call.nccl_comm_id, call.nccl_rank};
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    Ring& r = rings_[it->second];
    if (call.nccl_nranks > 0) r.rank.nranks = call.nccl_nranks;
    if (r.rank.pid != call.pid) {  // the rank's process was replaced (a restarted job)
      r.rank.pid = call.pid;
      r.rank.comm = std::string(call.comm_view());
      r.rank.exited = false;
      r.exited_ns = 0;
    }
    return &r;
  }
  if (rings_.size() >= std::min(options_.max_ranks, kMaxTotalEntries / options_.entries)) {
    // Full: the rank whose process exited longest ago makes room.
    std::size_t oldest = rings_.size();
    for (std::size_t i = 0; i < rings_.size(); ++i) {
      if (rings_[i].exited_ns != 0 &&
          (oldest == rings_.size() || rings_[i].exited_ns < rings_[oldest].exited_ns))
        oldest = i;
    }
    if (oldest == rings_.size()) return nullptr;
    erase(oldest);
    ++dropped_ranks_;
  }
  Ring& r = rings_.emplace_back();
  r.rank.comm_id = call.nccl_comm_id;
  r.rank.rank = call.nccl_rank;
  r.rank.nranks = call.nccl_nranks;
  r.rank.pid = call.pid;
  r.rank.comm = std::string(call.comm_view());
  r.ring.resize(options_.entries);
  by_key_.emplace(key, rings_.size() - 1);
  return &r;
}

// The call of this thread seen in flight that entered at ts_ns, among the newest entries.
FlightEntry* NcclFlightRecorder::find_started(Ring& r, std::uint32_t tid, std::uint64_t ts_ns) {
  const std::size_t n = std::min(r.size, kStartedLookBack);
  for (std::size_t i = 1; i <= n; ++i) {
    FlightEntry& e = r.ring[(r.head + r.ring.size() - i) % r.ring.size()];
    if (e.tid == tid && e.state == FlightState::kStarted && near(e.entered_ns, ts_ns)) return &e;
  }
  return nullptr;
}

FlightEntry& NcclFlightRecorder::push(Ring& r, const NcclProbeRule& rule, const CallEvent& call) {
  // A call this thread entered earlier and was seen in flight has returned by now, its
  // record lost: it is not left "started" forever.
  const std::size_t n = std::min(r.size, kStartedLookBack);
  for (std::size_t i = 1; i <= n; ++i) {
    FlightEntry& e = r.ring[(r.head + r.ring.size() - i) % r.ring.size()];
    if (e.tid == call.tid && e.state == FlightState::kStarted && e.entered_ns < call.ts_ns)
      e.state = FlightState::kCompleted;
  }
  FlightEntry& f = r.ring[r.head];
  f = FlightEntry{};
  r.head = (r.head + 1) % r.ring.size();
  r.size = std::min(r.size + 1, r.ring.size());
  f.record_id = r.rank.recorded++;
  f.kind = rule.kind;
  f.instance = r.per_kind[static_cast<std::size_t>(rule.kind)]++;
  if (nccl_is_collective(rule.kind)) {
    f.collective_seq_id = r.collectives++;
    f.p2p_seq_id = r.p2p;
  } else {
    f.collective_seq_id = r.collectives;
    f.p2p_seq_id = r.p2p++;
  }
  if (auto c = arg(call, rule.count_arg)) {
    f.count = *c;
    f.has_count = true;
  }
  if (auto d = arg(call, rule.dtype_arg))
    f.datatype = static_cast<std::int64_t>(static_cast<std::uint32_t>(*d));
  if (auto o = arg(call, rule.op_arg)) f.red_op = static_cast<std::int64_t>(static_cast<std::uint32_t>(*o));
  if (auto p = arg(call, rule.peer_arg)) f.peer = static_cast<std::int32_t>(static_cast<std::uint32_t>(*p));
  f.tid = call.tid;
  f.entered_ns = call.ts_ns;
  changed_ = true;
  return f;
}

void NcclFlightRecorder::add(const CallEvent& event) {
  // Only NCCL calls carry a communicator id (ingest/nccl_comms.h).
  if (event.nccl_comm_id == 0 || event.nccl_rank < 0 || event.nested || event.probe == nullptr) return;
  const NcclProbeRule& rule = rules_.of(event);
  if (rule.kind == NcclCollective::kNone || !event.has_exit) return;
  // A call NCCL refused (bad arguments) did nothing on any rank: not numbered, as in
  // NcclSkew, and no rank is made for it; one seen in flight is still completed.
  const bool issued = nccl_call_issued(event);
  Ring* r = nullptr;
  if (issued) {
    r = ring_for(event);
  } else if (auto it = by_key_.find({event.nccl_comm_id, event.nccl_rank}); it != by_key_.end()) {
    r = &rings_[it->second];
  }
  if (r == nullptr) {
    if (issued) ++untracked_calls_;
    return;
  }
  if (FlightEntry* seen = find_started(*r, event.tid, event.ts_ns)) {
    seen->state = FlightState::kCompleted;
    seen->returned_ns = event.ts_ns + event.dur_ns;
    changed_ = true;
    return;
  }
  if (!issued) return;
  FlightEntry& f = push(*r, rule, event);
  f.state = FlightState::kCompleted;
  f.returned_ns = event.ts_ns + event.dur_ns;
}

void NcclFlightRecorder::add_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns) {
  for (const InflightCall& in : calls) {
    const CallEvent& call = in.call;
    if (call.nccl_comm_id == 0 || call.nccl_rank < 0 || call.nested || call.probe == nullptr) continue;
    // Younger calls may still have records of the thread's earlier calls on their way.
    if (scan_mono_ns < in.entry_mono_ns + kInflightMinAgeNs) continue;
    const NcclProbeRule& rule = rules_.of(call);
    if (rule.kind == NcclCollective::kNone) continue;
    Ring* r = ring_for(call);
    if (r == nullptr) {
      ++untracked_calls_;
      continue;
    }
    if (FlightEntry* seen = known_call(*r, call)) {
      if (in.python_stack && seen->python_stack != in.python_stack) {
        seen->python_stack = in.python_stack;
        changed_ = true;
      }
      continue;
    }
    FlightEntry& f = push(*r, rule, call);
    f.state = FlightState::kStarted;
    f.python_stack = in.python_stack;
  }
}

// The entry of a call seen in flight when it has one: seen in flight before, or its record
// came before this scan (the record then returned well after its entry, unlike the
// thread's previous call that returned just before it entered). A scan older than the
// thread's newest entry has the call recorded too.
FlightEntry* NcclFlightRecorder::known_call(Ring& r, const CallEvent& call) {
  FlightEntry* newest = nullptr;
  const std::size_t n = std::min(r.size, kStartedLookBack);
  for (std::size_t i = 1; i <= n; ++i) {
    FlightEntry& e = r.ring[(r.head + r.ring.size() - i) % r.ring.size()];
    if (e.tid != call.tid) continue;
    if (newest == nullptr) newest = &e;
    if (near(e.entered_ns, call.ts_ns) &&
        (e.state == FlightState::kStarted || e.returned_ns > call.ts_ns + kInflightMinAgeNs / 2))
      return &e;
  }
  if (newest != nullptr && newest->entered_ns > call.ts_ns + kSameEntryNs) return newest;
  return nullptr;
}

FlightRecord NcclFlightRecorder::record() {
  FlightRecord out;
  out.capacity = options_.entries;
  out.untracked_calls = untracked_calls_;
  out.dropped_ranks = dropped_ranks_;
  out.ranks.reserve(rings_.size());
  for (const Ring& r : rings_) {
    FlightRank& rank = out.ranks.emplace_back(r.rank);
    rank.entries.reserve(r.size);
    for (std::size_t i = 0; i < r.size; ++i) {
      rank.entries.push_back(r.ring[(r.head + r.ring.size() - r.size + i) % r.ring.size()]);
    }
  }
  std::sort(out.ranks.begin(), out.ranks.end(), [](const FlightRank& a, const FlightRank& b) {
    return a.comm_id != b.comm_id ? a.comm_id < b.comm_id : a.rank < b.rank;
  });
  changed_ = false;
  return out;
}

}  // namespace eacgm::analysis
