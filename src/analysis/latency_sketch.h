// LatencySketch: a quantile sketch of durations (ns) with a relative-error guarantee, a
// bounded number of buckets, and exact merge across threads, nodes and the kernel. Its
// buckets are log-linear (bpf/events.h eacgm_hist_key_bits: each power of two split into
// 2^bits equal buckets), integer-computed, so the BPF programs' in-kernel histograms of
// sampled durations are buckets of this sketch and merge into it exactly. Its buckets are
// a dense window; a sketch of few distinct buckets spread wider than the smallest window
// keeps them as a sorted list instead (kMaxSparseBuckets at most: a process's 5 us calls
// and one 20 ms stall are 2 entries, not a window of 1,000 buckets), and takes a window
// again past that. Values within a narrow range (most functions') stay in a window, whose
// adds are the inline path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "bpf/events.h"
#include "core/result.h"

namespace eacgm::analysis {

class LatencySketch {
 public:
  struct Options {
    // Any quantile is reported within this relative error. The sketch takes the fewest
    // sub-bucket bits that meet it: 1 / (2^(bits+1) + 1) <= accuracy (1% -> 6 bits, 0.78%,
    // the kernel's EACGM_HIST_BITS).
    double relative_accuracy = 0.01;
    // Cap on stored buckets. Past it the lowest buckets are folded into the lowest kept
    // one: tail quantiles (what latency alerts read) stay accurate, the low end degrades.
    // 4096 at 6 bits covers every 64-bit value, so the default never collapses.
    std::uint32_t max_buckets = 4096;
  };

  // One non-empty bucket: values v with bucket_lower_bound(index) <= v < bucket_upper_bound(index).
  struct Bucket {
    std::int32_t index = 0;
    std::uint64_t count = 0;
  };

  // Defaults (1%, 2048 buckets) are always valid.
  LatencySketch() : LatencySketch(Options{}, 0) {}

  // Rejects accuracies outside (0, 1) and bucket caps below 1.
  static Result<LatencySketch> create(const Options& options);

  // Distinct non-empty buckets kept as a sorted list before the sketch takes a dense
  // window: the list's bytes (16 each) stay within the smallest window's (64 of 8).
  static constexpr std::size_t kMaxSparseBuckets = 32;

  // Hot path: O(1), no allocation once the bucket window has grown to cover the
  // observed range (it only grows when a new lowest or highest bucket appears). While
  // the sketch holds few distinct buckets, a binary search of their list.
  void add(std::uint64_t ns) {
    ++count_;
    if (__builtin_add_overflow(sum_, ns, &sum_)) sum_ = std::numeric_limits<std::uint64_t>::max();
    if (ns < min_) min_ = ns;
    if (ns > max_) max_ = ns;
    if (ns == 0) {
      ++zero_count_;
      return;
    }
    const std::int32_t key = key_of(ns);
    const auto slot = static_cast<std::uint64_t>(static_cast<std::int64_t>(key) - offset_);
    if (slot < counts_.size() && nonzero_ != 0) {
      ++counts_[slot];
      ++nonzero_;
      if (key < lo_) lo_ = key;
      if (key > hi_) hi_ = key;
      return;
    }
    add_slow(key, 1);
  }

  // Value at quantile q in [0, 1] (clamped), or 0 for an empty sketch. Uses the nearest
  // rank ceil(q * count) (1-based) of the sorted values, so with fewer than 100 values
  // p99 is the maximum; zeros, the lowest and the highest rank are exact, and every
  // answer is clamped to [min, max].
  double quantile(double q) const;

  // Adds `other` as if its values had been added here. Exact: the result equals the
  // sketch of the union, bucket for bucket, when both share sub-bucket bits and cap.
  Status merge(const LatencySketch& other);

  // Adds `n` values known only by their bucket under the scheme of `bits` sub-bucket
  // bits (the kernel's histograms: EACGM_HIST_BITS) and their sum. Exact when `bits`
  // is at least this sketch's (finer buckets nest in coarser ones); min and max become
  // the bucket's bounds.
  void add_bucket(std::uint32_t key, std::uint32_t bits, std::uint64_t n, std::uint64_t sum_ns);

  std::uint64_t count() const { return count_; }
  std::uint64_t sum() const { return sum_; }  // saturates instead of wrapping
  std::uint64_t min() const { return count_ ? min_ : 0; }
  std::uint64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
  std::uint64_t zero_count() const { return zero_count_; }
  // Values whose own bucket fell below the kept window and were folded into the
  // lowest kept bucket; their quantile error is not bounded by the accuracy.
  std::uint64_t collapsed_count() const { return collapsed_; }

  double relative_accuracy() const { return alpha_; }
  std::uint32_t bits() const { return bits_; }
  std::uint32_t max_buckets() const { return cap_; }

  // A copy holding its buckets in the fewest bytes: the list of its non-empty buckets,
  // or a window of exactly its lowest to highest one, whichever is smaller; the same
  // values, without the slack a growing window keeps (up to half of it). For copies that
  // are read, not added to (a published summary); adding to one still works.
  LatencySketch compact() const;
  // Bytes this sketch holds on the heap (its bucket window or list).
  std::size_t heap_bytes() const {
    return counts_.capacity() * sizeof(std::uint64_t) + sparse_.capacity() * sizeof(Bucket);
  }
  // Whether the buckets are kept as a list (few distinct ones; empty sketches too).
  bool sparse() const { return counts_.empty(); }

  // Non-empty buckets in ascending index order (zeros excluded: see zero_count()).
  std::vector<Bucket> buckets() const;
  // Bucket bounds in ns: [lower, upper).
  double bucket_lower_bound(std::int32_t index) const { return static_cast<double>(lower_of(index, bits_)); }
  double bucket_upper_bound(std::int32_t index) const { return static_cast<double>(upper_of(index, bits_)); }
  // The value reported for a bucket: within the accuracy of every value in it.
  double bucket_value(std::int32_t index) const;
  // Bucket a value > 0 falls into.
  std::int32_t key_of(std::uint64_t ns) const {
    return static_cast<std::int32_t>(eacgm_hist_key_bits(ns, bits_));
  }
  // Bounds of a bucket under `bits` sub-bucket bits: [lower, upper).
  static std::uint64_t lower_of(std::int64_t key, std::uint32_t bits);
  static std::uint64_t upper_of(std::int64_t key, std::uint32_t bits);
  static constexpr std::uint32_t kMaxBits = 10;

 private:
  LatencySketch(const Options& options, int /*validated*/);
  void add_slow(std::int32_t key, std::uint64_t n);
  // Adds `n` to bucket `key` in the list; false (nothing changed) when the list is full
  // or the range would pass the bucket cap: the caller then takes a window.
  bool add_sparse(std::int32_t key, std::uint64_t n);
  // The list's buckets moved into a window over [lo_, hi_].
  void densify();
  // The window's buckets moved into a list (the caller knows they fit).
  void sparsify();
  // Its non-empty buckets' number.
  std::size_t held_buckets() const;
  // Merges `other`'s list into this one's; false (nothing changed) when the union would
  // not fit a list.
  bool merge_lists(const LatencySketch& other);
  // Re-centres the window on [new_lo, new_hi] (new_hi - new_lo < cap_), folding any
  // stored bucket below new_lo into new_lo.
  void rebase(std::int32_t new_lo, std::int32_t new_hi);
  std::uint64_t at(std::int32_t key) const {
    const auto slot = static_cast<std::int64_t>(key) - offset_;
    return slot >= 0 && static_cast<std::uint64_t>(slot) < counts_.size() ? counts_[slot] : 0;
  }
  // Each non-empty bucket in ascending order, from the list or the window.
  template <typename F>
  void for_each_bucket(F&& f) const {
    if (sparse()) {
      for (const Bucket& b : sparse_) f(b.index, b.count);
      return;
    }
    if (nonzero_ == 0) return;
    for (std::int32_t k = lo_; k <= hi_; ++k) {
      if (const std::uint64_t c = at(k)) f(k, c);
    }
  }

  double alpha_ = 0.01;
  std::uint32_t bits_ = EACGM_HIST_BITS;
  std::uint32_t cap_ = 4096;

  std::vector<std::uint64_t> counts_;  // dense window: counts_[i] is bucket offset_ + i
  std::vector<Bucket> sparse_;         // or, while counts_ is empty, the non-empty buckets
  std::int64_t offset_ = 0;
  std::int32_t lo_ = 0;        // lowest non-empty bucket (valid when nonzero_ > 0)
  std::int32_t hi_ = 0;        // highest non-empty bucket
  std::uint64_t nonzero_ = 0;  // values in buckets (count_ - zero_count_)

  std::uint64_t count_ = 0;
  std::uint64_t zero_count_ = 0;
  std::uint64_t collapsed_ = 0;
  std::uint64_t sum_ = 0;
  std::uint64_t min_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_ = 0;
};

}  // namespace eacgm::analysis
