// The history's latency sketches: difference, merge, quantile and a varint codec.
#include "history/sketch_codec.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace eacgm::history {
namespace {

using Bucket = analysis::LatencySketch::Bucket;
using analysis::LatencySketch;

constexpr std::uint8_t kVersion = 1;

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

bool get_varint(std::span<const std::uint8_t>& in, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in.empty()) return false;
    const std::uint8_t b = in.front();
    in = in.subspan(1);
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

// Re-indexes buckets of `from_bits` to the coarser `to_bits`: a finer bucket lies inside
// the coarser one that holds its lower bound.
std::vector<Bucket> coarsen(const std::vector<Bucket>& in, std::uint32_t from_bits, std::uint32_t to_bits) {
  if (from_bits == to_bits) return in;
  std::vector<Bucket> out;
  for (const Bucket& b : in) {
    const std::uint64_t lo = LatencySketch::lower_of(b.index, from_bits);
    const auto key = static_cast<std::int32_t>(eacgm_hist_key_bits(std::max<std::uint64_t>(lo, 1), to_bits));
    if (!out.empty() && out.back().index == key) {
      out.back().count += b.count;
    } else {
      out.push_back({key, b.count});
    }
  }
  return out;
}

void fill_extremes(StoredSketch& s) {
  if (s.count == 0) {
    s.min_ns = s.max_ns = 0;
    return;
  }
  s.min_ns =
      s.zero_count > 0 || s.buckets.empty() ? 0 : LatencySketch::lower_of(s.buckets.front().index, s.bits);
  s.max_ns = s.buckets.empty() ? 0 : LatencySketch::upper_of(s.buckets.back().index, s.bits) - 1;
}

}  // namespace

StoredSketch stored(const LatencySketch& sketch) {
  StoredSketch s;
  s.bits = sketch.bits();
  s.count = sketch.count();
  s.zero_count = sketch.zero_count();
  s.sum_ns = sketch.sum();
  s.min_ns = sketch.min();
  s.max_ns = sketch.max();
  s.buckets = sketch.buckets();
  return s;
}

StoredSketch coarsened(StoredSketch s, std::uint32_t bits) {
  if (s.count == 0 || bits >= s.bits) return s;
  s.buckets = coarsen(s.buckets, s.bits, bits);
  s.bits = bits;
  return s;
}

StoredSketch difference(const LatencySketch& now, const LatencySketch* before) {
  if (before == nullptr || before->count() == 0) return stored(now);
  StoredSketch s;
  s.bits = now.bits();
  const auto a = now.buckets();
  const auto b = before->buckets();
  std::size_t j = 0;
  for (const Bucket& x : a) {
    while (j < b.size() && b[j].index < x.index) ++j;
    const std::uint64_t old = j < b.size() && b[j].index == x.index ? b[j].count : 0;
    if (x.count > old) s.buckets.push_back({x.index, x.count - old});
  }
  s.zero_count = now.zero_count() > before->zero_count() ? now.zero_count() - before->zero_count() : 0;
  s.count = s.zero_count;
  for (const Bucket& x : s.buckets) s.count += x.count;
  s.sum_ns = now.sum() > before->sum() ? now.sum() - before->sum() : 0;
  fill_extremes(s);
  return s;
}

void StoredSketch::merge(const StoredSketch& other) {
  if (other.count == 0) return;
  if (count == 0) {
    *this = other;
    return;
  }
  const std::uint32_t to = std::min(bits, other.bits);
  std::vector<Bucket> mine = coarsen(buckets, bits, to);
  const std::vector<Bucket> theirs = coarsen(other.buckets, other.bits, to);
  std::vector<Bucket> out;
  out.reserve(mine.size() + theirs.size());
  std::size_t i = 0, j = 0;
  while (i < mine.size() || j < theirs.size()) {
    if (j == theirs.size() || (i < mine.size() && mine[i].index < theirs[j].index)) {
      out.push_back(mine[i++]);
    } else if (i == mine.size() || theirs[j].index < mine[i].index) {
      out.push_back(theirs[j++]);
    } else {
      out.push_back({mine[i].index, mine[i].count + theirs[j].count});
      ++i;
      ++j;
    }
  }
  buckets = std::move(out);
  bits = to;
  count += other.count;
  zero_count += other.zero_count;
  if (__builtin_add_overflow(sum_ns, other.sum_ns, &sum_ns))
    sum_ns = std::numeric_limits<std::uint64_t>::max();
  min_ns = std::min(min_ns, other.min_ns);
  max_ns = std::max(max_ns, other.max_ns);
}

double StoredSketch::quantile(double q) const {
  if (count == 0) return 0.0;
  q = std::clamp(q, 0.0, 1.0);
  const auto rank =
      std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count))));
  if (rank <= zero_count) return 0.0;
  if (rank == count) return static_cast<double>(max_ns);
  std::uint64_t seen = zero_count;
  for (const Bucket& b : buckets) {
    seen += b.count;
    if (seen >= rank) {
      const double l = static_cast<double>(LatencySketch::lower_of(b.index, bits));
      const double u = static_cast<double>(LatencySketch::upper_of(b.index, bits)) - 1.0;
      const double v = u <= l ? l : 2.0 * l * u / (l + u);
      return std::clamp(v, static_cast<double>(min_ns), static_cast<double>(max_ns));
    }
  }
  return static_cast<double>(max_ns);
}

std::string encode(const StoredSketch& s) {
  std::string out;
  out.reserve(8 + s.buckets.size() * 3);
  out.push_back(static_cast<char>(kVersion));
  put_varint(out, s.bits);
  put_varint(out, s.zero_count);
  put_varint(out, s.sum_ns);
  put_varint(out, s.min_ns);
  put_varint(out, s.max_ns);
  put_varint(out, s.buckets.size());
  std::int64_t prev = 0;
  for (const Bucket& b : s.buckets) {
    put_varint(out, zigzag(static_cast<std::int64_t>(b.index) - prev));
    put_varint(out, b.count);
    prev = b.index;
  }
  return out;
}

Result<StoredSketch> decode(std::span<const std::uint8_t> in) {
  if (in.empty() || in.front() != kVersion) return make_error("latency sketch: unknown encoding");
  in = in.subspan(1);
  StoredSketch s;
  std::uint64_t bits = 0, n = 0;
  if (!get_varint(in, bits) || !get_varint(in, s.zero_count) || !get_varint(in, s.sum_ns) ||
      !get_varint(in, s.min_ns) || !get_varint(in, s.max_ns) || !get_varint(in, n)) {
    return make_error("latency sketch: truncated");
  }
  if (bits > LatencySketch::kMaxBits || n > in.size()) return make_error("latency sketch: malformed");
  s.bits = static_cast<std::uint32_t>(bits);
  s.buckets.reserve(n);
  std::int64_t prev = 0;
  s.count = s.zero_count;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t delta = 0, c = 0;
    if (!get_varint(in, delta) || !get_varint(in, c)) return make_error("latency sketch: truncated");
    prev += unzigzag(delta);
    if (prev < std::numeric_limits<std::int32_t>::min() || prev > std::numeric_limits<std::int32_t>::max() ||
        c == 0 || (!s.buckets.empty() && prev <= s.buckets.back().index)) {
      return make_error("latency sketch: malformed");
    }
    s.buckets.push_back({static_cast<std::int32_t>(prev), c});
    s.count += c;
  }
  if (!in.empty()) return make_error("latency sketch: trailing bytes");
  return s;
}

}  // namespace eacgm::history
