// NcclSkew: how far apart the ranks of one communicator on this node arrive at each
// collective, and which rank keeps arriving last. NCCL requires every rank to issue a
// communicator's collectives in the same order, so the k-th call of one collective on
// each rank is one collective instance; instances are matched by per-rank sequence
// numbers, whatever order the ring buffer delivers the processes' records in.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analysis/latency_sketch.h"
#include "analysis/nccl_probe_rules.h"
#include "core/call_event.h"

namespace eacgm::analysis {

struct NcclRankArrivals {
  std::int32_t rank = -1;
  std::uint32_t pid = 0;              // the process that holds the rank
  std::uint64_t instances = 0;        // matched instances it took part in
  std::uint64_t last = 0;             // of those, the ones it arrived last at
  std::uint64_t lateness_sum_ns = 0;  // sum of (its start - the earliest start)
  double mean_lateness_ns = 0.0;      // lateness_sum_ns / instances
  bool straggler = false;
};

struct NcclCommSkew {
  std::uint64_t comm_id = 0;
  std::int32_t nranks = -1;             // the communicator's size (-1: unknown)
  std::uint32_t local_ranks = 0;        // its ranks seen on this node
  std::uint64_t instances = 0;          // matched: every expected rank arrived
  std::uint64_t incomplete = 0;         // given up with ranks missing (window full)
  std::uint64_t mismatched = 0;         // the ranks disagreed on the size: left out
  std::uint64_t late = 0;               // calls for an instance already closed
  std::uint64_t pending = 0;            // instances still waiting for ranks
  LatencySketch skew;                   // max start - min start per instance, ns
  std::vector<NcclRankArrivals> ranks;  // by rank
  std::int32_t straggler = -1;          // the flagged rank, -1 when none
};

// One rank's start of a collective instance, kept to compare ranks across nodes
// (analysis/job_stragglers.h): the instance (its kind and number, per kind from 0, the
// same on every rank since NCCL orders a communicator's collectives alike) and the call's
// start, ns since the epoch on this node's clock.
struct NcclArrival {
  NcclCollective kind = NcclCollective::kNone;
  std::uint64_t seq = 0;
  std::uint64_t ts_ns = 0;
  bool operator==(const NcclArrival&) const = default;
};
// Which instances a rank keeps: the last kArrivalsPerLevel numbered a multiple of 16, of
// 16^2, 16^3 and 16^4 (of one kind), so that nodes whose rows were written seconds apart
// still share instances: the coarsest level spans 4 x 65,536 collectives.
inline constexpr std::size_t kArrivalLevels = 4;
inline constexpr std::size_t kArrivalsPerLevel = 4;
inline constexpr unsigned kArrivalLevelBits = 4;

// Where each rank of a communicator stands (for the hang diagnosis, analysis/nccl_hangs.h):
// per collective kind how many it entered (the next instance's number, counted from 0 as
// the instances are matched), and the instances still open: entered by some ranks, not
// by all.
struct NcclRankProgress {
  std::int32_t rank = -1;
  std::uint32_t pid = 0;
  std::array<std::uint64_t, kNcclCollectiveKinds> entered{};  // by NcclCollective
  NcclCollective last_kind = NcclCollective::kNone;           // the last one it entered
  std::uint64_t last_ts_ns = 0;                               // its start
  std::vector<NcclArrival> arrivals;                          // kept instances, by (kind, seq)
};
struct NcclOpenInstance {
  NcclCollective kind = NcclCollective::kNone;
  std::uint64_t seq = 0;              // from 0
  std::vector<std::int32_t> arrived;  // the ranks that entered it
  std::uint64_t first_ts_ns = 0;      // the earliest of their starts
};
struct NcclCommProgress {
  std::uint64_t comm_id = 0;
  std::int32_t nranks = -1;
  std::vector<NcclRankProgress> ranks;  // the ranks seen here, by rank
  std::vector<NcclOpenInstance> open;   // oldest first (by first_ts_ns)
};

struct NcclSkewSummary {
  std::vector<NcclCommSkew> comms;    // by comm id
  std::uint64_t untracked_calls = 0;  // NcclSkew::untracked_calls()
};

class NcclSkew {
 public:
  // How many ranks of one communicator on one node are followed (a node has at most
  // a few dozen GPUs); calls of further ranks are counted in untracked_calls().
  static constexpr std::size_t kMaxLocalRanks = 32;

  struct Options {
    // Communicators followed. At the cap, a new one takes the place of the one whose last
    // call is the oldest, once that is forget_idle_ns older than the new one's call (its
    // numbering starts again should it come back); until then the new one is untracked.
    std::size_t max_comms = 256;
    std::uint64_t forget_idle_ns = 600'000'000'000;
    // Instances of one communicator waiting for ranks; past it the oldest is given up.
    std::size_t window = 64;
    // With fewer ranks seen here than the communicator has (it spans nodes), the ranks
    // seen are taken to be all of this node's once no new one appeared for this long
    // (by the calls' own clock).
    std::uint64_t settle_ns = 1'000'000'000;
    // A rank is a straggler when it arrived last at more than this share of at least
    // straggler_min_instances instances, and its mean lateness is at least this much.
    double straggler_min_share = 0.5;
    std::uint64_t straggler_min_instances = 20;
    std::uint64_t straggler_min_lateness_ns = 1'000'000;
  };
  NcclSkew() : NcclSkew(Options{}) {}
  explicit NcclSkew(const Options& options) : options_(options) {}

  // Takes NCCL calls stamped with a communicator (id and rank): collectives are
  // matched into instances; any other successful call on a communicator makes its rank
  // known here. Others are ignored after one compare.
  void add(const CallEvent& event);

  // One row per communicator with a collective and at least two ranks here, by comm id.
  std::vector<NcclCommSkew> rows() const;
  NcclSkewSummary summary() const { return {rows(), untracked_calls_}; }
  // Every communicator with a collective: where its ranks stand, by comm id.
  std::vector<NcclCommProgress> progress() const;
  // Calls on communicators past max_comms, and of ranks past kMaxLocalRanks.
  std::uint64_t untracked_calls() const { return untracked_calls_; }
  // Communicators let go at the cap for a new one.
  std::uint64_t forgotten_comms() const { return forgotten_comms_; }

 private:
  static constexpr std::size_t kKinds = kNcclCollectiveKinds;
  struct RankState {
    std::int32_t rank = -1;
    std::uint32_t pid = 0;
    std::array<std::uint64_t, kKinds> next_seq{};  // per collective kind
    NcclCollective last_kind = NcclCollective::kNone;
    std::uint64_t last_ts = 0;
    std::uint64_t instances = 0;
    std::uint64_t last = 0;
    std::uint64_t lateness_sum_ns = 0;
    // Per level, the last kArrivalsPerLevel instances kept (a ring; ts_ns 0: empty).
    std::array<std::array<NcclArrival, kArrivalsPerLevel>, kArrivalLevels> arrivals{};
    std::array<std::uint8_t, kArrivalLevels> arrivals_next{};
    void keep_arrival(NcclCollective kind, std::uint64_t seq, std::uint64_t ts_ns);
    std::vector<NcclArrival> kept_arrivals() const;
  };
  struct Instance {
    bool used = false;
    bool mismatched = false;
    bool has_bytes = false;
    NcclCollective kind = NcclCollective::kNone;
    std::uint64_t seq = 0;
    std::uint64_t order = 0;    // creation order: the oldest is given up first
    std::uint64_t arrived = 0;  // bit i: rank slot i arrived
    std::uint64_t bytes = 0;    // the first arrival's `bytes`
    std::array<std::uint64_t, kMaxLocalRanks> start{};
  };
  struct Comm {
    std::uint64_t comm_id = 0;
    std::int32_t nranks = -1;
    std::vector<RankState> ranks;  // slots, at most kMaxLocalRanks
    std::vector<Instance> window;  // sized on the first collective
    std::uint64_t next_order = 0;
    std::uint64_t newest_ts = 0;
    std::uint64_t new_rank_ts = 0;  // newest_ts when the last new rank appeared
    bool settled = false;
    bool has_collective = false;
    std::array<std::uint64_t, kKinds> closed_below{};  // per kind: seqs below are closed
    std::uint64_t instances = 0, incomplete = 0, mismatched = 0, late = 0;
    LatencySketch skew;
  };

  Comm* comm_for(const CallEvent& event);
  int slot_for(Comm& c, const CallEvent& event);
  bool ready(const Comm& c) const;
  void arrive(Comm& c, int slot, const NcclProbeRule& rule, const CallEvent& event);
  void close(Comm& c, Instance& inst, bool complete);
  void close_ready(Comm& c);

  Options options_;
  std::vector<Comm> comms_;
  std::unordered_map<std::uint64_t, std::size_t> by_id_;
  NcclProbeRules rules_;
  std::uint64_t untracked_calls_ = 0;
  std::uint64_t forgotten_comms_ = 0;
};

}  // namespace eacgm::analysis
