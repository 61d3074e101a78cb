// Clocks: BPF stamps CLOCK_MONOTONIC; users read wall-clock time; the samplers account
// for their own CPU with the calling thread's CPU clock.
#pragma once

#include <cstdint>

namespace eacgm {

std::uint64_t monotonic_ns();
std::uint64_t realtime_ns();
std::uint64_t thread_cpu_ns();  // CPU time of the calling thread

// Converts monotonic stamps to Unix-epoch nanoseconds with an offset taken once.
class WallClock {
 public:
  WallClock();
  std::uint64_t from_monotonic(std::uint64_t mono_ns) const { return mono_ns + offset_ns_; }
  std::uint64_t offset_ns() const { return offset_ns_; }

 private:
  std::uint64_t offset_ns_;
};

}  // namespace eacgm
