#include "govern/hookcore/sample_rate.h"

#include <algorithm>

namespace eacgm::govern {
namespace {
constexpr std::uint64_t kMaxStep = 64;
}  // namespace

std::uint32_t SampleRate::clamp(std::uint32_t v) const {
  if (v < c_.min_every) v = c_.min_every;
  if (v > c_.max_every) v = c_.max_every;
  return v == 0 ? 1 : v;
}

std::uint32_t SampleRate::adapt(std::uint64_t wall_ns, std::uint64_t timed, std::uint64_t cost_ns) {
  if (wall_ns == 0) return every_;
  const double spent = static_cast<double>(cost_ns + timed * c_.gpu_cost_ns);
  const double share = spent / static_cast<double>(wall_ns);
  if (share > c_.budget) {
    // Over: straight to the power-of-two multiple that brings the cost back within the
    // budget (at most x64 a step), so a start at 1 in 16 costs one second, not five.
    std::uint64_t factor = 2;
    while (static_cast<double>(factor) * c_.budget < share && factor < kMaxStep) factor *= 2;
    every_ = clamp(static_cast<std::uint32_t>(std::min<std::uint64_t>(every_ * factor, c_.max_every)));
  } else if (share < c_.budget / 4 && every_ > c_.min_every) {
    every_ = clamp(every_ / 2);
  }
  return every_;
}

}  // namespace eacgm::govern
