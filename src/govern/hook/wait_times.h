// The time a process on its own copy of the driver (private_driver.h) spends in the hooked
// driver calls that block the host (core/host_wait_kinds.h: stream, event and context
// synchronisations, synchronous copies), which no uprobe of the agent times: each such
// call is timed on the host's clock and filed per function in log buckets
// (hookcore/wait_buckets.h), three atomic adds (the count last, released after the time).
// The timing thread hands the buckets that changed to the agent through the GPU-time ring
// (gpu_time_ring.h kWaits), which merges them as the process's sampled durations (every
// call timed). On while the calls are tallied (call_tally.h); otherwise one relaxed load
// per call.
#pragma once

#include <array>
#include <cstdint>

#include "govern/hook/call_tally.h"
#include "govern/hook/gpu_time_ring_writer.h"
#include "govern/hookcore/hook_table.h"

namespace eacgm::govern::hook {

// The waiting functions' slots (kNoWaitSlot: not a waiting function), set by
// start_wait_times.
inline constexpr std::uint8_t kNoWaitSlot = 0xff;
extern std::array<std::uint8_t, kHookCount> g_wait_slot;

// Finds the hooked driver functions that block the host; before tallying starts.
void start_wait_times();

// Whether a call of `id` is to be timed now.
inline bool timing_wait(HookId id) { return tallying() && g_wait_slot[index_of(id)] != kNoWaitSlot; }

// One timed call of a waiting function.
void time_wait(HookId id, std::uint64_t ns, bool failed);

// For the timing thread (and at exit): one kWaits record per bucket whose count changed
// since its last record, named. A record the ring has no room for is written at the next
// round.
void write_wait_times(GpuTimeRingWriter& ring);

}  // namespace eacgm::govern::hook
