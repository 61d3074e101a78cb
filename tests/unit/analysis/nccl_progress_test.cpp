// NcclProgress over recorded NCCL streams and scans of the calls in flight: each rank's
// collectives are numbered across kinds in call order, a rank inside a collective has
// entered it (once, even when its record came since the scan), a rank inside its
// communicator's first collective is known from the scan alone, the waiting age is its
// process's oldest call in flight, and ranks of exited processes are left out.
#include "analysis/nccl_progress.h"

#include <gtest/gtest.h>

#include <vector>

#include "../common/cuda_probe.h"
#include "nccl_events.h"

namespace eacgm::analysis {
namespace {

constexpr std::uint64_t kMs = 1'000'000, kSecond = 1000 * kMs, kT0 = 1'700'000'000 * kSecond;
const auto kAllAlive = [](std::uint32_t) { return true; };
using testing::nccl_call;
using testing::nccl_probe;

// A call of `probe` by `rank` (pid 1000 + rank) in flight since `entry_ns`.
InflightCall in_flight(const std::shared_ptr<const ProbeInfo>& probe, std::int32_t rank,
                       std::uint64_t entry_ns, std::uint64_t comm_id = 0xc0, std::int32_t nranks = 4) {
  InflightCall c;
  c.call = nccl_call(probe, {.comm_id = comm_id, .rank = rank, .nranks = nranks, .ts_ns = entry_ns});
  c.call.has_exit = false;
  c.entry_mono_ns = entry_ns;
  return c;
}

InflightCall sync_in_flight(std::uint32_t pid, std::uint64_t entry_ns) {
  InflightCall c;
  c.call.probe = test::cuda_probe("cudaStreamSynchronize");
  c.call.pid = pid;
  c.call.tid = pid + 1;
  c.call.ts_ns = entry_ns;
  c.entry_mono_ns = entry_ns;
  return c;
}

const NcclRankStanding& rank_of(const NcclCommStanding& c, std::int32_t rank) {
  for (const auto& r : c.ranks) {
    if (r.rank == rank) return r;
  }
  static const NcclRankStanding none;
  ADD_FAILURE() << "no rank " << rank;
  return none;
}

// Four ranks: 30 all-reduces, a broadcast after every tenth; then rank 2 stops while the
// others enter all-reduce #31 (the 34th collective), ranks 0 and 1 still inside it, rank 3
// back and waiting in a synchronisation.
TEST(NcclProgress, NumbersEveryCollectiveInCallOrderAndCountsTheOneARankIsInside) {
  auto allreduce = nccl_probe("ncclAllReduce");
  auto broadcast = nccl_probe("ncclBroadcast");
  NcclSkew skew;
  std::uint64_t ts = kT0;
  for (int k = 0; k < 30; ++k) {
    for (int r = 0; r < 4; ++r) skew.add(nccl_call(allreduce, {.rank = r, .nranks = 4, .ts_ns = ts}));
    ts += 10 * kMs;
    if (k % 10 == 9) {
      for (int r = 0; r < 4; ++r) skew.add(nccl_call(broadcast, {.rank = r, .nranks = 4, .ts_ns = ts}));
      ts += 10 * kMs;
    }
  }
  skew.add(nccl_call(allreduce, {.rank = 3, .nranks = 4, .ts_ns = ts}));
  const std::uint64_t now = ts + 94 * kSecond;

  NcclProgress progress;
  progress.on_scan(std::vector<InflightCall>{in_flight(allreduce, 0, ts), in_flight(allreduce, 1, ts + kMs),
                                             sync_in_flight(1003, ts + 2 * kMs)},
                   now);
  const auto s = progress.standing(skew.progress(), kAllAlive);
  ASSERT_EQ(s.comms.size(), 1u);
  const NcclCommStanding& c = s.comms[0];
  EXPECT_EQ(c.comm_id, 0xc0u);
  EXPECT_EQ(c.nranks, 4);
  ASSERT_EQ(c.ranks.size(), 4u);
  EXPECT_EQ(rank_of(c, 0).entered, 34u);
  EXPECT_EQ(rank_of(c, 0).finished, 33u);
  EXPECT_EQ(rank_of(c, 0).waiting_ns, 94 * kSecond);
  EXPECT_EQ(rank_of(c, 1).entered, 34u);
  EXPECT_EQ(rank_of(c, 1).waiting_ns, 94 * kSecond - kMs);
  EXPECT_EQ(rank_of(c, 2).entered, 33u) << "the missing rank";
  EXPECT_EQ(rank_of(c, 2).finished, 33u);
  EXPECT_EQ(rank_of(c, 2).waiting_ns, 0u);
  EXPECT_EQ(rank_of(c, 3).entered, 34u);
  EXPECT_EQ(rank_of(c, 3).finished, 34u);
  EXPECT_EQ(rank_of(c, 3).waiting_ns, 94 * kSecond - 2 * kMs);
  EXPECT_EQ(rank_of(c, 3).pid, 1003u);

  // Rank 0's call returned after the scan: its record is in, its row still listed.
  skew.add(nccl_call(allreduce, {.rank = 0, .nranks = 4, .ts_ns = ts}));
  const auto again = progress.standing(skew.progress(), kAllAlive);
  EXPECT_EQ(rank_of(again.comms[0], 0).entered, 34u);
  EXPECT_EQ(rank_of(again.comms[0], 0).finished, 34u);

  // The next scan finds nothing in flight: nobody waits.
  progress.on_scan({}, now + kSecond);
  for (const auto& r : progress.standing(skew.progress(), kAllAlive).comms[0].ranks) {
    EXPECT_EQ(r.waiting_ns, 0u) << r.rank;
  }
}

TEST(NcclProgress, ARankInsideItsCommunicatorsFirstCollectiveIsKnownFromTheScan) {
  auto allreduce = nccl_probe("ncclAllReduce");
  NcclSkew skew;
  NcclProgress progress;
  progress.on_scan(std::vector<InflightCall>{in_flight(allreduce, 5, kT0, 0xd0, 16)}, kT0 + 7 * kSecond);
  const auto s = progress.standing(skew.progress(), kAllAlive);
  ASSERT_EQ(s.comms.size(), 1u);
  EXPECT_EQ(s.comms[0].comm_id, 0xd0u);
  EXPECT_EQ(s.comms[0].nranks, 16);
  ASSERT_EQ(s.comms[0].ranks.size(), 1u);
  EXPECT_EQ(s.comms[0].ranks[0].rank, 5);
  EXPECT_EQ(s.comms[0].ranks[0].pid, 1005u);
  EXPECT_EQ(s.comms[0].ranks[0].entered, 1u);
  EXPECT_EQ(s.comms[0].ranks[0].finished, 0u);
  EXPECT_EQ(s.comms[0].ranks[0].waiting_ns, 7 * kSecond);
}

TEST(NcclProgress, RanksOfExitedProcessesAndTheirCommunicatorsAreLeftOut) {
  auto allreduce = nccl_probe("ncclAllReduce");
  NcclSkew skew;
  for (int r = 0; r < 2; ++r) skew.add(nccl_call(allreduce, {.rank = r, .nranks = 2, .ts_ns = kT0}));
  skew.add(nccl_call(allreduce, {.comm_id = 0xe0, .rank = 1, .nranks = 2, .ts_ns = kT0}));
  NcclProgress progress;
  const auto s = progress.standing(skew.progress(), [](std::uint32_t pid) { return pid != 1000; });
  ASSERT_EQ(s.comms.size(), 2u);
  ASSERT_EQ(s.comms[0].ranks.size(), 1u);
  EXPECT_EQ(s.comms[0].ranks[0].rank, 1);
  EXPECT_EQ(s.comms[0].ranks[0].entered, 1u);
  EXPECT_EQ(s.comms[1].comm_id, 0xe0u);
  const auto none = progress.standing(skew.progress(), [](std::uint32_t) { return false; });
  EXPECT_TRUE(none.comms.empty());
}

}  // namespace
}  // namespace eacgm::analysis
