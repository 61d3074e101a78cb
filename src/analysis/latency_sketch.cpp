// LatencySketch: bucket window management, quantile walk and exact merge. Only the
// window changes (growth, collapse) live here; the per-value path is inline in the header.
#include "analysis/latency_sketch.h"

#include <fmt/format.h>

#include <algorithm>

namespace eacgm::analysis {

namespace {
// Small first window: most functions span a few decades of latency, so the window
// rarely needs to grow more than a few times before it stops allocating.
constexpr std::size_t kInitialWindow = 64;
}  // namespace

LatencySketch::LatencySketch(const Options& options, int /*validated*/)
    : alpha_(options.relative_accuracy), cap_(options.max_buckets) {
  // gamma = (1 + a) / (1 - a); log1p keeps precision for small a.
  log_gamma_ = std::log1p(2.0 * alpha_ / (1.0 - alpha_));
  inv_log_gamma_ = 1.0 / log_gamma_;
}

Result<LatencySketch> LatencySketch::create(const Options& options) {
  if (!(options.relative_accuracy > 0.0 && options.relative_accuracy < 1.0)) {
    return make_error(fmt::format(
        "latency sketch: relative accuracy {} is out of range; use a value in (0, 1), such as 0.01 for 1%",
        options.relative_accuracy));
  }
  if (options.max_buckets < 1) {
    return make_error(
        "latency sketch: max_buckets is 0; use at least 1 (at 1% accuracy, 2048 buckets span 1 ns to 19 "
        "years)");
  }
  return LatencySketch(options, 0);
}

double LatencySketch::bucket_value(std::int32_t index) const {
  // 2 * gamma^i / (gamma + 1) is within alpha of both ends of (gamma^(i-1), gamma^i].
  const double gamma = std::exp(log_gamma_);
  return 2.0 * std::exp(index * log_gamma_) / (gamma + 1.0);
}

void LatencySketch::rebase(std::int32_t new_lo, std::int32_t new_hi) {
  std::uint64_t folded = 0;
  if (nonzero_ != 0 && lo_ < new_lo) {
    // Every previously collapsed value sits in bucket lo_, so after folding the
    // collapsed count is exactly what lies below new_lo (order of adds does not matter).
    for (std::int32_t k = lo_; k < new_lo && k <= hi_; ++k) {
      const auto slot = static_cast<std::size_t>(k - offset_);
      folded += counts_[slot];
      counts_[slot] = 0;
    }
    collapsed_ = folded;
  }

  const auto end = offset_ + static_cast<std::int64_t>(counts_.size());
  if (counts_.empty() || new_lo < offset_ || new_hi >= end) {
    const auto need = static_cast<std::size_t>(new_hi - new_lo) + 1;
    std::size_t size = std::max({need, counts_.size() * 2, kInitialWindow});
    size = std::min<std::size_t>(size, cap_);
    // Leave the slack on the side the range is growing toward.
    const bool growing_down = !counts_.empty() && new_lo < offset_ && new_hi < end;
    const std::int64_t new_offset =
        growing_down ? static_cast<std::int64_t>(new_hi) - static_cast<std::int64_t>(size) + 1 : new_lo;
    std::vector<std::uint64_t> next(size, 0);
    if (nonzero_ != 0) {
      for (std::int32_t k = std::max(lo_, new_lo); k <= hi_; ++k) {
        next[static_cast<std::size_t>(k - new_offset)] = at(k);
      }
    }
    counts_ = std::move(next);
    offset_ = new_offset;
  }
  counts_[static_cast<std::size_t>(new_lo - offset_)] += folded;
}

void LatencySketch::add_slow(std::int32_t key, std::uint64_t n) {
  std::int32_t new_lo = key;
  std::int32_t new_hi = key;
  if (nonzero_ != 0) {
    new_lo = std::min(lo_, key);
    new_hi = std::max(hi_, key);
  }
  const auto lowest_kept = static_cast<std::int64_t>(new_hi) - cap_ + 1;
  if (new_lo < lowest_kept) new_lo = static_cast<std::int32_t>(lowest_kept);
  rebase(new_lo, new_hi);
  if (key < new_lo) {
    collapsed_ += n;
    key = new_lo;
  }
  counts_[static_cast<std::size_t>(key - offset_)] += n;
  nonzero_ += n;
  lo_ = new_lo;
  hi_ = new_hi;
}

double LatencySketch::quantile(double q) const {
  if (count_ == 0) return 0.0;
  if (!(q >= 0.0)) q = 0.0;  // also catches NaN
  if (q > 1.0) q = 1.0;
  // Nearest rank: the smallest value with at least q * count values at or below it
  // (1-based rank ceil(q * count)). For a sample of n < 100 values p99 is then the
  // maximum, as it must be: floor(q * (n - 1)) gave the second largest of 10 values.
  // The small slack keeps q * n that should be whole (0.99 * 100) from rounding up.
  const double n = static_cast<double>(count_);
  const double nearest = std::ceil(q * n - 1e-9 * n);
  const auto rank =
      nearest <= 1.0 ? std::uint64_t{0} : std::min(static_cast<std::uint64_t>(nearest) - 1, count_ - 1);
  // The extremes are known exactly, so do not answer them from a bucket.
  if (rank == 0) return static_cast<double>(min_);
  if (rank == count_ - 1) return static_cast<double>(max_);
  if (rank < zero_count_) return 0.0;
  const std::uint64_t target = rank - zero_count_;
  std::uint64_t seen = 0;
  for (std::int32_t k = lo_; k <= hi_; ++k) {
    seen += at(k);
    if (seen > target) {
      return std::clamp(bucket_value(k), static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);  // unreachable while counts are consistent
}

Status LatencySketch::merge(const LatencySketch& other) {
  if (other.alpha_ != alpha_) {
    return make_error(fmt::format(
        "latency sketch: cannot merge a sketch of relative accuracy {} into one of {}; their buckets differ, "
        "so configure the same accuracy on every node",
        other.alpha_, alpha_));
  }
  if (&other == this) {
    const LatencySketch copy = other;  // NOLINT(performance-unnecessary-copy-initialization): merging into
                                       // itself would read what it writes
    return merge(copy);
  }
  count_ += other.count_;
  if (__builtin_add_overflow(sum_, other.sum_, &sum_)) sum_ = std::numeric_limits<std::uint64_t>::max();
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  zero_count_ += other.zero_count_;
  if (other.nonzero_ == 0) return {};

  std::int32_t new_lo = other.lo_;
  std::int32_t new_hi = other.hi_;
  if (nonzero_ != 0) {
    new_lo = std::min(lo_, other.lo_);
    new_hi = std::max(hi_, other.hi_);
  }
  const auto lowest_kept = static_cast<std::int64_t>(new_hi) - cap_ + 1;
  if (new_lo < lowest_kept) new_lo = static_cast<std::int32_t>(lowest_kept);
  rebase(new_lo, new_hi);  // sets collapsed_ for this side's values

  // The other side's collapsed values all sit in other.lo_; if that bucket survives,
  // they stay counted as collapsed, otherwise everything folded is.
  std::uint64_t folded = 0;
  for (std::int32_t k = other.lo_; k <= other.hi_; ++k) {
    const std::uint64_t c = other.at(k);
    if (k < new_lo) {
      folded += c;
    } else {
      counts_[static_cast<std::size_t>(k - offset_)] += c;
    }
  }
  counts_[static_cast<std::size_t>(new_lo - offset_)] += folded;
  collapsed_ += other.lo_ < new_lo ? folded : other.collapsed_;
  nonzero_ += other.nonzero_;
  lo_ = new_lo;
  hi_ = new_hi;
  return {};
}

std::vector<LatencySketch::Bucket> LatencySketch::buckets() const {
  std::vector<Bucket> out;
  if (nonzero_ == 0) return out;
  for (std::int32_t k = lo_; k <= hi_; ++k) {
    if (const std::uint64_t c = at(k)) out.push_back({k, c});
  }
  return out;
}

}  // namespace eacgm::analysis
