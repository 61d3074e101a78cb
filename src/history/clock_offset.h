// The node's clock against a reference clock (the PostgreSQL server's), measured the
// way NTP does: read the local clock before (t0) and after (t1) a round trip that reads
// the reference. The reference's reading was taken somewhere inside the round trip, so
// the offset (reference minus local) is its reading minus the midpoint, and it cannot
// be wrong by more than half the round trip (plus half the reference's resolution),
// however unevenly the delay splits between the two ways. The estimate is the sample
// with the smallest bound among the last few.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>

namespace eacgm::history {

// One round trip: the local clock before and after it, and the reference's reading,
// which truncates the reference's time to `resolution_ns` (PostgreSQL: 1 µs).
struct ClockSample {
  std::int64_t t0_ns = 0;
  std::int64_t reference_ns = 0;
  std::int64_t t1_ns = 0;
  std::int64_t resolution_ns = 1;
};

// The reference minus the local clock, and the bound on its error: the reference's true
// offset lies within [offset_ns - uncertainty_ns, offset_ns + uncertainty_ns].
struct ClockEstimate {
  std::int64_t measured_ns = 0;  // the reference's reading of the sample (its clock)
  std::int64_t offset_ns = 0;
  std::int64_t uncertainty_ns = 0;
};

// One sample's estimate; none when the local clock went backwards across it.
std::optional<ClockEstimate> estimate_of(const ClockSample& s);

// The estimate of the smallest bound among `samples` (the latest of equal bounds); none
// when no sample is usable.
std::optional<ClockEstimate> best_estimate(std::span<const ClockSample> samples);

// The last `keep` samples and their best estimate.
class ClockEstimator {
 public:
  explicit ClockEstimator(std::size_t keep = 8) : keep_(keep == 0 ? 1 : keep) {}
  void add(const ClockSample& s);
  std::optional<ClockEstimate> best() const { return best_; }

 private:
  std::size_t keep_;
  std::deque<ClockSample> samples_;
  std::optional<ClockEstimate> best_;
};

}  // namespace eacgm::history
