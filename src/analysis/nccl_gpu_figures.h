// NcclGpuFigures: one NCCL row's (communicator, function) GPU time, from the hook's spans
// of the kernels joined to its calls (nccl_gpu_join.h): the kernels' durations, and
// nccl-tests' algorithm and bus bandwidth over GPU time (sum of S, or of S x the bus
// factor, over the sum of the kernels' durations), in all and per size class (S in
// [2^k, 2^(k+1))), as nccl-tests reports them per size.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "analysis/latency_sketch.h"
#include "analysis/nccl_bandwidth.h"

namespace eacgm::analysis {

struct NcclGpuSize {
  std::uint64_t min_bytes = 0;  // the smallest and largest S seen in the class
  std::uint64_t max_bytes = 0;
  std::uint64_t calls = 0;
  double p50_ns = 0;
  std::optional<double> algbw;  // bytes per second
  std::optional<double> busbw;
};

struct NcclGpuTime {
  std::uint64_t calls = 0;        // calls with a kernel timed
  std::uint64_t kernels = 0;      // kernel spans joined
  std::uint64_t idle_starts = 0;  // of them, started on an idle stream (upper bounds)
  double p50_ns = 0;              // per kernel
  double p99_ns = 0;
  double max_ns = 0;
  std::uint64_t gpu_ns = 0;  // all joined kernels
  std::optional<double> algbw;
  std::optional<double> busbw;
  std::vector<NcclGpuSize> sizes;  // smallest first
};

class NcclGpuFigures {
 public:
  // One kernel span of `duration_ns` joined to calls of this row moving `size` bytes (S,
  // summed over a group's calls; 0: unknown) with `bus_factor` (< 0: unknown).
  // `first` is false for a call's later kernels: their time counts, their bytes not again.
  void add(std::uint64_t duration_ns, bool queued, bool first, std::uint64_t calls, std::uint64_t size,
           double bus_factor);
  bool empty() const { return kernels_ == 0; }
  NcclGpuTime figures() const;

 private:
  // What the figures come from, in all and per size class.
  struct Part {
    std::uint64_t calls = 0;
    LatencySketch durations;
    NcclThroughput algorithm;  // S once per call, over every kernel's time
    NcclThroughput bus;
    void add(std::uint64_t duration_ns, bool first, std::uint64_t calls_add, std::uint64_t size,
             double bus_factor);
  };
  struct Size {
    std::uint64_t min_bytes = 0;
    std::uint64_t max_bytes = 0;
    Part part;
  };

  std::uint64_t kernels_ = 0;
  std::uint64_t idle_starts_ = 0;
  Part all_;
  std::map<unsigned, Size> sizes_;  // by floor(log2 S): at most 64
};

}  // namespace eacgm::analysis
