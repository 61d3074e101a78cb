// MemoryTrim: the allocator's free pages handed back at most once a kPeriod (see
// memory_trim.h).
#include "node/memory_trim.h"

#include <malloc.h>

#include <cstddef>

// jemalloc's control call, when the program is linked with it (a weak reference: null in
// a program that is not, where glibc's malloc is the allocator).
extern "C" int mallctl(const char* name, void* oldp, std::size_t* oldlenp, void* newp, std::size_t newlen)
    __attribute__((weak));

namespace eacgm::node {

bool MemoryTrim::jemalloc() {
  if (mallctl == nullptr) return false;
  const char* version = nullptr;
  std::size_t len = sizeof(version);
  return mallctl("version", static_cast<void*>(&version), &len, nullptr, 0) == 0;
}

bool MemoryTrim::map_large_blocks() {
  return mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThreshold)) == 1;
}

void MemoryTrim::hand_back() { malloc_trim(0); }

void MemoryTrim::on_tick(std::chrono::steady_clock::time_point now, const CounterValues& counters) {
  (void)counters;
  if (!last_) {
    last_ = now;
    return;
  }
  if (now - *last_ < kPeriod) return;
  last_ = now;
  hand_back();
  ++trims_;
}

}  // namespace eacgm::node
