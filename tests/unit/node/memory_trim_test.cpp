// MemoryTrim: at most one trim per kPeriod of ticks, none at the first tick.
#include "node/memory_trim.h"

#include <gtest/gtest.h>

namespace eacgm::node {
namespace {

TEST(MemoryTrim, OncePerPeriod) {
  MemoryTrim trim;
  const CounterValues counters{};
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  trim.on_tick(t0, counters);
  EXPECT_EQ(trim.trims(), 0u);
  for (int s = 1; s < 30; ++s) trim.on_tick(t0 + std::chrono::seconds(s), counters);
  EXPECT_EQ(trim.trims(), 0u);
  trim.on_tick(t0 + MemoryTrim::kPeriod, counters);
  EXPECT_EQ(trim.trims(), 1u);
  for (int s = 31; s <= 90; ++s) trim.on_tick(t0 + std::chrono::seconds(s), counters);
  EXPECT_EQ(trim.trims(), 3u);
}

}  // namespace
}  // namespace eacgm::node
