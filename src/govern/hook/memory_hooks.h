// What the allocation, free and memory-view policies do, out of line (allocations are
// rare next to launches, so a call here costs nothing that matters).
#pragma once

#include <cstdint>

#include "govern/hook/cuda_types.h"
#include "govern/hookcore/allocation_table.h"

namespace eacgm::govern::hook {

// A reservation taken before the driver call and settled after it.
struct Reservation {
  int device = -1;  // -1: not accounted (no current context: the driver call will fail)
  std::uint64_t bytes = 0;
};

// Reserves on the calling thread's current device; CUDA_ERROR_OUT_OF_MEMORY over the limit.
CUresult reserve_on_current_device(Reservation& r, std::uint64_t bytes);
CUresult reserve_on_device(Reservation& r, int device, std::uint64_t bytes);
// After the driver answered: a failure gives the reservation back, a success records
// the allocation under `key` with `actual_bytes` (which may differ from the reservation).
void settle(Reservation& r, CUresult result, AllocationTable& table, std::uint64_t key,
            std::uint64_t actual_bytes);

// Frees: the entry leaves the table before the driver frees (so an address reused at
// once by another thread is not confused with it) and returns if the free fails.
struct PendingFree {
  bool known = false;
  std::uint64_t key = 0;
  Allocation allocation;
};
void begin_free(PendingFree& f, AllocationTable& table, std::uint64_t key);
void end_free(PendingFree& f, CUresult result, AllocationTable& table);

void host_allocated(CUresult result, void* p, std::uint64_t bytes);
void begin_host_free(PendingFree& f, void* p);
void end_host_free(PendingFree& f, CUresult result);

std::uint64_t array_bytes(const CUDA_ARRAY_DESCRIPTOR* d);
std::uint64_t array_bytes(const CUDA_ARRAY3D_DESCRIPTOR* d);

// The memory view under a limit.
void limit_mem_info(size_t* free_bytes, size_t* total);
void limit_total_mem(size_t* bytes, CUdevice device);
void limit_nvml_memory(nvmlDevice_t device, unsigned long long* total, unsigned long long* free_bytes,
                       unsigned long long* used);

}  // namespace eacgm::govern::hook
