// NcclProgress: where each rank of each NCCL communicator seen on this node stands, in
// the numbering every node shares: NCCL has every rank issue a communicator's collectives in
// the same order, so the n-th collective a rank enters is the communicator's n-th on any node
// (counted from the communicator's creation: its id is learned there). Published for the
// progress series of /metrics, which a Prometheus rule compares across nodes to name a rank
// that never entered the collective the others wait in.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "analysis/nccl_skew.h"
#include "core/inflight_call.h"

namespace eacgm::analysis {

struct NcclRankStanding {
  std::int32_t rank = -1;
  std::uint32_t pid = 0;
  // Collectives it entered on the communicator, the one it is inside now included: the
  // number of the last one (1-based; 0: none yet).
  std::uint64_t entered = 0;
  // Collectives whose call returned (NCCL enqueues the work: the GPU may still run it).
  std::uint64_t finished = 0;
  // How long its process had been in its oldest waiting call in flight (the collective
  // itself, or the synchronisation that waits for it) at the last scan; 0 when none was.
  std::uint64_t waiting_ns = 0;
  // The last collective it entered (the one it is inside now, if any): the function of the
  // instance numbered `entered`.
  NcclCollective last = NcclCollective::kNone;
  // Its starts of the kept instances (NcclSkew's), for stragglers across nodes.
  std::vector<NcclArrival> arrivals;
};

struct NcclCommStanding {
  std::uint64_t comm_id = 0;
  std::int32_t nranks = -1;             // the communicator's size, -1 when not known
  std::vector<NcclRankStanding> ranks;  // of live processes, by rank
};

struct NcclProgressSummary {
  std::vector<NcclCommStanding> comms;  // with a live rank, by comm id
};

class NcclProgress {
 public:
  using ProcessAlive = std::function<bool(std::uint32_t pid)>;

  // A scan of the calls in flight at `scan_mono_ns` (all of them, whatever their age):
  // how long each process has waited, and which rank is inside a collective. Replaces the
  // last scan's.
  void on_scan(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns);

  // The standing of the communicators `comms` (NcclSkew::progress) and of the ranks inside
  // their first collective, the ranks of processes that exited left out.
  NcclProgressSummary standing(std::span<const NcclCommProgress> comms, const ProcessAlive& alive) const;

 private:
  struct InCollective {
    std::uint64_t comm_id = 0;
    std::int32_t rank = -1;
    std::int32_t nranks = -1;
    std::uint32_t pid = 0;
    std::uint64_t ts_ns = 0;  // its entry
    NcclCollective kind = NcclCollective::kNone;
  };
  std::unordered_map<std::uint32_t, std::uint64_t> waiting_ns_;  // by pid: its oldest call's age
  std::vector<InCollective> in_collective_;
};

}  // namespace eacgm::analysis
