// The log buckets in which the hook keeps the durations of the host waits it times
// (hook/wait_times.h): eight per power of two (each about 9% wide), exact below 8 ns,
// and everything from 2^42 ns (73 minutes) on in the last. Coarser than the agent's latency
// sketch (64 per power of two), so that every bucket of every waiting function can be a
// fixed counter; the agent files each bucket's calls at their mean.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

namespace eacgm::govern {

inline constexpr std::uint32_t kWaitBucketBits = 3;
inline constexpr std::uint32_t kWaitBuckets = 320;

inline constexpr std::uint32_t wait_bucket(std::uint64_t ns) {
  constexpr std::uint64_t kExact = std::uint64_t{1} << kWaitBucketBits;
  if (ns < kExact) return static_cast<std::uint32_t>(ns);
  const auto shift = static_cast<std::uint32_t>(std::bit_width(ns)) - 1 - kWaitBucketBits;
  const std::uint64_t key = ((std::uint64_t{shift} + 1) << kWaitBucketBits) + ((ns >> shift) - kExact);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(key, kWaitBuckets - 1));
}

}  // namespace eacgm::govern
