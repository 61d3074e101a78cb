// The hook's clock: CLOCK_MONOTONIC in ns, the clock of the GPU-time ring's times.
#pragma once

#include <time.h>

#include <cstdint>

namespace eacgm::govern::hook {

inline std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace eacgm::govern::hook
