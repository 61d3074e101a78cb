// The hook's state in the program: the memory ledger, the live allocations, and (when a
// scheduler is configured) the compute-quota gate. Created on the first hooked call, so
// a program that never touches CUDA never runs any of it.
#pragma once

#include <atomic>
#include <cstdint>

#include "govern/hookcore/allocation_table.h"
#include "govern/hookcore/device_ledger.h"

namespace eacgm::govern::hook {

struct HookRuntime {
  DeviceLedger ledger;
  AllocationTable device_allocs;    // cuMemAlloc*, managed, async and pool allocations
  AllocationTable physical_allocs;  // cuMemCreate handles
  AllocationTable arrays;           // cuArrayCreate / cuArray3DCreate
  AllocationTable host_allocs;      // pinned host memory (not a GPU's)
  std::atomic<std::uint64_t> host_bytes{0};
};

HookRuntime& runtime();

}  // namespace eacgm::govern::hook
