// The NTP-style offset estimate of a node's clock (history/clock_offset.h).
#include "history/clock_offset.h"

#include <vector>

namespace eacgm::history {

std::optional<ClockEstimate> estimate_of(const ClockSample& s) {
  if (s.t1_ns < s.t0_ns || s.resolution_ns < 1) return std::nullopt;
  const std::int64_t round_trip = s.t1_ns - s.t0_ns;
  // The reference's true time lies in [reading, reading + resolution): its middle.
  const std::int64_t half_resolution = s.resolution_ns / 2;
  const std::int64_t midpoint = s.t0_ns + round_trip / 2;
  ClockEstimate e;
  e.measured_ns = s.reference_ns;
  e.offset_ns = s.reference_ns + half_resolution - midpoint;
  // Round up both halves: the bound must hold for odd round trips and resolutions.
  e.uncertainty_ns = (round_trip + 1) / 2 + (s.resolution_ns + 1) / 2;
  return e;
}

std::optional<ClockEstimate> best_estimate(std::span<const ClockSample> samples) {
  std::optional<ClockEstimate> best;
  for (const auto& s : samples) {
    auto e = estimate_of(s);
    if (e && (!best || e->uncertainty_ns <= best->uncertainty_ns)) best = e;
  }
  return best;
}

void ClockEstimator::add(const ClockSample& s) {
  if (!estimate_of(s)) return;
  samples_.push_back(s);
  while (samples_.size() > keep_) samples_.pop_front();
  const std::vector<ClockSample> all(samples_.begin(), samples_.end());
  best_ = best_estimate(all);
}

}  // namespace eacgm::history
