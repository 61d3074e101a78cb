// Clock reads and the monotonic-to-wall offset.
#include "core/clock.h"

#include <time.h>

namespace eacgm {
namespace {
std::uint64_t read(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}
}  // namespace

std::uint64_t monotonic_ns() { return read(CLOCK_MONOTONIC); }
std::uint64_t realtime_ns() { return read(CLOCK_REALTIME); }
std::uint64_t thread_cpu_ns() { return read(CLOCK_THREAD_CPUTIME_ID); }

WallClock::WallClock() {
  // Bracket the realtime read to halve the error of the offset.
  std::uint64_t m0 = monotonic_ns();
  std::uint64_t r = realtime_ns();
  std::uint64_t m1 = monotonic_ns();
  offset_ns_ = r - (m0 + (m1 - m0) / 2);
}

}  // namespace eacgm
