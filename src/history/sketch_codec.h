// StoredSketch: a latency distribution as the history keeps it: the non-empty buckets
// of an analysis::LatencySketch (or of the difference of two, one interval's calls) and
// its totals. Serialised compactly (varints, bucket indices as deltas, only non-empty
// buckets); merging two is exact, so intervals roll up into minutes and hours and any
// window's quantiles are those of its calls, within the sketch's accuracy.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/latency_sketch.h"
#include "core/result.h"

namespace eacgm::history {

struct StoredSketch {
  std::uint32_t bits = 0;  // sub-bucket bits of the indices (LatencySketch::bits())
  std::uint64_t count = 0;
  std::uint64_t zero_count = 0;
  std::uint64_t sum_ns = 0;
  std::uint64_t min_ns = 0;  // 0 when empty
  std::uint64_t max_ns = 0;
  std::vector<analysis::LatencySketch::Bucket> buckets;  // ascending index, counts > 0

  bool empty() const { return count == 0; }
  // Adds `other`'s values. Sketches of different bits: the coarser wins (the finer's
  // buckets nest in it); an empty one takes the other's bits.
  void merge(const StoredSketch& other);
  // Nearest-rank quantile, as LatencySketch::quantile answers it; 0 when empty.
  double quantile(double q) const;
  double mean() const { return count ? static_cast<double>(sum_ns) / static_cast<double>(count) : 0.0; }
};

// Sub-bucket bits the history keeps: each power of two split into 16 buckets, so any
// quantile is within 1/33 (3%) of the value. The analysis's 1% sketches have four times
// the buckets; the history would be four times the size for a precision a week-old p99
// does not need.
inline constexpr std::uint32_t kStoredBits = 4;

// The whole sketch.
StoredSketch stored(const analysis::LatencySketch& sketch);
// The same values in buckets of `bits` sub-bucket bits (a no-op when already as coarse).
StoredSketch coarsened(StoredSketch sketch, std::uint32_t bits);
// The calls in `now` that `before` (an earlier state of the same sketch) did not have.
// Min and max are those of the difference's lowest and highest buckets (the exact
// extremes of an interval are not known from two cumulative sketches).
StoredSketch difference(const analysis::LatencySketch& now, const analysis::LatencySketch* before);

std::string encode(const StoredSketch& sketch);
// Rejects truncated or malformed blobs (a damaged file loses a row, never the agent).
Result<StoredSketch> decode(std::span<const std::uint8_t> blob);

}  // namespace eacgm::history
