// NcclStats: per (communicator, NCCL call) the calls, the bytes they moved, their
// host-side durations and the algorithm and bus bandwidth those give, with the rank and
// communicator size seen; and, for processes whose hook times their kernels
// (docs/gpu-time.md), the GPU time of the kernels joined to the calls
// (nccl_gpu_join.h) and the bandwidth over it. Bounded in keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/latency_sketch.h"
#include "analysis/nccl_gpu_figures.h"
#include "analysis/nccl_gpu_join.h"
#include "analysis/nccl_probe_rules.h"
#include "core/call_event.h"
#include "core/gpu_span.h"

namespace eacgm::analysis {

struct NcclRow {
  std::uint64_t comm_id = 0;  // 0: the communicator's creation was not seen
  std::string function;       // ncclAllReduce, ncclSend, ...
  std::int32_t rank = -1;     // the last rank seen on it (-1: unknown)
  std::int32_t nranks = -1;
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;
  std::uint64_t bytes = 0;
  std::uint64_t timed = 0;
  double p50_ns = 0.0;
  double p99_ns = 0.0;
  std::uint64_t max_ns = 0;
  // nccl-tests' bandwidths (nccl_bandwidth.h) over the successful timed calls whose size
  // S is known: the sum of S (for busbw, of S x the bus factor of the call's nranks)
  // over the sum of their host-side durations, in bytes per second; nullopt when no
  // call qualifies (busbw also needs nranks for AllReduce).
  std::uint64_t bandwidth_calls = 0;  // calls in algbw
  std::optional<double> algbw;
  std::optional<double> busbw;
  // From the GPU: set when the hook timed kernels of these calls.
  std::optional<NcclGpuTime> gpu;
};

class NcclStats {
 public:
  struct Options {
    std::size_t max_keys = 1024;
  };
  NcclStats() : NcclStats(Options{}) {}
  explicit NcclStats(const Options& options) : options_(options) {}

  // Counts the calls of `nccl` domain probes whose spec has a derived `bytes`
  // (collectives, send and receive); others are ignored.
  void add(const CallEvent& event);
  // A span of a kernel the hook timed; only NCCL kernels count. `launch_ns` is the
  // span's launch on the calls' clock (CallEvent::ts_ns).
  void add_gpu(const GpuSpan& span, std::uint64_t launch_ns);
  // Joins the kernels still waiting for their calls that were launched before
  // `before_ns` (nccl_gpu_join.h); the end of a trace: UINT64_MAX.
  void settle(std::uint64_t before_ns);

  // Most bytes first, then most calls, then by communicator and function.
  std::vector<NcclRow> rows() const;
  std::size_t key_count() const { return entries_.size(); }
  // Calls past max_keys (only counted).
  std::uint64_t folded_calls() const { return folded_calls_; }
  // NCCL kernels timed that joined no call (its event not seen, or a group of calls of
  // several rows, whose one kernel's time cannot be split).
  std::uint64_t gpu_unjoined() const { return gpu_unjoined_; }

 private:
  struct Entry {
    std::uint64_t comm_id = 0;
    std::uint32_t function = 0;
    std::int32_t rank = -1;
    std::int32_t nranks = -1;
    std::uint64_t calls = 0;
    std::uint64_t errors = 0;
    std::uint64_t bytes = 0;
    LatencySketch durations;
    NcclThroughput algorithm;  // host-side durations
    NcclThroughput bus;
    NcclGpuFigures gpu;
  };
  struct Key {
    std::uint64_t comm_id;
    std::uint32_t function;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::uint64_t>()(k.comm_id * 0x9e3779b97f4a7c15ull ^ k.function);
    }
  };

  Options options_;
  std::vector<Entry> entries_;
  std::unordered_map<Key, std::size_t, KeyHash> by_key_;
  NcclProbeRules rules_;
  std::uint64_t folded_calls_ = 0;
  void apply_joined();

  NcclGpuJoin join_;
  std::vector<NcclJoined> joined_;  // scratch: what the join let go
  std::uint64_t gpu_unjoined_ = 0;
};

}  // namespace eacgm::analysis
