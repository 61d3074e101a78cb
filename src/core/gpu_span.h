// What a process's hook timed on the GPU and counted exactly (core/gpu_time_ring.h), as
// the agent hands it to the consumers: spans of sampled kernels and graphs on the host's
// clock, the functions' names, their exact launch counts, a private-driver process's
// driver calls, host waits, allocations and frees, and each ring's own counters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/gpu_time_ring.h"

namespace eacgm {

struct GpuSpan {
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::int32_t device = -1;
  std::uint64_t function = 0;  // CUfunction, or CUgraphExec for a graph
  std::uint64_t stream = 0;
  std::uint64_t launch_ns = 0;  // CLOCK_MONOTONIC: the launch was issued
  std::uint64_t start_ns = 0;   // CLOCK_MONOTONIC: the GPU started it
  std::uint64_t duration_ns = 0;
  bool graph = false;
  bool nccl = false;
  // The kernel followed its start event at once (gpu_time_ring.h kSpanQueued); false: the
  // duration also holds the launch's latency on an idle stream (an upper bound).
  bool queued = false;
  // The kernel launch's grid, block and dynamic shared memory; `shaped` false when unknown
  // (a graph, or a hook that did not send it).
  gpu_time::LaunchShape shape{};
  bool shaped = false;
  // The function's first launch in the process (gpu_time_ring.h kSpanFirst): it ran cold.
  bool first = false;
};

struct GpuFunctionName {
  std::uint32_t pid = 0;
  std::uint64_t function = 0;
  std::string name;
  bool nccl = false;
};

struct GpuLaunchCount {
  std::uint32_t pid = 0;
  std::uint64_t function = 0;
  std::uint64_t launches = 0;  // cumulative, exact
  bool graph = false;
};

// One hooked driver function's calls in a process on its own copy of the driver, which no
// uprobe reaches (gpu_time_ring.h kCalls): cumulative, exact.
struct GpuCallCount {
  std::uint32_t pid = 0;
  std::string function;  // the exported symbol (cuMemcpyHtoDAsync_v2)
  std::uint64_t calls = 0;
  std::uint64_t bytes = 0;  // copies and memsets
};

// One hooked driver function that blocks the host, in a process on its own copy of the
// driver (gpu_time_ring.h kWaits): its calls whose duration fell in one of the hook's log
// buckets (hookcore/wait_buckets.h), cumulative, exact.
struct GpuWaitTimes {
  std::uint32_t pid = 0;
  std::string function;  // the exported symbol (cuStreamSynchronize)
  std::uint32_t bucket = 0;
  std::uint64_t calls = 0;
  std::uint64_t ns = 0;      // their time
  std::uint64_t failed = 0;  // of them, those that returned an error
};

// One allocation or free of a process on its own copy of the driver (gpu_time_ring.h
// kMemory), in the order it made them.
struct GpuMemoryCall {
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::string function;        // the exported symbol (cuMemAlloc_v2)
  std::uint64_t begin_ns = 0;  // CLOCK_MONOTONIC
  std::uint64_t duration_ns = 0;
  std::uint64_t address = 0;  // the allocated or freed address, or VMM handle
  std::uint64_t bytes = 0;    // allocations: the size (pitched: the pitch)
  std::uint64_t rows = 0;     // pitched: the height
  std::int32_t result = 0;    // CUresult
  bool by_runtime = false;    // made by libcudart, whose probe counts the call
};

// One ring's counters (cumulative) when it was last read.
struct GpuRingState {
  std::uint32_t pid = 0;
  std::string comm;  // the process's command name, read when its ring was mapped
  std::uint64_t launches = 0;
  std::uint64_t sampled = 0;
  std::uint64_t dropped = 0;
  std::uint64_t skipped_capturing = 0;
  std::uint64_t timing_cost_ns = 0;
  std::uint32_t sample_every = 0;
  std::uint32_t errors = 0;
  std::uint64_t dispatch_gap_ns = 0;  // what the hook subtracts from each queued span
  std::uint64_t held = 0;             // launches timed behind a hold of an idle stream
  std::uint64_t holds_expired = 0;    // holds the hook's watchdog released
  bool exited = false;                // the process is gone: this was its ring's last read
  bool private_driver = false;        // it runs its own copy of libcuda: no driver uprobe sees it
};

struct GpuTimeBatch {
  std::vector<GpuFunctionName> names;  // before the spans and counts that use them
  std::vector<GpuSpan> spans;
  std::vector<GpuLaunchCount> counts;
  std::vector<GpuCallCount> calls;
  std::vector<GpuWaitTimes> waits;
  std::vector<GpuMemoryCall> memory;
  std::vector<GpuRingState> rings;
  bool empty() const {
    return names.empty() && spans.empty() && counts.empty() && calls.empty() && waits.empty() &&
           memory.empty() && rings.empty();
  }
  void clear() {
    names.clear();
    spans.clear();
    counts.clear();
    calls.clear();
    waits.clear();
    memory.clear();
    rings.clear();
  }
};

}  // namespace eacgm
