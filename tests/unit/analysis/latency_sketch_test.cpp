// LatencySketch: relative-error quantiles against exact sorted quantiles, exact merge,
// bounded buckets with counted collapse, and option validation.
#include "analysis/latency_sketch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <vector>

namespace eacgm::analysis {
namespace {

const std::vector<double> kQuantiles{0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0};

LatencySketch make(double alpha, std::uint32_t cap = 2048) {
  auto s = LatencySketch::create({alpha, cap});
  EXPECT_TRUE(s.ok()) << s.error();
  return std::move(s).value();
}

// The sketch reports the value of nearest rank ceil(q * n) (1-based) of the sorted input.
std::size_t nearest_rank(std::size_t n, double q) {
  const double r = std::ceil(q * static_cast<double>(n) - 1e-9 * static_cast<double>(n));
  return r <= 1.0 ? 0 : std::min(static_cast<std::size_t>(r) - 1, n - 1);
}

double exact_quantile(std::vector<std::uint64_t> sorted, double q) {
  std::sort(sorted.begin(), sorted.end());
  return static_cast<double>(sorted[nearest_rank(sorted.size(), q)]);
}

void expect_within(const LatencySketch& s, const std::vector<std::uint64_t>& values, double alpha) {
  std::vector<std::uint64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (double q : kQuantiles) {
    const double exact = static_cast<double>(sorted[nearest_rank(sorted.size(), q)]);
    const double got = s.quantile(q);
    if (exact == 0.0) {
      EXPECT_EQ(got, 0.0) << "q=" << q;
    } else {
      // A hair over alpha for the rounding of log() at bucket edges.
      EXPECT_LE(std::abs(got - exact) / exact, alpha * (1 + 1e-9) + 1e-12)
          << "q=" << q << " exact=" << exact << " got=" << got;
    }
  }
}

void expect_same(const LatencySketch& a, const LatencySketch& b) {
  EXPECT_EQ(a.count(), b.count());
  EXPECT_EQ(a.sum(), b.sum());
  EXPECT_EQ(a.min(), b.min());
  EXPECT_EQ(a.max(), b.max());
  EXPECT_EQ(a.zero_count(), b.zero_count());
  EXPECT_EQ(a.collapsed_count(), b.collapsed_count());
  const auto ba = a.buckets();
  const auto bb = b.buckets();
  ASSERT_EQ(ba.size(), bb.size());
  for (std::size_t i = 0; i < ba.size(); ++i) {
    EXPECT_EQ(ba[i].index, bb[i].index) << "bucket " << i;
    EXPECT_EQ(ba[i].count, bb[i].count) << "bucket " << i;
  }
  for (double q : kQuantiles) EXPECT_EQ(a.quantile(q), b.quantile(q)) << "q=" << q;
}

// Small samples: p99 of fewer than 100 values is the maximum (10 cudaMalloc calls of
// which one took 190 us must not report p99 = 8 us), p50 is a middle value.
TEST(LatencySketch, TinySamplesUseNearestRank) {
  {
    LatencySketch s;
    s.add(4200);
    for (double q : kQuantiles) EXPECT_EQ(s.quantile(q), 4200.0) << "q=" << q;
  }
  {
    LatencySketch s;
    s.add(1000);
    s.add(9000);
    EXPECT_EQ(s.quantile(0.0), 1000.0);
    EXPECT_EQ(s.quantile(0.5), 1000.0);  // rank ceil(0.5 * 2) = 1: the lower value
    EXPECT_EQ(s.quantile(0.51), 9000.0);
    EXPECT_EQ(s.quantile(0.99), 9000.0);
  }
  {
    LatencySketch s;
    for (int i = 0; i < 9; ++i) s.add(8000 + static_cast<std::uint64_t>(i) * 100);
    s.add(190'000);
    EXPECT_EQ(s.quantile(0.99), 190'000.0);
    EXPECT_NEAR(s.quantile(0.9), 8800.0, 8800.0 * 0.01);  // 9th of 10
    EXPECT_NEAR(s.quantile(0.5), 8400.0, 8400.0 * 0.01);  // 5th of 10
  }
  {
    LatencySketch s;
    std::vector<std::uint64_t> v;
    for (std::uint64_t i = 1; i <= 99; ++i) v.push_back(i * 1000);
    for (auto x : v) s.add(x);
    EXPECT_EQ(s.quantile(0.99), 99'000.0);  // rank ceil(98.01) = 99: the maximum
    EXPECT_NEAR(s.quantile(0.98), 98'000.0, 98'000.0 * 0.01);
    EXPECT_NEAR(s.quantile(0.5), 50'000.0, 50'000.0 * 0.01);
    expect_within(s, v, 0.01);
  }
  {
    LatencySketch s;
    for (std::uint64_t i = 1; i <= 100; ++i) s.add(i * 1000);
    EXPECT_NEAR(s.quantile(0.99), 99'000.0, 99'000.0 * 0.01);  // 0.99 * 100 is whole: the 99th
  }
}

TEST(LatencySketch, EmptyReportsZero) {
  LatencySketch s;
  EXPECT_EQ(s.count(), 0u);
  EXPECT_EQ(s.quantile(0.5), 0.0);
  EXPECT_EQ(s.min(), 0u);
  EXPECT_EQ(s.max(), 0u);
  EXPECT_EQ(s.mean(), 0.0);
  EXPECT_TRUE(s.buckets().empty());
  EXPECT_DOUBLE_EQ(s.relative_accuracy(), 0.01);
}

TEST(LatencySketch, ConstantIsExact) {
  LatencySketch s;
  for (int i = 0; i < 1000; ++i) s.add(12345);
  for (double q : kQuantiles) EXPECT_EQ(s.quantile(q), 12345.0) << "q=" << q;
  EXPECT_EQ(s.count(), 1000u);
  EXPECT_EQ(s.sum(), 12345000u);
  EXPECT_DOUBLE_EQ(s.mean(), 12345.0);
  ASSERT_EQ(s.buckets().size(), 1u);
  EXPECT_EQ(s.buckets()[0].count, 1000u);
}

TEST(LatencySketch, UniformWithinRelativeError) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::uint64_t> dist(1, 1'000'000);
  std::vector<std::uint64_t> values(100'000);
  LatencySketch s;
  for (auto& v : values) {
    v = dist(rng);
    s.add(v);
  }
  expect_within(s, values, 0.01);
  EXPECT_EQ(s.quantile(0.0), exact_quantile(values, 0.0));  // min and max are exact
  EXPECT_EQ(s.quantile(1.0), exact_quantile(values, 1.0));
}

TEST(LatencySketch, ExponentialWithinRelativeErrorIncludingZeros) {
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> dist(1.0 / 50'000.0);  // mean 50 us
  std::vector<std::uint64_t> values(200'000);
  LatencySketch s;
  for (auto& v : values) {
    v = static_cast<std::uint64_t>(dist(rng));  // some round down to 0
    s.add(v);
  }
  expect_within(s, values, 0.01);
}

TEST(LatencySketch, FinerAccuracyHolds) {
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> dist(12.0, 2.0);
  std::vector<std::uint64_t> values(100'000);
  LatencySketch s = make(0.001, 1 << 16);
  for (auto& v : values) {
    v = 1 + static_cast<std::uint64_t>(dist(rng));
    s.add(v);
  }
  expect_within(s, values, 0.001);
  EXPECT_EQ(s.collapsed_count(), 0u);
}

TEST(LatencySketch, ZerosAreExactAndCountedApart) {
  LatencySketch s;
  for (int i = 0; i < 10; ++i) s.add(0);
  for (int i = 0; i < 10; ++i) s.add(100);
  EXPECT_EQ(s.zero_count(), 10u);
  EXPECT_EQ(s.quantile(0.25), 0.0);
  EXPECT_EQ(s.quantile(0.47), 0.0);  // rank 8 of 0..19
  EXPECT_EQ(s.quantile(0.9), 100.0);
  std::uint64_t in_buckets = 0;
  for (const auto& b : s.buckets()) in_buckets += b.count;
  EXPECT_EQ(in_buckets, 10u);
}

TEST(LatencySketch, ValuesLieInsideTheirBucketBounds) {
  LatencySketch s;
  const std::vector<std::uint64_t> values{
      1, 2, 3, 999, 1000, 1001, 123456789, std::uint64_t{1} << 40, std::uint64_t{1} << 59};
  for (std::uint64_t v : values) {
    const auto k = s.key_of(v);
    EXPECT_LE(s.bucket_lower_bound(k), static_cast<double>(v) * (1 + 1e-12)) << v;
    EXPECT_GE(s.bucket_upper_bound(k), static_cast<double>(v) * (1 - 1e-12)) << v;
    const double rep = s.bucket_value(k);
    EXPECT_LE(std::abs(rep - static_cast<double>(v)) / static_cast<double>(v), 0.01 + 1e-9) << v;
    s.add(v);
  }
  // The default cap spans 1 ns to about 19 years: nothing collapses.
  EXPECT_EQ(s.collapsed_count(), 0u);
}

TEST(LatencySketch, HugeValuesSaturateSumAndStayAccurate) {
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  LatencySketch s = make(0.01, 4096);  // 4096 buckets reach past 2^64 ns
  s.add(kMax);
  s.add(kMax - 1);
  s.add(kMax / 3);
  EXPECT_EQ(s.sum(), kMax);  // saturated, not wrapped
  EXPECT_EQ(s.collapsed_count(), 0u);
  EXPECT_EQ(s.quantile(1.0), static_cast<double>(kMax));
  EXPECT_LE(std::abs(s.quantile(0.5) - static_cast<double>(kMax)) / static_cast<double>(kMax), 0.01 + 1e-9);
}

TEST(LatencySketch, MergeEqualsSketchOfUnion) {
  std::mt19937_64 rng(11);
  std::exponential_distribution<double> dist(1.0 / 2'000'000.0);
  LatencySketch a, b, all;
  for (int i = 0; i < 50'000; ++i) {
    const auto v = static_cast<std::uint64_t>(dist(rng));
    ((i % 3 == 0) ? a : b).add(v);
    all.add(v);
  }
  // Disjoint ranges too, so the merge has to widen the window on both sides.
  for (std::uint64_t v = 1; v < 100; ++v) {
    a.add(v);
    all.add(v);
  }
  for (std::uint64_t v = 1; v < 100; ++v) {
    b.add(v * 1'000'000'000ull);
    all.add(v * 1'000'000'000ull);
  }
  ASSERT_TRUE(a.merge(b).ok());
  expect_same(a, all);
}

TEST(LatencySketch, MergeIntoEmptyAndOfEmpty) {
  LatencySketch a, empty, all;
  for (std::uint64_t v : std::vector<std::uint64_t>{0, 5, 500, 50'000}) {
    a.add(v);
    all.add(v);
  }
  LatencySketch target;
  ASSERT_TRUE(target.merge(a).ok());
  expect_same(target, all);
  ASSERT_TRUE(target.merge(empty).ok());
  expect_same(target, all);
}

TEST(LatencySketch, SelfMergeDoubles) {
  LatencySketch s, twice;
  for (std::uint64_t v : std::vector<std::uint64_t>{3, 30, 300}) {
    s.add(v);
    twice.add(v);
    twice.add(v);
  }
  ASSERT_TRUE(s.merge(s).ok());
  expect_same(s, twice);
}

TEST(LatencySketch, BucketCapCollapsesLowestAndCounts) {
  LatencySketch s = make(0.01, 10);
  for (int i = 0; i < 5; ++i) s.add(1);  // bucket 0
  const std::uint64_t high = 1'000'000;
  const auto top = s.key_of(high);
  ASSERT_GT(top, 20);
  s.add(high);
  auto buckets = s.buckets();
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets.front().index, top - 9);  // the window keeps the 10 highest buckets
  EXPECT_EQ(buckets.front().count, 5u);
  EXPECT_EQ(s.collapsed_count(), 5u);
  EXPECT_LE(static_cast<std::int64_t>(buckets.back().index - buckets.front().index), 9);

  // A value below the kept window lands in its lowest bucket and is counted too.
  s.add(2);
  EXPECT_EQ(s.collapsed_count(), 6u);
  EXPECT_EQ(s.buckets().front().count, 6u);
  // Values inside the window are not.
  s.add(high - high / 20);  // 5% below: inside ten buckets of about 0.8% each
  EXPECT_EQ(s.collapsed_count(), 6u);
  EXPECT_EQ(s.count(), 8u);
  EXPECT_EQ(s.min(), 1u);  // exact statistics are unaffected by collapse
  EXPECT_EQ(s.max(), high);
  EXPECT_EQ(s.quantile(1.0), static_cast<double>(high));

  // Raising the top again folds the previous lowest bucket, counting its values once.
  s.add(high * 1000);
  EXPECT_LE(s.buckets().size(), 10u);
  std::uint64_t in_buckets = 0;
  for (const auto& b : s.buckets()) in_buckets += b.count;
  EXPECT_EQ(in_buckets, 9u);
  EXPECT_EQ(s.collapsed_count(), 8u);  // everything except the new top value
}

TEST(LatencySketch, CollapseIsOrderIndependentAndMergeStaysExact) {
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> dist(10.0, 1.5);  // spans several hundred 1% buckets
  std::vector<std::uint64_t> values(20'000);
  for (auto& v : values) v = static_cast<std::uint64_t>(dist(rng));
  LatencySketch forward = make(0.01, 128), backward = make(0.01, 128), a = make(0.01, 128),
                b = make(0.01, 128);
  for (std::size_t i = 0; i < values.size(); ++i) {
    forward.add(values[i]);
    backward.add(values[values.size() - 1 - i]);
    (values[i] < 20'000 ? a : b).add(values[i]);  // a low, b high: b alone already collapses
  }
  EXPECT_GT(forward.collapsed_count(), 0u);
  EXPECT_LE(forward.buckets().size(), 128u);
  expect_same(forward, backward);
  LatencySketch low_into_high = b;
  ASSERT_TRUE(low_into_high.merge(a).ok());
  expect_same(low_into_high, forward);
  ASSERT_TRUE(a.merge(b).ok());
  expect_same(a, forward);
  // Quantiles whose value lies above the folded buckets keep the accuracy.
  const auto lowest_kept = forward.buckets().front().index;
  ASSERT_GT(forward.key_of(static_cast<std::uint64_t>(exact_quantile(values, 0.999))), lowest_kept);
  for (double q : {0.9, 0.99, 0.999, 0.9999}) {
    const double exact = exact_quantile(values, q);
    if (forward.key_of(static_cast<std::uint64_t>(exact)) <= lowest_kept) continue;
    EXPECT_LE(std::abs(forward.quantile(q) - exact) / exact, 0.01 + 1e-9) << q;
  }
}

TEST(LatencySketch, MergeOfDifferentAccuracyFailsAndLeavesSketchUnchanged) {
  LatencySketch a = make(0.01), b = make(0.02), before = make(0.01);
  a.add(100);
  before.add(100);
  b.add(200);
  const Status st = a.merge(b);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().find("relative accuracy"), std::string::npos) << st.error();
  expect_same(a, before);
}

TEST(LatencySketch, CreateRejectsBadOptions) {
  EXPECT_FALSE(LatencySketch::create({0.0, 2048}).ok());
  EXPECT_FALSE(LatencySketch::create({1.0, 2048}).ok());
  EXPECT_FALSE(LatencySketch::create({-0.5, 2048}).ok());
  EXPECT_FALSE(LatencySketch::create({std::nan(""), 2048}).ok());
  const auto zero_cap = LatencySketch::create({0.01, 0});
  ASSERT_FALSE(zero_cap.ok());
  EXPECT_NE(zero_cap.error().find("max_buckets"), std::string::npos);
  EXPECT_TRUE(LatencySketch::create({0.05, 1}).ok());
}

TEST(LatencySketch, SingleBucketCapStillAnswers) {
  LatencySketch s = make(0.01, 1);
  for (std::uint64_t v : std::vector<std::uint64_t>{10, 1000, 100}) s.add(v);
  EXPECT_EQ(s.buckets().size(), 1u);
  EXPECT_EQ(s.collapsed_count(), 2u);
  EXPECT_EQ(s.quantile(1.0), 1000.0);
}

}  // namespace
}  // namespace eacgm::analysis

namespace eacgm::analysis {
namespace {

// The kernel's histograms (bpf/events.h eacgm_hist_key) and the sketch share buckets.
TEST(LatencySketchKernelBuckets, KeyIsTheKernelsKey) {
  LatencySketch s;
  ASSERT_EQ(s.bits(), static_cast<std::uint32_t>(EACGM_HIST_BITS));
  std::mt19937_64 rng(11);
  for (int i = 0; i < 200'000; ++i) {
    const std::uint64_t v = rng() >> (rng() % 64);
    if (v == 0) continue;
    ASSERT_EQ(static_cast<std::uint32_t>(s.key_of(v)), eacgm_hist_key(v)) << v;
    const auto k = s.key_of(v);
    ASSERT_LE(s.bucket_lower_bound(k), static_cast<double>(v)) << v;
    ASSERT_GT(s.bucket_upper_bound(k), static_cast<double>(v)) << v;
  }
  // Below 2^(bits+1) every value is its own bucket.
  for (std::uint64_t v = 1; v < 128; ++v) EXPECT_EQ(s.key_of(v), static_cast<std::int32_t>(v));
}

TEST(LatencySketchKernelBuckets, BucketsFromTheKernelMergeExactly) {
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> dist(9.0, 2.0);
  LatencySketch direct, from_buckets;
  std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> kernel;  // key -> (count, sum)
  for (int i = 0; i < 50'000; ++i) {
    const auto v = static_cast<std::uint64_t>(dist(rng)) + 1;
    direct.add(v);
    auto& b = kernel[eacgm_hist_key(v)];
    ++b.first;
    b.second += v;
  }
  for (const auto& [key, b] : kernel) from_buckets.add_bucket(key, EACGM_HIST_BITS, b.first, b.second);
  EXPECT_EQ(from_buckets.count(), direct.count());
  EXPECT_EQ(from_buckets.sum(), direct.sum());
  const auto a = direct.buckets(), c = from_buckets.buckets();
  ASSERT_EQ(a.size(), c.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, c[i].index);
    EXPECT_EQ(a[i].count, c[i].count);
  }
  // Interior quantiles come from the buckets, so they agree exactly.
  for (double q : {0.1, 0.5, 0.9, 0.99}) EXPECT_DOUBLE_EQ(from_buckets.quantile(q), direct.quantile(q)) << q;
}

TEST(LatencySketchKernelBuckets, FinerKernelBucketsNestInACoarserSketch) {
  auto coarse = LatencySketch::create({0.05, 4096});
  ASSERT_TRUE(coarse);
  EXPECT_LT(coarse->bits(), static_cast<std::uint32_t>(EACGM_HIST_BITS));
  LatencySketch direct = *coarse;
  for (std::uint64_t v : {150u, 1'000u, 77'777u, 5'000'000u}) {
    direct.add(v);
    coarse->add_bucket(eacgm_hist_key(v), EACGM_HIST_BITS, 1, v);
  }
  const auto a = direct.buckets(), c = coarse->buckets();
  ASSERT_EQ(a.size(), c.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].index, c[i].index);
}

// compact(): the same values in a window cut to the non-empty buckets; adding to it works.
TEST(LatencySketch, CompactKeepsTheValuesInATightWindow) {
  LatencySketch s;
  // More distinct buckets than a list holds: a window, doubled to 256 buckets.
  for (std::uint64_t v = 1'000; v <= 7'000; v += 100) s.add(v);
  ASSERT_FALSE(s.sparse());
  s.add(0);
  const LatencySketch c = s.compact();
  const auto buckets = s.buckets();
  ASSERT_EQ(c.buckets().size(), buckets.size());
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    EXPECT_EQ(c.buckets()[i].index, buckets[i].index);
    EXPECT_EQ(c.buckets()[i].count, buckets[i].count);
  }
  EXPECT_EQ(c.count(), s.count());
  EXPECT_EQ(c.sum(), s.sum());
  EXPECT_EQ(c.zero_count(), 1u);
  EXPECT_EQ(c.min(), s.min());
  EXPECT_EQ(c.max(), s.max());
  EXPECT_EQ(c.quantile(0.5), s.quantile(0.5));
  const auto span = static_cast<std::size_t>(buckets.back().index - buckets.front().index) + 1;
  EXPECT_FALSE(c.sparse());
  EXPECT_EQ(c.heap_bytes(), span * sizeof(std::uint64_t));
  EXPECT_LT(c.heap_bytes(), s.heap_bytes()) << "the live window keeps slack";
  EXPECT_EQ(LatencySketch{}.compact().heap_bytes(), 0u);

  LatencySketch grown = c;
  grown.add(10);
  grown.add(1'000'000);
  s.add(10);
  s.add(1'000'000);
  EXPECT_EQ(grown.count(), s.count());
  EXPECT_EQ(grown.buckets().size(), s.buckets().size());
  EXPECT_EQ(grown.quantile(0.99), s.quantile(0.99));
}

// A few distinct buckets far apart (a short process's calls and one stall) are a list of
// them, not a window over the range between: the live sketches of hundreds of short
// processes at once were windows of 1,000 to 4,096 buckets each.
TEST(LatencySketch, FewBucketsFarApartAreAListOfThem) {
  LatencySketch s;
  std::vector<std::uint64_t> values;
  values.reserve(301);
  for (int i = 0; i < 300; ++i) values.push_back(2'000 + static_cast<std::uint64_t>(i % 7) * 40);
  values.push_back(20'000'000);  // 13 octaves above: a window would span ~850 buckets
  for (std::uint64_t v : values) s.add(v);
  EXPECT_TRUE(s.sparse());
  EXPECT_EQ(s.buckets().size(), 8u);
  EXPECT_LE(s.heap_bytes(), LatencySketch::kMaxSparseBuckets * sizeof(LatencySketch::Bucket));
  expect_within(s, values, 0.01);
  EXPECT_EQ(s.max(), 20'000'000u);
  // The kernel's buckets go to the list too.
  LatencySketch k;
  for (std::uint64_t v : values) k.add_bucket(eacgm_hist_key(v), EACGM_HIST_BITS, 1, v);
  EXPECT_TRUE(k.sparse());
  EXPECT_LE(k.heap_bytes(), LatencySketch::kMaxSparseBuckets * sizeof(LatencySketch::Bucket));
}

// Past kMaxSparseBuckets distinct buckets the list becomes a window holding the same counts.
TEST(LatencySketch, AFullListBecomesAWindowWithTheSameBuckets) {
  LatencySketch s;
  std::map<std::int32_t, std::uint64_t> want;
  std::vector<std::uint64_t> values;
  for (std::uint64_t v = 500; v < 200'000; v = v * 21 / 20 + 1) {
    for (std::uint64_t i = 0; i < 1 + v % 3; ++i) {
      s.add(v);
      values.push_back(v);
      ++want[s.key_of(v)];
    }
    // A list once the buckets spread past the smallest window (64), while they are few.
    const std::int32_t span = want.rbegin()->first - want.begin()->first + 1;
    EXPECT_EQ(s.sparse(), want.size() <= LatencySketch::kMaxSparseBuckets && span > 64)
        << want.size() << " buckets over " << span;
  }
  ASSERT_GT(want.size(), LatencySketch::kMaxSparseBuckets);
  const auto got = s.buckets();
  ASSERT_EQ(got.size(), want.size());
  std::size_t i = 0;
  for (const auto& [key, count] : want) {
    EXPECT_EQ(got[i].index, key);
    EXPECT_EQ(got[i].count, count);
    ++i;
  }
  expect_within(s, values, 0.01);
}

// A function whose calls take about the same time keeps its few buckets in a window: its
// adds take the inline path (a list's binary search made them 6 times slower:
// BM_LatencySketchAddNarrow), and a window of them is no larger than their list.
TEST(LatencySketch, ValuesInANarrowRangeStayInAWindow) {
  LatencySketch s;
  for (std::uint64_t v = 5'000; v < 5'600; v += 7) s.add(v);
  EXPECT_FALSE(s.sparse());
  EXPECT_LE(s.buckets().size(), LatencySketch::kMaxSparseBuckets);
  // One value far away: the few buckets become a list rather than a window 1,000 wide.
  s.add(20'000'000);
  EXPECT_TRUE(s.sparse());
  EXPECT_LT(s.heap_bytes(), 1024u);
}

// Merges between lists, windows and empty sketches, in both directions, equal the sketch
// of the union bucket for bucket, the collapse at a small cap included.
TEST(LatencySketch, MergesOfListsAndWindowsEqualTheSketchOfTheUnion) {
  const std::vector<std::uint64_t> few_low{900, 950, 1'000, 1'000};
  const std::vector<std::uint64_t> few_high{30'000'000, 31'000'000};
  std::vector<std::uint64_t> many;
  for (std::uint64_t v = 3'000; v < 900'000; v += v / 9) many.push_back(v);
  const std::vector<std::vector<std::uint64_t>> parts{{}, few_low, few_high, many};
  for (std::uint32_t cap : {4096u, 300u}) {
    for (std::size_t a = 0; a < parts.size(); ++a) {
      for (std::size_t b = 0; b < parts.size(); ++b) {
        LatencySketch into = make(0.01, cap), from = make(0.01, cap), all = make(0.01, cap);
        for (std::uint64_t v : parts[a]) {
          into.add(v);
          all.add(v);
        }
        for (std::uint64_t v : parts[b]) {
          from.add(v);
          all.add(v);
        }
        ASSERT_TRUE(into.merge(from).ok());
        SCOPED_TRACE(testing::Message() << "cap " << cap << ", part " << a << " <- part " << b);
        expect_same(into, all);
      }
    }
  }
}

// A frozen copy of a list is the list, its capacity cut to its buckets; adding to it works.
TEST(LatencySketch, CompactOfAListIsTheList) {
  LatencySketch s;
  for (std::uint64_t v : {1'000u, 1'200u, 3'000u, 7'000'000u}) s.add(v);
  const LatencySketch c = s.compact();
  EXPECT_TRUE(c.sparse());
  EXPECT_EQ(c.heap_bytes(), 4 * sizeof(LatencySketch::Bucket));
  expect_same(c, s);
  LatencySketch grown = c;
  grown.add(50);
  s.add(50);
  expect_same(grown, s);
}

}  // namespace
}  // namespace eacgm::analysis
