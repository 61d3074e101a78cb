// Bytes in use per GPU against its limit, shared by every thread of the program. A
// reservation is taken before the driver is asked (so two threads cannot both pass the
// limit) and settled after it answers.
#pragma once

#include <atomic>
#include <cstdint>

#include "govern/hookcore/memory_limits.h"

namespace eacgm::govern {

// What cuMemGetInfo and NVML report under a limit: total is the limit (or the device's
// total when that is smaller), free is what is left of it, never above the device's
// real free memory and never below zero.
struct MemoryView {
  std::uint64_t free = 0;
  std::uint64_t total = 0;
};
MemoryView limited_view(std::uint64_t limit, std::uint64_t used, std::uint64_t real_free,
                        std::uint64_t real_total);

class DeviceLedger {
 public:
  void set_limit(int device, std::uint64_t limit);
  std::uint64_t limit(int device) const;
  std::uint64_t used(int device) const;

  // Adds `bytes` if the device stays within its limit; false (nothing added) if not.
  bool try_reserve(int device, std::uint64_t bytes);
  // Adds without a check (an allocation the driver made larger than reserved).
  void add(int device, std::uint64_t bytes);
  // Subtracts, never below zero.
  void release(int device, std::uint64_t bytes);
  // Forgets every use (a child after fork owns none of its parent's GPU memory).
  void clear_usage();

  static bool valid(int device) { return device >= 0 && device < kMaxDevices; }

 private:
  struct alignas(64) Device {
    std::atomic<std::uint64_t> used{0};
    std::atomic<std::uint64_t> limit{kNoLimit};
  };
  Device devices_[kMaxDevices];
};

}  // namespace eacgm::govern
