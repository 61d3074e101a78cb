// A mutex-guarded hash map: allocations are rare next to launches, and the critical
// section is a single insert or erase.
#include "govern/hookcore/allocation_table.h"

namespace eacgm::govern {

void AllocationTable::insert(std::uint64_t key, Allocation a) {
  std::lock_guard<std::mutex> g(mu_);
  map_[key] = a;
}

bool AllocationTable::take(std::uint64_t key, Allocation* out) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = map_.find(key);
  if (it == map_.end()) return false;
  *out = it->second;
  map_.erase(it);
  return true;
}

std::size_t AllocationTable::size() const {
  std::lock_guard<std::mutex> g(mu_);
  return map_.size();
}

void AllocationTable::clear() {
  std::lock_guard<std::mutex> g(mu_);
  map_.clear();
}

}  // namespace eacgm::govern
