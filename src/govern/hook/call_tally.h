// Exact counts of the hooked driver calls, per function, for a process on its own copy of
// the driver (private_driver.h), which no uprobe of the agent reaches: every call of every
// hooked driver function, and the bytes of copies and memsets, a relaxed atomic add each.
// The timing thread hands the counts that changed to the agent through the GPU-time ring
// (gpu_time_ring.h kCalls), which merges them as the process's calls. On when GPU time is
// on and the process runs the copy; otherwise one relaxed load per call.
#pragma once

#include <atomic>
#include <cstdint>

#include "govern/hook/gpu_time_ring_writer.h"
#include "govern/hookcore/hook_table.h"

namespace eacgm::govern::hook {

extern std::atomic<bool> g_tally_calls;

struct CallTally {
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> bytes{0};
  std::uint64_t calls_sent = 0;  // the timing thread's: `calls` when last written
};

extern CallTally g_call_tallies[kHookCount];

// Whether calls are counted now (one relaxed load): the wrappers ask before reading a
// call's bytes.
inline bool tallying() { return __builtin_expect(g_tally_calls.load(std::memory_order_relaxed), 0); }

// One call of `id` moving `bytes` (0: none), counted: only while tallying().
inline void tally_call(HookId id, std::uint64_t bytes) {
  CallTally& t = g_call_tallies[index_of(id)];
  t.calls.fetch_add(1, std::memory_order_relaxed);
  if (bytes != 0) t.bytes.fetch_add(bytes, std::memory_order_relaxed);
}

// For the timing thread (and at exit): the driver functions whose count changed since
// their last record, one kCalls record each, named. A record the ring has no room for is
// written at the next round.
void write_call_tallies(GpuTimeRingWriter& ring);

// In a child after fork: no counts (the child runs without GPU time).
void stop_call_tallies();

}  // namespace eacgm::govern::hook
