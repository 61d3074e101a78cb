// NcclGpuJoin: which NCCL call each NCCL kernel the hook timed on the GPU belongs to.
// NCCL launches a collective's kernel on the calling thread, inside the call (ncclAllReduce
// returns once it is enqueued), or, for calls between ncclGroupStart and ncclGroupEnd,
// inside ncclGroupEnd, after the calls returned. So a kernel span (core/gpu_span.h) joins
// the latest call of its thread whose host interval holds its launch; failing that, the
// calls of its thread that returned within `group_window_ns` before the launch and have no
// kernel yet (a group).
//
// Calls and kernels reach the agent by different paths (the probes' ring, the hook's
// shared ring) and either may come first, so a kernel waits until its thread has a call
// that began after its launch (every call before it is then known), or until `settle`
// says its launch is old enough. Bounded: `max_calls_per_thread` recent calls and
// `max_kernels_per_thread` waiting kernels (past it, the oldest is joined at once) of at
// most `max_threads` threads (the thread seen longest ago goes first, its kernels joined).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

namespace eacgm::analysis {

struct NcclIssuedCall {
  std::uint64_t ts_ns = 0;   // entry, on the calls' clock (Unix epoch)
  std::uint64_t end_ns = 0;  // return
  std::uint32_t entry = 0;   // the aggregator's row
  std::uint64_t size = 0;    // nccl-tests' S; 0: unknown
  double bus_factor = -1;    // < 0: unknown
  bool joined = false;       // a kernel was joined to it
};

struct NcclKernel {
  std::uint64_t launch_ns = 0;  // on the calls' clock
  std::uint64_t duration_ns = 0;
  bool queued = false;
};

// A kernel and the calls it belongs to: one call, or a group's calls, each with `joined`
// as it was before this kernel (false: this is the call's first kernel); none: it joined
// no call.
struct NcclJoined {
  NcclKernel kernel;
  std::vector<NcclIssuedCall> calls;
};

class NcclGpuJoin {
 public:
  struct Options {
    // At most about 18 MiB (bench/nccl_gpu_join_bench.cpp: 17.6 MiB when full).
    std::size_t max_threads = 1024;
    std::size_t max_calls_per_thread = 64;
    std::size_t max_kernels_per_thread = 512;
    std::uint64_t group_window_ns = 10'000'000;
  };
  NcclGpuJoin() : NcclGpuJoin(Options{}) {}
  explicit NcclGpuJoin(const Options& options) : options_(options) {}

  // Each appends to `out` the kernels it let go.
  void add_call(std::uint32_t pid, std::uint32_t tid, const NcclIssuedCall& call,
                std::vector<NcclJoined>& out);
  void add_kernel(std::uint32_t pid, std::uint32_t tid, const NcclKernel& kernel,
                  std::vector<NcclJoined>& out);
  // Joins every waiting kernel launched before `before_ns` (the end: UINT64_MAX).
  void settle(std::uint64_t before_ns, std::vector<NcclJoined>& out);

  std::size_t thread_count() const { return threads_.size(); }

 private:
  struct Thread {
    std::deque<NcclIssuedCall> calls;  // entry order
    std::deque<NcclKernel> kernels;    // waiting, launch order
    std::uint64_t last_ns = 0;
  };
  using Key = std::pair<std::uint32_t, std::uint32_t>;
  Thread& thread(Key key, std::vector<NcclJoined>& out);
  void release(Thread& t, std::uint64_t before_ns, std::vector<NcclJoined>& out);
  NcclJoined join(Thread& t, const NcclKernel& kernel) const;

  Options options_;
  std::map<Key, Thread> threads_;
};

}  // namespace eacgm::analysis
