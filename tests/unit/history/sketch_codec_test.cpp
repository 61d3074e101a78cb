// The history's latency sketches: an interval's difference holds exactly its calls,
// merging intervals gives the sketch of the union, the codec round-trips, and damaged
// blobs are rejected.
#include "history/sketch_codec.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace eacgm::history {
namespace {

using analysis::LatencySketch;

std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

TEST(SketchCodec, DifferenceHoldsTheIntervalsCalls) {
  LatencySketch live;
  LatencySketch first_only;
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(10.0, 1.5);
  for (int i = 0; i < 5000; ++i) {
    const auto v = static_cast<std::uint64_t>(dist(rng));
    live.add(v);
  }
  const LatencySketch before = live;
  LatencySketch second;
  for (int i = 0; i < 3000; ++i) {
    const auto v = static_cast<std::uint64_t>(dist(rng)) + (i % 7 == 0 ? 0 : 1);
    live.add(v);
    second.add(v);
  }
  const StoredSketch d = difference(live, &before);
  const StoredSketch want = stored(second);
  EXPECT_EQ(d.count, 3000u);
  EXPECT_EQ(d.count, want.count);
  EXPECT_EQ(d.zero_count, want.zero_count);
  EXPECT_EQ(d.sum_ns, want.sum_ns);
  ASSERT_EQ(d.buckets.size(), want.buckets.size());
  for (std::size_t i = 0; i < d.buckets.size(); ++i) {
    EXPECT_EQ(d.buckets[i].index, want.buckets[i].index);
    EXPECT_EQ(d.buckets[i].count, want.buckets[i].count);
  }
  // Quantiles of the interval, within the bucket's width of the interval's own sketch.
  for (double q : {0.5, 0.9, 0.99}) {
    EXPECT_NEAR(d.quantile(q), second.quantile(q), second.quantile(q) * 0.02) << q;
  }
  (void)first_only;
}

TEST(SketchCodec, MergedIntervalsAreTheSketchOfTheirUnion) {
  LatencySketch a, b, both;
  for (std::uint64_t v = 1; v < 20000; v += 13) {
    a.add(v);
    both.add(v);
  }
  for (std::uint64_t v = 500; v < 900000; v += 977) {
    b.add(v);
    both.add(v);
  }
  StoredSketch m = stored(a);
  m.merge(stored(b));
  const StoredSketch want = stored(both);
  EXPECT_EQ(m.count, want.count);
  EXPECT_EQ(m.sum_ns, want.sum_ns);
  EXPECT_EQ(m.buckets.size(), want.buckets.size());
  for (double q : {0.01, 0.5, 0.99, 1.0}) EXPECT_DOUBLE_EQ(m.quantile(q), both.quantile(q)) << q;
}

TEST(SketchCodec, RoundTripsCompactly) {
  LatencySketch s;
  for (std::uint64_t v : {0ULL, 0ULL, 5ULL, 1000ULL, 1001ULL, 123456789ULL, 1ULL << 40}) s.add(v);
  const StoredSketch st = stored(s);
  const std::string blob = encode(st);
  // A version byte, six varint fields, two varints per non-empty bucket.
  EXPECT_LT(blob.size(), 64u);
  auto back = decode(bytes(blob));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->count, st.count);
  EXPECT_EQ(back->zero_count, 2u);
  EXPECT_EQ(back->sum_ns, st.sum_ns);
  EXPECT_EQ(back->min_ns, st.min_ns);
  EXPECT_EQ(back->max_ns, st.max_ns);
  ASSERT_EQ(back->buckets.size(), st.buckets.size());
  EXPECT_DOUBLE_EQ(back->quantile(0.5), s.quantile(0.5));
}

TEST(SketchCodec, RejectsDamagedBlobs) {
  LatencySketch s;
  for (std::uint64_t v = 1; v < 100; ++v) s.add(v * 1000);
  const std::string blob = encode(stored(s));
  EXPECT_FALSE(decode(bytes(blob.substr(0, blob.size() - 1))));
  EXPECT_FALSE(decode(bytes(blob + "x")));
  EXPECT_FALSE(decode(bytes(std::string())));
  std::string wrong = blob;
  wrong[0] = 9;  // an encoding this build does not know
  EXPECT_FALSE(decode(bytes(wrong)));
}

TEST(SketchCodec, CoarserBitsWinWhenMerging) {
  auto fine = LatencySketch::create({0.001, 4096});
  ASSERT_TRUE(fine);
  LatencySketch coarse;
  for (std::uint64_t v = 100; v < 100000; v += 101) {
    fine->add(v);
    coarse.add(v);
  }
  StoredSketch m = stored(*fine);
  m.merge(stored(coarse));
  EXPECT_EQ(m.bits, coarse.bits());
  EXPECT_EQ(m.count, fine->count() + coarse.count());
  EXPECT_NEAR(m.quantile(0.5), coarse.quantile(0.5), coarse.quantile(0.5) * 0.02);
}

TEST(SketchCodec, CoarsenedKeepsEveryValueWithinThreePercent) {
  LatencySketch s;
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> dist(9.0, 2.0);
  for (int i = 0; i < 20000; ++i) s.add(static_cast<std::uint64_t>(dist(rng)));
  const StoredSketch fine = stored(s);
  const StoredSketch coarse = coarsened(fine, kStoredBits);
  EXPECT_EQ(coarse.bits, kStoredBits);
  EXPECT_EQ(coarse.count, fine.count);
  EXPECT_EQ(coarse.sum_ns, fine.sum_ns);
  EXPECT_LT(coarse.buckets.size() * 3, fine.buckets.size());
  for (double q : {0.1, 0.5, 0.9, 0.99}) {
    EXPECT_NEAR(coarse.quantile(q), s.quantile(q), s.quantile(q) / 33.0 + s.quantile(q) / 129.0) << q;
  }
  EXPECT_LT(encode(coarse).size() * 2, encode(fine).size());
}

}  // namespace
}  // namespace eacgm::history
