// The per-GPU token scheduler on a simulated clock: requests become shares of GPU time,
// tenants below their request go first, limits hold, and a gone client frees its turn.
#include "govern/sched/token_scheduler.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace eacgm::govern::sched {
namespace {

constexpr Micros kMs = 1000;

// Busy clients that use each slice fully (plus `overrun_us` of queued work) and ask
// again at once; returns each tenant's billed share after `seconds`.
std::map<std::string, double> simulate(GpuScheduler& s, const std::vector<std::string>& clients,
                                       double seconds, Micros overrun_us = 0) {
  std::map<ClientId, Micros> wake;  // client -> when it asks next
  std::map<ClientId, std::uint32_t> used;
  Micros now = 0;
  for (ClientId c = 0; c < clients.size(); ++c) wake[c] = 0;
  std::map<ClientId, bool> waiting;
  std::vector<Grant> grants;
  Micros end = static_cast<Micros>(seconds * 1e6);
  while (now < end) {
    for (auto& [c, at] : wake) {
      if (at <= now && !waiting[c]) {
        waiting[c] = true;
        s.request(c, clients[c], used[c], 0, now, &grants);
      }
    }
    if (s.next_deadline() != 0 && s.next_deadline() <= now) s.tick(now, &grants);
    for (const Grant& g : grants) {
      waiting[g.client] = false;
      used[g.client] = g.slice_us + static_cast<std::uint32_t>(overrun_us);
      wake[g.client] = now + g.slice_us + overrun_us;
    }
    grants.clear();
    now += 100;
  }
  std::map<std::string, double> shares;
  for (const TenantTimes& t : s.times(now)) shares[t.name] = t.share;
  return shares;
}

TEST(GpuScheduler, BusyTenantsGetTheirRequests) {
  GpuScheduler s(10'000 * kMs, 1 * kMs, 20 * kMs);
  s.configure({{"a", 0.3, 1.0}, {"b", 0.7, 1.0}}, 10'000 * kMs, 1 * kMs, 20 * kMs);
  auto shares = simulate(s, {"a", "b"}, 30);
  double total = shares["a"] + shares["b"];
  EXPECT_NEAR(shares["a"] / total, 0.3, 0.03);
  EXPECT_NEAR(shares["b"] / total, 0.7, 0.03);
}

TEST(GpuScheduler, OverrunsAreBilledAndCorrected) {
  GpuScheduler s(10'000 * kMs, 1 * kMs, 20 * kMs);
  s.configure({{"a", 0.3, 1.0}, {"b", 0.7, 1.0}}, 10'000 * kMs, 1 * kMs, 20 * kMs);
  auto shares = simulate(s, {"a", "b"}, 30, 4 * kMs);
  double total = shares["a"] + shares["b"];
  EXPECT_NEAR(shares["a"] / total, 0.3, 0.05);
}

TEST(GpuScheduler, ProcessesOfOneTenantShareItsToken) {
  GpuScheduler s(10'000 * kMs, 1 * kMs, 20 * kMs);
  s.configure({{"a", 0.5, 1.0}, {"b", 0.5, 1.0}}, 10'000 * kMs, 1 * kMs, 20 * kMs);
  // Tenant a runs three processes, b one: the split is still by tenant.
  auto shares = simulate(s, {"a", "a", "a", "b"}, 30);
  double total = shares["a"] + shares["b"];
  EXPECT_NEAR(shares["a"] / total, 0.5, 0.05);
}

TEST(GpuScheduler, LimitCapsALoneTenant) {
  GpuScheduler s(2'000 * kMs, 1 * kMs, 20 * kMs);
  s.configure({{"a", 0.2, 0.4}}, 2'000 * kMs, 1 * kMs, 20 * kMs);
  auto shares = simulate(s, {"a"}, 20);
  EXPECT_LE(shares["a"], 0.42);
  EXPECT_GE(shares["a"], 0.35);
}

TEST(GpuScheduler, TenantBelowItsRequestGoesFirst) {
  GpuScheduler s(10'000 * kMs, 1 * kMs, 20 * kMs);
  s.configure({{"a", 0.5, 1.0}, {"b", 0.2, 1.0}, {"c", 0.3, 1.0}}, 10'000 * kMs, 1 * kMs, 20 * kMs);
  std::vector<Grant> g;
  // b has used the GPU a lot; then a holds the token while b and c (fresh) wait.
  s.request(1, "b", 0, 0, 0, &g);
  ASSERT_EQ(g.size(), 1u);
  g.clear();
  s.request(1, "b", 0, 0, 2'000 * kMs, &g);  // long after: b's slice ended, b billed
  g.clear();
  s.request(0, "a", 0, 0, 2'000 * kMs + 1, &g);  // waits behind b's new slice
  s.request(2, "c", 0, 0, 2'000 * kMs + 2, &g);
  ASSERT_TRUE(g.empty());
  s.tick(s.next_deadline(), &g);
  ASSERT_TRUE(g.empty()) << "b's process has not reported back: its work may still run";
  s.tick(s.next_deadline(), &g);  // the grace period
  ASSERT_EQ(g.size(), 1u);
  // a and c have used nothing (0 / request): the earliest of them to ask, not b.
  EXPECT_EQ(g[0].client, 0u);
}

TEST(GpuScheduler, DroppedClientDoesNotHoldUpOthers) {
  GpuScheduler s(10'000 * kMs, 1 * kMs, 20 * kMs);
  s.configure({{"a", 0.5, 1.0}, {"b", 0.5, 1.0}}, 10'000 * kMs, 1 * kMs, 20 * kMs);
  std::vector<Grant> g;
  s.request(1, "a", 0, 0, 0, &g);
  s.request(2, "a", 0, 0, 1, &g);
  ASSERT_EQ(g.size(), 2u) << "the second process of the holder shares the slice";
  g.clear();
  s.request(3, "b", 0, 0, 2, &g);
  s.drop_client(3, 3, &g);
  s.tick(s.next_deadline(), &g);
  EXPECT_TRUE(g.empty()) << "nobody waits any more";
  EXPECT_EQ(s.next_deadline(), 0);
}

TEST(GpuScheduler, TokenPassesWhenTheHoldersQueuedWorkHasDrained) {
  GpuScheduler s(10'000 * kMs, 1 * kMs, 20 * kMs);
  s.configure({{"a", 0.5, 1.0}, {"b", 0.5, 1.0}}, 10'000 * kMs, 1 * kMs, 20 * kMs);
  std::vector<Grant> g;
  s.request(1, "b", 0, 0, 0, &g);
  ASSERT_EQ(g.size(), 1u);
  Micros slice = g[0].slice_us;
  g.clear();
  s.request(2, "a", 0, 0, 1, &g);
  s.tick(slice, &g);
  EXPECT_TRUE(g.empty()) << "b's queued work may still run: a waits";
  EXPECT_EQ(s.next_deadline(), slice + 20 * kMs) << "at most one max_slice of grace";
  // b's process finished its queued work 4 ms after the slice and asks again.
  s.request(1, "b", static_cast<std::uint32_t>(slice + 4 * kMs), 0, slice + 4 * kMs, &g);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].client, 2u);
  auto times = s.times(slice + 4 * kMs);
  EXPECT_EQ(times[1].busy_total, slice + 4 * kMs) << "b is billed its slice and its overrun";
}

TEST(GpuScheduler, SilentHolderLosesTheTokenAfterTheGracePeriod) {
  GpuScheduler s(10'000 * kMs, 1 * kMs, 20 * kMs);
  s.configure({{"a", 0.5, 1.0}, {"b", 0.5, 1.0}}, 10'000 * kMs, 1 * kMs, 20 * kMs);
  std::vector<Grant> g;
  s.request(1, "b", 0, 0, 0, &g);
  Micros slice = g[0].slice_us;
  g.clear();
  s.request(2, "a", 0, 0, 1, &g);
  s.tick(slice, &g);
  ASSERT_TRUE(g.empty());
  s.tick(s.next_deadline(), &g);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].client, 2u);
}

TEST(GpuScheduler, ReloadKeepsUsageAndDropsRemovedTenants) {
  GpuScheduler s(10'000 * kMs, 1 * kMs, 20 * kMs);
  s.configure({{"a", 0.5, 1.0}, {"b", 0.5, 1.0}}, 10'000 * kMs, 1 * kMs, 20 * kMs);
  std::vector<Grant> g;
  s.request(1, "a", 0, 0, 0, &g);
  s.tick(20 * kMs, &g);
  s.configure({{"a", 0.6, 1.0}}, 10'000 * kMs, 1 * kMs, 20 * kMs);
  auto times = s.times(30 * kMs);
  ASSERT_EQ(times.size(), 1u);
  EXPECT_EQ(times[0].busy_total, 20 * kMs);
  EXPECT_FALSE(s.known("b"));
}

TEST(UsageWindow, CountsOnlyTheWindow) {
  UsageWindow w(100);
  w.add(0, 50);
  w.add(120, 140);
  EXPECT_EQ(w.busy(100), 50);
  EXPECT_EQ(w.busy(130), 20 + 10);
  EXPECT_DOUBLE_EQ(w.share(140), 0.2 + 0.1);
  EXPECT_EQ(w.busy(150), 20) << "[0, 50) left the window";
  EXPECT_EQ(w.total(), 70);
}

}  // namespace
}  // namespace eacgm::govern::sched
