// The NTP-style estimate of a node's clock against a reference: one sample's offset is
// the reference's reading minus the round trip's midpoint, its bound half the round trip
// (plus half the reference's resolution); however unevenly the delay splits between the
// two ways, the true offset is within the bound; of several samples the one with the
// smallest bound wins; a sample over which the local clock went back is not used.
#include "history/clock_offset.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

namespace eacgm::history {
namespace {

constexpr std::int64_t kT = 1'800'000'000'000'000'000;  // local clock, ns

// A round trip: the request takes `out_ns` to reach the reference, the answer `back_ns`
// to come back; the reference's clock is the local one plus `true_offset_ns`, read with
// `resolution_ns` (truncated).
ClockSample trip(std::int64_t start, std::int64_t out_ns, std::int64_t back_ns, std::int64_t true_offset_ns,
                 std::int64_t resolution_ns = 1) {
  ClockSample s;
  s.t0_ns = start;
  s.t1_ns = start + out_ns + back_ns;
  const std::int64_t at_reference = start + out_ns + true_offset_ns;
  s.reference_ns = at_reference - at_reference % resolution_ns;
  s.resolution_ns = resolution_ns;
  return s;
}

TEST(ClockOffset, ASymmetricRoundTripGivesTheExactOffsetAndHalfTheTripAsItsBound) {
  auto e = estimate_of(trip(kT, 500, 500, 250'000));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->offset_ns, 250'000);
  EXPECT_EQ(e->uncertainty_ns, 500 + 1);  // half the trip, and half a 1 ns resolution rounded up
  EXPECT_EQ(e->measured_ns, kT + 500 + 250'000);
}

struct Asymmetric {
  std::int64_t out_ns, back_ns, true_offset_ns, resolution_ns;
};

TEST(ClockOffset, AnyAsymmetryOfTheDelaysStaysWithinTheBound) {
  const std::vector<Asymmetric> cases = {
      {0, 1'000'000, 0, 1},               // all the delay on the way back
      {1'000'000, 0, 0, 1},               // all of it on the way out
      {900'000, 100'000, -3'000'000, 1},  // uneven, the node ahead
      {1, 2, 40'000'000, 1},              // odd round trip
      {123'457, 3, 7, 1000},              // a microsecond reference, odd everything
      {0, 0, 999, 1000},                  // no delay: the resolution alone
      {5'000, 5'000, -1, 1000},
  };
  for (const auto& c : cases) {
    auto e = estimate_of(trip(kT + 17, c.out_ns, c.back_ns, c.true_offset_ns, c.resolution_ns));
    ASSERT_TRUE(e);
    const std::int64_t error = std::llabs(e->offset_ns - c.true_offset_ns);
    EXPECT_LE(error, e->uncertainty_ns) << c.out_ns << "/" << c.back_ns << " offset " << c.true_offset_ns;
    // The bound is no looser than half the trip plus half the resolution (rounded up).
    EXPECT_LE(e->uncertainty_ns, (c.out_ns + c.back_ns + 1) / 2 + (c.resolution_ns + 1) / 2);
  }
  // All the delay one way is the worst case: the error reaches half the trip.
  auto worst = estimate_of(trip(kT, 0, 1'000'000, 0));
  ASSERT_TRUE(worst);
  EXPECT_EQ(std::llabs(worst->offset_ns), 500'000);
}

TEST(ClockOffset, TheSampleWithTheShortestRoundTripWins) {
  const std::vector<ClockSample> samples = {
      trip(kT, 4'000'000, 100'000, 2'000'000),   // slow and uneven: off by ~2 ms
      trip(kT + 10, 20'000, 20'000, 2'000'000),  // the best
      trip(kT + 20, 100'000, 3'000'000, 2'000'000),
  };
  auto best = best_estimate(samples);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->offset_ns, 2'000'000);
  EXPECT_EQ(best->uncertainty_ns, 20'001);
  EXPECT_EQ(best->measured_ns, samples[1].reference_ns);
}

TEST(ClockOffset, OfEqualBoundsTheLatestWins) {
  const std::vector<ClockSample> samples = {trip(kT, 10, 10, 5), trip(kT + 100, 10, 10, 7)};
  auto best = best_estimate(samples);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->offset_ns, 7);
}

TEST(ClockOffset, ALocalClockThatWentBackIsNotUsed) {
  ClockSample back = trip(kT, 10, 10, 0);
  back.t1_ns = back.t0_ns - 1;
  EXPECT_FALSE(estimate_of(back));
  const std::vector<ClockSample> only_back = {back};
  EXPECT_FALSE(best_estimate(only_back));
  EXPECT_FALSE(best_estimate({}));
}

TEST(ClockOffset, TheEstimatorKeepsTheBestOfItsLastSamplesOnly) {
  ClockEstimator clock(3);
  EXPECT_FALSE(clock.best());
  clock.add(trip(kT, 50, 50, 1'000));  // the best round trip, soon too old
  for (int i = 1; i <= 2; ++i) clock.add(trip(kT + i * 10'000, 5'000, 5'000, 2'000));
  ASSERT_TRUE(clock.best());
  EXPECT_EQ(clock.best()->offset_ns, 1'000);
  // A third newer sample pushes the first out: the best of the three that are left.
  clock.add(trip(kT + 30'000, 1'000, 1'000, 3'000));
  ASSERT_TRUE(clock.best());
  EXPECT_EQ(clock.best()->offset_ns, 3'000);
  EXPECT_EQ(clock.best()->uncertainty_ns, 1'001);
  // An unusable sample changes nothing.
  ClockSample back = trip(kT + 40'000, 10, 10, 0);
  back.t1_ns = back.t0_ns - 5;
  clock.add(back);
  EXPECT_EQ(clock.best()->offset_ns, 3'000);
}

}  // namespace
}  // namespace eacgm::history
