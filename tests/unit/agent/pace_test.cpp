// Pace: pooled over the last intervals as a ratio of sums, with an error from their
// spread (or, for the first few, the Poisson error of the counts), and a cautious end
// that a noisy pace cannot pass for no cost.
#include "agent/pace.h"

#include <gtest/gtest.h>

#include <cmath>

namespace eacgm::agent {
namespace {

// One interval: `rate_in` and `rate_out` calls a second, `f` of a second in the window.
void interval(Pace& p, double rate_in, double rate_out, double f) {
  const auto in = static_cast<std::uint64_t>(std::llround(rate_in * f));
  const auto out = static_cast<std::uint64_t>(std::llround(rate_out * (1 - f)));
  p.add_calls(in + out, in);
  p.end_interval(f, 1 - f);
}

TEST(Pace, NoneUntilEnoughIsPooled) {
  Pace p;
  interval(p, 100, 110, 0.5);
  interval(p, 100, 110, 0.5);
  EXPECT_FALSE(p.speedup().has_value()) << "two intervals";
  interval(p, 100, 110, 0.5);
  ASSERT_TRUE(p.speedup().has_value());
  EXPECT_NEAR(*p.speedup(), 1.1, 1e-9);
  // Few calls: still none, however many intervals.
  Pace sparse;
  for (int i = 0; i < 10; ++i) interval(sparse, 4, 4, 0.5);
  EXPECT_FALSE(sparse.speedup().has_value());
}

TEST(Pace, AnIntervalWithoutTimeOnBothSidesAddsNothing) {
  Pace p;
  for (int i = 0; i < 5; ++i) interval(p, 100, 100, 1.0);  // attached throughout
  EXPECT_FALSE(p.speedup().has_value());
  EXPECT_EQ(p.calls(), 0u) << "each interval's calls are let go at its end";
}

TEST(Pace, ItsErrorIsPoissonFirstThenTheIntervalsSpread) {
  Pace p;
  for (int i = 0; i < 3; ++i) interval(p, 100, 100, 0.5);
  // 150 calls inside and 150 outside: 1/150 + 1/150.
  EXPECT_NEAR(p.relative_variance(), 2.0 / 150, 1e-12);
  EXPECT_FALSE(p.spread_known());
  // Identical intervals from the fifth on: no spread, no error.
  for (int i = 0; i < 2; ++i) interval(p, 100, 100, 0.5);
  EXPECT_TRUE(p.spread_known());
  EXPECT_NEAR(p.relative_variance(), 0.0, 1e-12);
  EXPECT_NEAR(*p.cautious_speedup(1.0), 1.0, 1e-9);
}

TEST(Pace, ANoisyPaceIsTakenAtItsCautiousEnd) {
  Pace p;
  // Steps counted in windows of a few: each interval's inside rate off by up to ±20%.
  const double noise[] = {0.2, -0.15, 0.05, -0.2, 0.1, -0.05, 0.15, -0.1, 0.0, 0.2, -0.2, 0.1};
  for (double n : noise) interval(p, 1000 * (1 + n), 1000, 0.4);
  ASSERT_TRUE(p.speedup().has_value());
  const double v = p.relative_variance();
  // About the spread of log(1/(1+n)) over 12 intervals, over 12.
  double sum = 0, sum2 = 0;
  for (double n : noise) {
    sum += -std::log1p(n);
    sum2 += std::log1p(n) * std::log1p(n);
  }
  const double spread = (sum2 - sum * sum / 12) / 11;
  EXPECT_NEAR(v, spread / 12, 0.1 * spread / 12);
  EXPECT_NEAR(*p.cautious_speedup(1.0), *p.speedup() * std::exp(std::sqrt(v)), 1e-9);
  EXPECT_GT(*p.cautious_speedup(1.0), 1.03) << "a pace of about 1 with ±4% of error";
}

TEST(Pace, CallsMadeWhileTheProbesSwitchAreNeitherInsideNorOutside) {
  Pace p;
  // Each second: 0.4 s in the window (40 calls), 0.3 s switching (30 calls, at the slow
  // pace), 0.3 s with the probes gone (36 calls: 20% faster).
  for (int i = 0; i < 5; ++i) {
    p.add_calls(40 + 30 + 36, 40, 30);
    p.end_interval(0.4, 0.3);
  }
  ASSERT_TRUE(p.speedup().has_value());
  EXPECT_NEAR(*p.speedup(), 1.2, 1e-9);
}

TEST(Pace, OnlyTheLastIntervalsArePooled) {
  Pace p;
  for (std::size_t i = 0; i < Pace::kIntervals; ++i) interval(p, 500, 1000, 0.5);
  EXPECT_NEAR(*p.speedup(), 2.0, 1e-9);
  for (std::size_t i = 0; i < Pace::kIntervals; ++i) interval(p, 1000, 1000, 0.5);
  EXPECT_NEAR(*p.speedup(), 1.0, 1e-9) << "the slow intervals have gone";
}

}  // namespace
TEST(Pace, GapsBetweenCallsMeasureItWithoutTheWindowsEdges) {
  // A 28 ms step, 30 ms while attached: windows of 0.5 s catch 16 or 18 steps by where
  // their edges fall, so the calls counted swing the pace by ±6%; the gaps between a
  // thread's calls inside one window (and outside) do not, and give 30/28 at once.
  Pace gaps, calls;
  for (int i = 0; i < 8; ++i) {
    const std::uint64_t in = i % 2 ? 16 : 18, out = 18;
    for (Pace* p : {&gaps, &calls}) p->add_calls(in + out, in);
    gaps.add_gaps(PaceGaps{(in - 1) * 30'000'000, in - 1, (out - 1) * 28'000'000, out - 1});
    gaps.end_interval(0.5, 0.5);
    calls.end_interval(0.5, 0.5);
  }
  ASSERT_TRUE(gaps.speedup().has_value());
  EXPECT_NEAR(*gaps.speedup(), 30.0 / 28, 1e-9);
  EXPECT_NEAR(gaps.relative_variance(), 0.0, 1e-12);
  ASSERT_TRUE(calls.speedup().has_value());
  EXPECT_GT(calls.relative_variance(), 1e-4) << "the calls counted swing with the edges";
}

TEST(Pace, AnIntervalWithTooFewGapsIsTakenFromItsCalls) {
  // Two gaps inside: too few to be a pace; the interval's calls and time are.
  Pace p;
  for (int i = 0; i < 3; ++i) {
    p.add_calls(220, 100);
    p.add_gaps(PaceGaps{2 * 10'000'000, 2, 100 * 1'000'000, 100});
    p.end_interval(1.0, 1.0);
  }
  ASSERT_TRUE(p.speedup().has_value());
  EXPECT_NEAR(*p.speedup(), 1.2, 1e-9);
}

}  // namespace eacgm::agent
