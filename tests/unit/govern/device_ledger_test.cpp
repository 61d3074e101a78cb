// The per-device ledger and the memory view under a limit (HAMi-core's free memory
// wraps to ~18 EB once usage passes the limit: here it must be zero).
#include "govern/hookcore/device_ledger.h"

#include <gtest/gtest.h>

namespace eacgm::govern {
namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

TEST(LimitedView, UsagePastTheLimitLeavesZeroFree) {
  MemoryView v = limited_view(64 * kMiB, 100 * kMiB, 70000 * kMiB, 80000 * kMiB);
  EXPECT_EQ(v.total, 64 * kMiB);
  EXPECT_EQ(v.free, 0u);
}

TEST(LimitedView, FreeNeverAboveTheDevicesFreeMemory) {
  MemoryView v = limited_view(64 * kMiB, 16 * kMiB, 10 * kMiB, 80000 * kMiB);
  EXPECT_EQ(v.free, 10 * kMiB);
  EXPECT_EQ(limited_view(64 * kMiB, 16 * kMiB, 1000 * kMiB, 80000 * kMiB).free, 48 * kMiB);
}

TEST(LimitedView, LimitAboveTheDeviceIsTheDevice) {
  MemoryView v = limited_view(200000 * kMiB, 0, 70000 * kMiB, 80000 * kMiB);
  EXPECT_EQ(v.total, 80000 * kMiB);
  EXPECT_EQ(v.free, 70000 * kMiB);
}

TEST(LimitedView, NoLimitIsTheDriversView) {
  MemoryView v = limited_view(kNoLimit, 5, 7, 9);
  EXPECT_EQ(v.free, 7u);
  EXPECT_EQ(v.total, 9u);
}

TEST(DeviceLedger, ReservesWithinTheLimitPerDevice) {
  DeviceLedger l;
  l.set_limit(0, 64 * kMiB);
  EXPECT_TRUE(l.try_reserve(0, 48 * kMiB));
  EXPECT_FALSE(l.try_reserve(0, 17 * kMiB));
  EXPECT_TRUE(l.try_reserve(0, 16 * kMiB));
  EXPECT_TRUE(l.try_reserve(1, 1ull << 40)) << "device 1 has no limit";
  EXPECT_FALSE(l.try_reserve(0, ~0ull)) << "no overflow past the limit";
  l.release(0, 1000 * kMiB);
  EXPECT_EQ(l.used(0), 0u) << "release never goes below zero";
  EXPECT_TRUE(l.try_reserve(-1, 1)) << "an unknown device is not accounted";
  EXPECT_TRUE(l.try_reserve(kMaxDevices, 1));
}

TEST(DeviceLedger, ClearUsageKeepsLimits) {
  DeviceLedger l;
  l.set_limit(2, 10);
  l.add(2, 8);
  l.clear_usage();
  EXPECT_EQ(l.used(2), 0u);
  EXPECT_EQ(l.limit(2), 10u);
}

}  // namespace
}  // namespace eacgm::govern
