#include "govern/hookcore/launch_table.h"

#include <cstdlib>
#include <cstring>

namespace eacgm::govern {

LaunchEntry* LaunchTable::find_or_insert(std::uintptr_t key) {
  if (key == 0) return nullptr;
  std::size_t h = (key >> 4) * 0x9E3779B97F4A7C15ull;
  constexpr std::size_t kProbes = 64;
  for (std::size_t i = 0; i < kProbes; ++i) {
    LaunchEntry& e = entries_[(h + i) & (kLaunchTableSize - 1)];
    std::uintptr_t k = e.key.load(std::memory_order_acquire);
    if (k == key) return &e;
    if (k == 0) {
      if (e.key.compare_exchange_strong(k, key, std::memory_order_acq_rel)) return &e;
      if (k == key) return &e;  // another thread inserted the same key
    }
  }
  return nullptr;
}

void LaunchTable::clear() {
  for (LaunchEntry& e : entries_) {
    e.key.store(0, std::memory_order_relaxed);
    e.launches.store(0, std::memory_order_relaxed);
    e.naming.store(0, std::memory_order_relaxed);
    e.nccl.store(false, std::memory_order_relaxed);
    e.graph.store(false, std::memory_order_relaxed);
    e.name.store(nullptr, std::memory_order_relaxed);  // the parent's copies stay allocated
    e.every.store(0, std::memory_order_relaxed);
    e.left.store(kUnplannedQuota, std::memory_order_relaxed);
    e.in_place.store(0, std::memory_order_relaxed);
    e.launches_sent = 0;
    e.launches_planned = 0;
    e.timed_sum_ns = 0;
    e.timed_count = 0;
    e.queued_count.store(0, std::memory_order_relaxed);
    e.shapes_seen = 0;
    e.name_sent = false;
  }
  untracked_.store(0, std::memory_order_relaxed);
}

bool is_nccl_kernel_name(const char* name) {
  if (name == nullptr) return false;
  return std::strstr(name, "ncclKernel_") != nullptr || std::strstr(name, "ncclDevKernel_") != nullptr;
}

}  // namespace eacgm::govern
