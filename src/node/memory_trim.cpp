// MemoryTrim: malloc_trim(0) at most once a kPeriod (see memory_trim.h).
#include "node/memory_trim.h"

#include <malloc.h>

namespace eacgm::node {

bool MemoryTrim::map_large_blocks() {
  return mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThreshold)) == 1;
}

void MemoryTrim::on_tick(std::chrono::steady_clock::time_point now, const CounterValues& counters) {
  (void)counters;
  if (!last_) {
    last_ = now;
    return;
  }
  if (now - *last_ < kPeriod) return;
  last_ = now;
  malloc_trim(0);
  ++trims_;
}

}  // namespace eacgm::node
