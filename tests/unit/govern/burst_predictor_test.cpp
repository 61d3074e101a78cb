// The burst predictor: follows steady bursts, moves toward a new level, and leans long.
#include "govern/hookcore/burst_predictor.h"

#include <gtest/gtest.h>

namespace eacgm::govern {
namespace {

TEST(BurstPredictor, NothingSeenPredictsZero) { EXPECT_EQ(BurstPredictor().predict(), 0u); }

TEST(BurstPredictor, SteadyBurstsArePredictedExactly) {
  BurstPredictor p;
  for (int i = 0; i < 20; ++i) p.record(5000);
  EXPECT_EQ(p.predict(), 5000u);
}

TEST(BurstPredictor, FollowsAChangeOfLevel) {
  BurstPredictor p(0.25);
  for (int i = 0; i < 20; ++i) p.record(1000);
  for (int i = 0; i < 20; ++i) p.record(9000);
  EXPECT_NEAR(static_cast<double>(p.predict()), 9000, 300);
}

TEST(BurstPredictor, LeansTowardLongerBurstsWhenTheyVary) {
  BurstPredictor p(0.25);
  for (int i = 0; i < 40; ++i) p.record(i % 2 ? 2000 : 4000);
  EXPECT_GT(p.predict(), 3000u);
  EXPECT_LT(p.predict(), 4000u);
}

}  // namespace
}  // namespace eacgm::govern
