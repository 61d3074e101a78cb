// A window split into the rows of the tier asked for at its edges and the rolled minutes
// and hours between: only spans already rolled, only where the tier still has rows.
#include "history/tier_ranges.h"

#include <gtest/gtest.h>

namespace eacgm::history {
namespace {

constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kM = 60 * kS;
constexpr std::int64_t kH = 60 * kM;
constexpr std::int64_t kT0 = 1793491200LL * kS;  // an hour boundary

std::string text(const std::vector<TierRange>& ranges) {
  std::string out;
  for (const auto& r : ranges) {
    out += std::to_string(r.tier) + ":" + std::to_string((r.lo - kT0) / kS) + "-" +
           std::to_string((r.hi - kT0) / kS) + " ";
  }
  return out;
}

TEST(TierRanges, RawEdgesAroundRolledMinutesAndHours) {
  const NodeRollups n{7, kT0 + 3 * kH + 30 * kM, kT0 + 3 * kH, kT0};
  // 00:00:20 to 03:40:10: raw to the first minute, minutes to the first hour, hours to
  // the hour mark, minutes to the minute mark, raw after it.
  const auto r = tier_ranges(n, Tier::kRaw, kT0 + 20 * kS, kT0 + 3 * kH + 40 * kM + 10 * kS);
  EXPECT_EQ(text(r), "0:20-60 1:60-3600 2:3600-10800 1:10800-12600 0:12600-13210 ");
  for (const auto& x : r) EXPECT_EQ(x.node, 7);
}

TEST(TierRanges, NothingRolledOrNoRowsLeavesTheTierAskedFor) {
  const NodeRollups none{1, 0, 0, kT0};
  EXPECT_EQ(text(tier_ranges(none, Tier::kRaw, kT0, kT0 + 2 * kH)), "0:0-7200 ");
  const NodeRollups empty{1, kT0 + kH, kT0 + kH, std::nullopt};
  EXPECT_EQ(text(tier_ranges(empty, Tier::kRaw, kT0, kT0 + 2 * kH)), "0:0-7200 ");
  EXPECT_EQ(text(tier_ranges(empty, Tier::kHour, kT0, kT0 + 2 * kH)), "2:0-7200 ");
}

TEST(TierRanges, OnlyWhereTheTierStillHasRows) {
  // Raw rows from 01:30:10 on (older ones aged out or capped): no rollup stands in
  // before the first whole minute after them.
  const NodeRollups n{1, kT0 + 3 * kH, kT0 + 3 * kH, kT0 + kH + 30 * kM + 10 * kS};
  EXPECT_EQ(text(tier_ranges(n, Tier::kRaw, kT0, kT0 + 3 * kH)), "0:0-5460 1:5460-7200 2:7200-10800 ");
}

// A node whose rows come rolled up (shipped from its own store) has no raw rows: its whole
// minutes and hours answer a raw window, only the edges are left to the raw tier (empty).
TEST(TierRanges, ANodeOfRollupsOnlyReadsThemWithoutFinerRows) {
  NodeRollups n{1, kT0 + 3 * kH + 30 * kM, kT0 + 3 * kH, std::nullopt};
  n.rollups_only = true;
  EXPECT_EQ(text(tier_ranges(n, Tier::kRaw, kT0 + 20 * kS, kT0 + 3 * kH + 40 * kM)),
            "0:20-60 1:60-3600 2:3600-10800 1:10800-12600 0:12600-13200 ");
  EXPECT_EQ(text(tier_ranges(n, Tier::kMinute, kT0 + 5 * kM, kT0 + 4 * kH)),
            "1:300-3600 2:3600-10800 1:10800-14400 ");
}

TEST(TierRanges, MinuteWindowsUseRolledHours) {
  const NodeRollups n{1, kT0 + 5 * kH, kT0 + 2 * kH, kT0};
  EXPECT_EQ(text(tier_ranges(n, Tier::kMinute, kT0 + 5 * kM, kT0 + 4 * kH)),
            "1:300-3600 2:3600-7200 1:7200-14400 ");
}

}  // namespace
}  // namespace eacgm::history
