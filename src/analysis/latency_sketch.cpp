// LatencySketch: bucket list and window management, quantile walk and exact merge. Only
// the list's and the window's changes (growth, collapse) live here; the per-value path of
// a window is inline in the header.
#include "analysis/latency_sketch.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace eacgm::analysis {

namespace {
// Small first window: most functions span a few decades of latency, so the window
// rarely needs to grow more than a few times before it stops allocating.
constexpr std::size_t kInitialWindow = 64;
}  // namespace

LatencySketch::LatencySketch(const Options& options, int /*validated*/)
    : alpha_(options.relative_accuracy), cap_(options.max_buckets) {
  // The fewest bits whose worst bucket error 1 / (2^(bits+1) + 1) meets the accuracy.
  bits_ = 1;
  while (bits_ < kMaxBits && 1.0 / static_cast<double>((std::uint64_t{1} << (bits_ + 1)) + 1) > alpha_)
    ++bits_;
}

std::uint64_t LatencySketch::lower_of(std::int64_t key, std::uint32_t bits) {
  const std::int64_t sub = std::int64_t{1} << bits;
  if (key < 2 * sub)
    return static_cast<std::uint64_t>(std::max<std::int64_t>(key, 0));  // exact below 2^(bits+1)
  const std::int64_t shift = key / sub - 1;
  const std::int64_t m = key % sub;
  if (shift + bits >= 64) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(sub + m) << shift;
}

std::uint64_t LatencySketch::upper_of(std::int64_t key, std::uint32_t bits) {
  const std::uint64_t next = lower_of(key + 1, bits);
  return next > lower_of(key, bits) ? next : std::numeric_limits<std::uint64_t>::max();
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
  // Values are integers in [l, u - 1]; 2l(u-1) / (l + u - 1) is as far (relatively) from
  // both ends, and from every value between them, within 1 / (2^(bits+1) + 1).
  const double l = bucket_lower_bound(index);
  const double u = bucket_upper_bound(index) - 1.0;
  if (u <= l) return l;
  return 2.0 * l * u / (l + u);
}

void LatencySketch::add_bucket(std::uint32_t key, std::uint32_t bits, std::uint64_t n, std::uint64_t sum_ns) {
  if (n == 0) return;
  const std::uint64_t lo = lower_of(key, bits);
  const std::uint64_t hi = upper_of(key, bits) - 1;
  count_ += n;
  if (__builtin_add_overflow(sum_, sum_ns, &sum_)) sum_ = std::numeric_limits<std::uint64_t>::max();
  if (lo < min_) min_ = lo;
  if (hi > max_) max_ = hi;
  if (lo == 0) {
    zero_count_ += n;
    return;
  }
  // Finer (or equal) buckets lie inside one of ours: their lower bound names it.
  add_slow(key_of(lo), n);
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

bool LatencySketch::add_sparse(std::int32_t key, std::uint64_t n) {
  const std::int32_t new_lo = nonzero_ != 0 ? std::min(lo_, key) : key;
  const std::int32_t new_hi = nonzero_ != 0 ? std::max(hi_, key) : key;
  if (static_cast<std::int64_t>(new_hi) - new_lo >= cap_) return false;  // would collapse: a window's job
  if (sparse_.empty()) sparse_.reserve(4);
  auto it = std::lower_bound(sparse_.begin(), sparse_.end(), key,
                             [](const Bucket& b, std::int32_t k) { return b.index < k; });
  if (it != sparse_.end() && it->index == key) {
    it->count += n;
  } else {
    if (sparse_.size() >= kMaxSparseBuckets) return false;
    sparse_.insert(it, Bucket{key, n});
  }
  nonzero_ += n;
  lo_ = new_lo;
  hi_ = new_hi;
  return true;
}

void LatencySketch::densify() {
  if (nonzero_ != 0) {
    // The list never spans more than the cap (add_sparse, compact).
    const auto span = static_cast<std::size_t>(hi_ - lo_) + 1;
    std::vector<std::uint64_t> window(std::min<std::size_t>(std::max(span, kInitialWindow), cap_), 0);
    for (const Bucket& b : sparse_) window[static_cast<std::size_t>(b.index - lo_)] = b.count;
    counts_ = std::move(window);
    offset_ = lo_;
  }
  sparse_ = std::vector<Bucket>{};
}

void LatencySketch::sparsify() {
  sparse_ = buckets();
  counts_ = std::vector<std::uint64_t>{};
}

std::size_t LatencySketch::held_buckets() const {
  std::size_t held = 0;
  for_each_bucket([&held](std::int32_t, std::uint64_t) { ++held; });
  return held;
}

void LatencySketch::add_slow(std::int32_t key, std::uint64_t n) {
  // The buckets' span once `key` is in. A narrow range is a window's (its adds take the
  // inline path); a list only saves memory where few values lie far apart.
  const std::int64_t span = nonzero_ != 0 ? static_cast<std::int64_t>(std::max(hi_, key)) -
                                                static_cast<std::int64_t>(std::min(lo_, key)) + 1
                                          : 1;
  if (sparse()) {
    if (span > static_cast<std::int64_t>(kInitialWindow) && add_sparse(key, n)) return;
    densify();
  } else if (span > static_cast<std::int64_t>(std::max(counts_.size(), kInitialWindow))) {
    // The window would grow for a value far from the few it holds: a list instead.
    if (held_buckets() < kMaxSparseBuckets) {
      sparsify();
      if (add_sparse(key, n)) return;
      densify();
    }
  }
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
  if (sparse()) {
    for (const Bucket& b : sparse_) {
      seen += b.count;
      if (seen > target) {
        return std::clamp(bucket_value(b.index), static_cast<double>(min_), static_cast<double>(max_));
      }
    }
    return static_cast<double>(max_);  // unreachable while counts are consistent
  }
  for (std::int32_t k = lo_; k <= hi_; ++k) {
    seen += at(k);
    if (seen > target) {
      return std::clamp(bucket_value(k), static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);  // unreachable while counts are consistent
}

Status LatencySketch::merge(const LatencySketch& other) {
  if (other.bits_ != bits_) {
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

  if (sparse() && other.sparse() && merge_lists(other)) return {};
  if (sparse()) densify();
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
  other.for_each_bucket([&](std::int32_t k, std::uint64_t c) {
    if (k < new_lo) {
      folded += c;
    } else {
      counts_[static_cast<std::size_t>(k - offset_)] += c;
    }
  });
  counts_[static_cast<std::size_t>(new_lo - offset_)] += folded;
  collapsed_ += other.lo_ < new_lo ? folded : other.collapsed_;
  nonzero_ += other.nonzero_;
  lo_ = new_lo;
  hi_ = new_hi;
  return {};
}

LatencySketch LatencySketch::compact() const {
  LatencySketch out(Options{alpha_, cap_}, 0);
  out.bits_ = bits_;
  out.lo_ = lo_;
  out.hi_ = hi_;
  out.nonzero_ = nonzero_;
  out.count_ = count_;
  out.zero_count_ = zero_count_;
  out.collapsed_ = collapsed_;
  out.sum_ = sum_;
  out.min_ = min_;
  out.max_ = max_;
  if (nonzero_ == 0) return out;
  const std::size_t entries = held_buckets();
  const auto span = static_cast<std::size_t>(hi_ - lo_) + 1;
  if (entries <= kMaxSparseBuckets && entries * sizeof(Bucket) <= span * sizeof(std::uint64_t)) {
    out.sparse_ = buckets();
  } else {
    out.counts_.assign(span, 0);
    for_each_bucket(
        [&](std::int32_t k, std::uint64_t c) { out.counts_[static_cast<std::size_t>(k - lo_)] = c; });
    out.offset_ = lo_;
  }
  return out;
}

bool LatencySketch::merge_lists(const LatencySketch& other) {
  const std::int32_t new_lo = nonzero_ != 0 ? std::min(lo_, other.lo_) : other.lo_;
  const std::int32_t new_hi = nonzero_ != 0 ? std::max(hi_, other.hi_) : other.hi_;
  if (static_cast<std::int64_t>(new_hi) - new_lo >= cap_) return false;
  std::vector<Bucket> merged;
  merged.reserve(sparse_.size() + other.sparse_.size());
  auto a = sparse_.begin();
  auto b = other.sparse_.begin();
  while (a != sparse_.end() || b != other.sparse_.end()) {
    if (b == other.sparse_.end() || (a != sparse_.end() && a->index < b->index)) {
      merged.push_back(*a++);
    } else if (a == sparse_.end() || b->index < a->index) {
      merged.push_back(*b++);
    } else {
      merged.push_back({a->index, a->count + b->count});
      ++a;
      ++b;
    }
  }
  if (merged.size() > kMaxSparseBuckets) return false;
  sparse_ = std::move(merged);
  nonzero_ += other.nonzero_;
  collapsed_ += other.collapsed_;  // nothing folds: the lists' values all sit in their buckets
  lo_ = new_lo;
  hi_ = new_hi;
  return true;
}

std::vector<LatencySketch::Bucket> LatencySketch::buckets() const {
  if (sparse()) return sparse_;
  std::vector<Bucket> out;
  out.reserve(held_buckets());
  for_each_bucket([&out](std::int32_t k, std::uint64_t c) { out.push_back({k, c}); });
  return out;
}

}  // namespace eacgm::analysis
