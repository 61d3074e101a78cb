// Each allocation and free a process on its own copy of the driver (private_driver.h)
// makes, which no uprobe of the agent sees, handed to the agent with its address and size
// so that its memory ledger holds them (core/gpu_time_ring.h kMemory): the calling thread
// pushes the call on a bounded queue (hookcore/memory_call_queue.h) and the timing thread
// writes the queue to the ring. A call the queue has no room for is counted instead
// (call_tally.h), as the other functions' calls are. Each call says whether the CUDA
// runtime's library made it (its caller's address is in libcudart), so that the agent
// counts it once, under the runtime's probe. On while the calls are tallied.
#pragma once

#include <cstdint>

#include "govern/hook/call_tally.h"
#include "govern/hook/gpu_time_ring_writer.h"
#include "govern/hookcore/hook_table.h"

namespace eacgm::govern::hook {

// What a memory policy (policies.h) reads of its call's arguments after the call.
struct MemoryArgs {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  std::uint64_t rows = 0;
};

// Queues one call of `id` (from the wrapper called from `caller`); false when the queue
// is full and the call is to be counted instead.
bool note_memory_call(HookId id, const MemoryArgs& args, int result, std::uint64_t begin_ns,
                      std::uint64_t duration_ns, const void* caller);

// For the timing thread (and at exit): the queued calls, oldest first, until the ring is
// full (the rest wait for the next round).
void write_memory_calls(GpuTimeRingWriter& ring);

}  // namespace eacgm::govern::hook
