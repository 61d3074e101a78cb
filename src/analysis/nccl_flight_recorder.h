// NcclFlightRecorder: per communicator and rank, the last N collectives and point-to-point
// calls the agent saw, kept from outside the job in the spirit of PyTorch's flight recorder
// (export/flight_recorder_pickle.h writes them in its dump format). Host-side: a call is
// "started" while its thread is inside it and "completed" once it returned.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analysis/nccl_bandwidth.h"
#include "analysis/nccl_probe_rules.h"
#include "core/call_event.h"
#include "core/inflight_call.h"
#include "core/python_stack.h"

namespace eacgm::analysis {

enum class FlightState : std::uint8_t {
  kStarted,    // the thread is inside the call (seen in flight)
  kCompleted,  // the call returned: its work is enqueued, the GPU may still run it
};

struct FlightEntry {
  // The rank's calls on this communicator, from 0, as the agent saw them (collectives and
  // point-to-point): the same position on every rank while the agent saw each from its start.
  std::uint64_t record_id = 0;
  // Collectives before this one on the communicator at this rank: NCCL has every rank issue
  // them in the same order, so equal ids on two ranks are one collective. Point-to-point
  // calls keep the id of the last collective.
  std::uint64_t collective_seq_id = 0;
  std::uint64_t p2p_seq_id = 0;  // sends and receives before this one
  // Calls of the same function before this one: the instance number NcclSkew and the hang
  // diagnosis give ("ncclAllReduce #18204").
  std::uint64_t instance = 0;
  NcclCollective kind = NcclCollective::kNone;  // the function: "nccl" + its name
  std::uint64_t count = 0;
  bool has_count = false;
  std::int64_t datatype = -1;  // ncclDataType_t; -1 unknown
  std::int64_t red_op = -1;    // ncclRedOp_t; -1 unknown or none
  std::int32_t peer = -1;      // send/recv: the peer rank; rooted collectives: the root
  FlightState state = FlightState::kCompleted;
  std::uint32_t tid = 0;
  std::uint64_t entered_ns = 0;   // Unix epoch
  std::uint64_t returned_ns = 0;  // 0 while in the call
  // The thread's Python stack in the call, when the agent read it (calls in flight past
  // [hangs] min_age_s): innermost first, frames[0] the call itself.
  std::shared_ptr<const PythonStack> python_stack;
};

struct FlightRank {
  std::uint64_t comm_id = 0;
  std::int32_t rank = -1;
  std::int32_t nranks = -1;
  std::uint32_t pid = 0;
  std::string comm;                  // the process's name
  bool exited = false;               // its process is gone (kept a while for post-mortems)
  std::uint64_t recorded = 0;        // calls recorded in all (the next record_id)
  std::vector<FlightEntry> entries;  // the last ones, oldest first
};

struct FlightRecord {
  std::size_t capacity = 0;           // entries kept per rank
  std::vector<FlightRank> ranks;      // by communicator id, then rank
  std::uint64_t untracked_calls = 0;  // calls of ranks past the cap
  std::uint64_t dropped_ranks = 0;    // ranks let go (their process exited long ago)
};

class NcclFlightRecorder {
 public:
  static constexpr std::size_t kDefaultEntries = 64;
  static constexpr std::size_t kMaxEntries = 4096;
  static constexpr std::size_t kMaxTotalEntries = 262'144;
  struct Options {
    std::size_t entries = kDefaultEntries;  // per rank, at most kMaxEntries
    // (communicator, rank) pairs followed, and fewer with long rings: at most
    // kMaxTotalEntries entries in all (120 bytes each: 30 MiB, and the published copy).
    std::size_t max_ranks = 1024;
    // A rank whose process exited is kept this long, then let go (the first to go when
    // the cap is reached).
    std::uint64_t exited_keep_ns = 600'000'000'000;
  };
  NcclFlightRecorder() : NcclFlightRecorder(Options{}) {}
  explicit NcclFlightRecorder(const Options& options);

  // Another ring size (a daemon's reload): each rank keeps its newest entries.
  void set_entries(std::size_t entries);

  // Issued NCCL collectives and sends/receives stamped with a communicator; a call first
  // seen in flight is completed by its record.
  void add(const CallEvent& event);
  // The NCCL calls of a scan of the calls in flight (at scan_mono_ns, CLOCK_MONOTONIC):
  // each in flight for 100 ms or more is recorded "started" (once), with its Python stack
  // once read.
  void add_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns);
  // Marks ranks whose process is gone and lets go of those gone longer than
  // exited_keep_ns; checks at most `budget` ranks per call.
  template <typename Alive>
  void sweep(Alive&& process_alive, std::uint64_t now_ns, std::size_t budget);

  // Whether anything changed since the last record().
  bool changed() const { return changed_; }
  FlightRecord record();

 private:
  struct Ring {
    FlightRank rank;                // its entries unused: the ring holds them
    std::vector<FlightEntry> ring;  // capacity entries
    std::size_t head = 0;           // the next slot
    std::size_t size = 0;
    std::uint64_t collectives = 0;
    std::uint64_t p2p = 0;
    std::array<std::uint64_t, kNcclCollectiveKinds> per_kind{};
    std::uint64_t exited_ns = 0;  // when first found gone
  };

  Ring* ring_for(const CallEvent& call);
  FlightEntry* find_started(Ring& r, std::uint32_t tid, std::uint64_t ts_ns);
  FlightEntry* known_call(Ring& r, const CallEvent& call);
  FlightEntry& push(Ring& r, const NcclProbeRule& rule, const CallEvent& call);
  void resize(Ring& r, std::size_t entries);
  void erase(std::size_t index);

  Options options_;
  std::vector<Ring> rings_;
  std::map<std::pair<std::uint64_t, std::int32_t>, std::size_t> by_key_;  // (comm id, rank)
  NcclProbeRules rules_;
  std::size_t sweep_next_ = 0;
  std::uint64_t untracked_calls_ = 0;
  std::uint64_t dropped_ranks_ = 0;
  bool changed_ = true;
};

template <typename Alive>
void NcclFlightRecorder::sweep(Alive&& process_alive, std::uint64_t now_ns, std::size_t budget) {
  for (std::size_t n = 0; n < budget && !rings_.empty(); ++n) {
    if (sweep_next_ >= rings_.size()) sweep_next_ = 0;
    Ring& r = rings_[sweep_next_];
    if (r.exited_ns == 0) {
      if (!process_alive(r.rank.pid)) {
        r.exited_ns = now_ns;
        r.rank.exited = true;
        changed_ = true;
      }
    } else if (now_ns - r.exited_ns >= options_.exited_keep_ns) {
      erase(sweep_next_);
      ++dropped_ranks_;
      continue;  // the last ring moved into this slot
    }
    ++sweep_next_;
  }
}

}  // namespace eacgm::analysis
