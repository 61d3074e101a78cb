// NcclSkew: collective instances matched across ranks by per-rank sequence numbers
// (2 and 4 ranks, a planted late rank, a missing rank, records of the processes
// delivered out of order, lost records, a communicator spanning nodes).
#include "analysis/nccl_skew.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "analysis/live_analysis.h"
#include "nccl_events.h"

namespace eacgm::analysis {
namespace {

using testing::nccl_call;
using testing::nccl_plain_probe;
using testing::nccl_probe;
using testing::NcclCall;

constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kS = 1000 * kMs;
constexpr std::uint64_t kUs = 1'000;
constexpr std::uint64_t kT0 = 1'700'000'000'000'000'000;

struct Probes {
  std::shared_ptr<const ProbeInfo> allreduce = nccl_probe("ncclAllReduce");
  std::shared_ptr<const ProbeInfo> broadcast = nccl_probe("ncclBroadcast");
  std::shared_ptr<const ProbeInfo> bcast = nccl_probe("ncclBcast");
  std::shared_ptr<const ProbeInfo> send = nccl_probe("ncclSend");
  std::shared_ptr<const ProbeInfo> init = nccl_plain_probe("ncclCommInitRank");
};

// Instance k of a collective starts at kT0 + k x 10 ms; rank r arrives `offset(k, r)` later.
template <typename Offset>
std::vector<CallEvent> instances(const std::shared_ptr<const ProbeInfo>& p, int nranks, int count,
                                 Offset offset, std::uint64_t comm_id = 0xc0) {
  std::vector<CallEvent> out;
  for (int k = 0; k < count; ++k) {
    for (int r = 0; r < nranks; ++r) {
      out.push_back(nccl_call(p, {.comm_id = comm_id,
                                  .rank = r,
                                  .nranks = nranks,
                                  .ts_ns = kT0 + static_cast<std::uint64_t>(k) * 10 * kMs + offset(k, r)}));
    }
  }
  return out;
}

const NcclRankArrivals& rank_of(const NcclCommSkew& c, std::int32_t rank) {
  for (const auto& r : c.ranks) {
    if (r.rank == rank) return r;
  }
  static NcclRankArrivals none;
  ADD_FAILURE() << "no rank " << rank;
  return none;
}

TEST(NcclSkew, TwoRanksWithALateRankFlagItAsTheStraggler) {
  Probes p;
  NcclSkew s;
  for (const auto& e : instances(p.allreduce, 2, 30, [](int, int r) { return r == 1 ? 2 * kMs : 0; }))
    s.add(e);
  auto rows = s.rows();
  ASSERT_EQ(rows.size(), 1u);
  const auto& c = rows[0];
  EXPECT_EQ(c.comm_id, 0xc0u);
  EXPECT_EQ(c.nranks, 2);
  EXPECT_EQ(c.local_ranks, 2u);
  EXPECT_EQ(c.instances, 30u);
  EXPECT_EQ(c.pending, 0u);
  EXPECT_EQ(c.incomplete, 0u);
  EXPECT_NEAR(c.skew.quantile(0.5), 2.0 * kMs, 0.02 * kMs);
  EXPECT_EQ(c.skew.max(), 2 * kMs);
  EXPECT_EQ(rank_of(c, 1).last, 30u);
  EXPECT_DOUBLE_EQ(rank_of(c, 1).mean_lateness_ns, 2.0 * kMs);
  EXPECT_EQ(rank_of(c, 1).pid, 1001u);
  EXPECT_EQ(rank_of(c, 0).last, 0u);
  EXPECT_DOUBLE_EQ(rank_of(c, 0).mean_lateness_ns, 0.0);
  EXPECT_TRUE(rank_of(c, 1).straggler);
  EXPECT_EQ(c.straggler, 1);
}

TEST(NcclSkew, FourRanksDeliveredOutOfOrderStillMatchThePlantedLateRank) {
  Probes p;
  NcclSkew s;
  // Rank 2 is 5 ms late in 4 instances of 5 and first in the others; the other ranks
  // differ by tens of microseconds.
  auto events = instances(p.allreduce, 4, 40, [](int k, int r) -> std::uint64_t {
    if (r == 2) return k % 5 != 0 ? 5 * kMs : 0;
    return static_cast<std::uint64_t>((k * 7 + r * 13) % 50 + 1) * kUs;
  });
  // The ring buffer interleaves CPUs: deliver each rank's calls in bursts of 8, the
  // ranks taking turns in a shuffled order (each rank's own calls stay in order).
  std::vector<CallEvent> delivered;
  const int order[] = {3, 1, 0, 2};
  for (int burst = 0; burst < 5; ++burst) {
    for (int r : order) {
      for (int k = burst * 8; k < burst * 8 + 8; ++k)
        delivered.push_back(events[static_cast<std::size_t>(k) * 4 + static_cast<std::size_t>(r)]);
    }
  }
  for (const auto& e : delivered) s.add(e);
  auto rows = s.rows();
  ASSERT_EQ(rows.size(), 1u);
  const auto& c = rows[0];
  EXPECT_EQ(c.instances, 40u);
  EXPECT_EQ(c.late, 0u);
  EXPECT_EQ(c.pending, 0u);
  EXPECT_EQ(rank_of(c, 2).last, 32u);
  EXPECT_GT(rank_of(c, 2).mean_lateness_ns, 3.0 * kMs);
  EXPECT_EQ(c.straggler, 2);
  EXPECT_NEAR(c.skew.quantile(0.99), 5.0 * kMs, 0.1 * kMs);
  for (int r : {0, 1, 3}) EXPECT_FALSE(rank_of(c, r).straggler) << r;
}

TEST(NcclSkew, JitterWithoutASystematicallyLateRankFlagsNone) {
  Probes p;
  NcclSkew s;
  // The two ranks take turns arriving last, 50 us apart.
  for (const auto& e :
       instances(p.allreduce, 2, 100, [](int k, int r) { return (k + r) % 2 == 0 ? 50 * kUs : 0; }))
    s.add(e);
  auto rows = s.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].instances, 100u);
  EXPECT_EQ(rows[0].straggler, -1);
  EXPECT_EQ(rank_of(rows[0], 0).last, 50u);
  // Late by 2 ms, but in too few instances to tell.
  NcclSkew few;
  for (const auto& e : instances(p.allreduce, 2, 5, [](int, int r) { return r == 1 ? 2 * kMs : 0; }))
    few.add(e);
  EXPECT_EQ(few.rows()[0].straggler, -1);
  // Always last but by microseconds: host jitter, not a straggler.
  NcclSkew close;
  for (const auto& e : instances(p.allreduce, 2, 50, [](int, int r) { return r == 1 ? 30 * kUs : 0; }))
    close.add(e);
  EXPECT_EQ(close.rows()[0].straggler, -1);
  EXPECT_EQ(rank_of(close.rows()[0], 1).last, 50u);
}

TEST(NcclSkew, AMissingRankLeavesInstancesPendingThenGivesTheOldestUp) {
  Probes p;
  NcclSkew::Options o;
  o.window = 8;
  NcclSkew s(o);
  // Rank 3's process exits after 5 instances; the other three go on for 20.
  for (const auto& e : instances(p.allreduce, 4, 20, [](int, int) { return std::uint64_t{0}; })) {
    if (e.nccl_rank == 3 && e.ts_ns >= kT0 + 50 * kMs) continue;
    s.add(e);
  }
  auto rows = s.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].instances, 5u);
  EXPECT_EQ(rows[0].pending, 8u);
  EXPECT_EQ(rows[0].incomplete, 7u);  // 15 instances waited, the window holds 8
  EXPECT_EQ(rows[0].skew.count(), 5u);
}

TEST(NcclSkew, ALostRecordShowsAsSizesThatDisagree) {
  Probes p;
  NcclSkew s;
  // Every instance has its own size; rank 1's record of instance 3 was lost, so its
  // later calls line up with the next instance of rank 0.
  std::vector<CallEvent> events;
  for (int k = 0; k < 10; ++k) {
    for (int r = 0; r < 2; ++r) {
      if (r == 1 && k == 3) continue;
      events.push_back(nccl_call(p.allreduce, {.rank = r,
                                               .nranks = 2,
                                               .ts_ns = kT0 + static_cast<std::uint64_t>(k) * kMs,
                                               .count = 100 + static_cast<std::uint64_t>(k)}));
    }
  }
  for (const auto& e : events) s.add(e);
  auto rows = s.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].instances, 3u);
  EXPECT_EQ(rows[0].mismatched, 6u);
  EXPECT_EQ(rows[0].pending, 1u);  // rank 0's last call has no partner
}

TEST(NcclSkew, KindsAreSequencedApartAndBcastIsABroadcast) {
  Probes p;
  NcclSkew s;
  // Rank 0 calls ncclBcast, rank 1 ncclBroadcast: the same collective.
  for (int k = 0; k < 3; ++k) {
    const std::uint64_t t = kT0 + static_cast<std::uint64_t>(k) * kMs;
    s.add(nccl_call(p.allreduce, {.rank = 0, .ts_ns = t}));
    s.add(nccl_call(p.bcast, {.rank = 0, .ts_ns = t + 100 * kUs}));
    s.add(nccl_call(p.broadcast, {.rank = 1, .ts_ns = t + 300 * kUs}));
    s.add(nccl_call(p.allreduce, {.rank = 1, .ts_ns = t + 200 * kUs}));
  }
  auto rows = s.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].instances, 6u);
  EXPECT_EQ(rows[0].skew.max(), 200 * kUs);
  EXPECT_EQ(rank_of(rows[0], 1).last, 6u);
}

TEST(NcclSkew, IgnoresPointToPointNestedFailedAndUnknownCommunicatorCalls) {
  Probes p;
  NcclSkew s;
  for (int r = 0; r < 2; ++r) {
    s.add(nccl_call(p.send, {.rank = r}));
    CallEvent nested = nccl_call(p.allreduce, {.rank = r});
    nested.nested = true;
    s.add(nested);
    s.add(nccl_call(p.allreduce, {.rank = r, .ret = 4}));
    s.add(nccl_call(p.allreduce, {.comm_id = 0, .rank = r}));
  }
  EXPECT_TRUE(s.rows().empty());
  // A communicator with one rank here has nothing to compare.
  NcclSkew one;
  for (int k = 0; k < 3; ++k) one.add(nccl_call(p.allreduce, {.rank = 0, .nranks = 1}));
  EXPECT_TRUE(one.rows().empty());
}

TEST(NcclSkew, ACommunicatorSpanningNodesMatchesItsLocalRanksOnceTheySettle) {
  Probes p;
  NcclSkew s;
  // Ranks 4 and 5 of 8 run here; their creation makes both known.
  s.add(nccl_call(p.init, {.rank = 4, .nranks = 8, .ts_ns = kT0}));
  s.add(nccl_call(p.init, {.rank = 5, .nranks = 8, .ts_ns = kT0 + kMs}));
  auto calls = [&](int k, int rank, std::uint64_t late) {
    return nccl_call(p.allreduce,
                     {.rank = rank,
                      .nranks = 8,
                      .ts_ns = kT0 + 10 * kMs + static_cast<std::uint64_t>(k) * 100 * kMs + late});
  };
  for (int k = 0; k < 5; ++k) {
    s.add(calls(k, 4, 0));
    s.add(calls(k, 5, 3 * kMs));
  }
  // Within a second of the last new rank: still waiting for more ranks.
  ASSERT_EQ(s.rows().size(), 1u);
  EXPECT_EQ(s.rows()[0].instances, 0u);
  EXPECT_EQ(s.rows()[0].pending, 5u);
  for (int k = 5; k < 30; ++k) {
    s.add(calls(k, 4, 0));
    s.add(calls(k, 5, 3 * kMs));
  }
  auto rows = s.rows();
  EXPECT_EQ(rows[0].nranks, 8);
  EXPECT_EQ(rows[0].local_ranks, 2u);
  EXPECT_EQ(rows[0].instances, 30u);
  EXPECT_EQ(rows[0].pending, 0u);
  EXPECT_EQ(rows[0].straggler, 5);
  // A third local rank that shows up only now arrives at instances already matched.
  s.add(calls(0, 6, 0));
  EXPECT_EQ(s.rows()[0].late, 1u);
}

TEST(NcclSkew, CapsCommunicatorsAndRanksAndCountsTheRest) {
  Probes p;
  NcclSkew::Options o;
  o.max_comms = 1;
  NcclSkew s(o);
  s.add(nccl_call(p.allreduce, {.comm_id = 1, .rank = 0}));
  s.add(nccl_call(p.allreduce, {.comm_id = 2, .rank = 0}));
  s.add(nccl_call(p.allreduce, {.comm_id = 1, .rank = 40, .nranks = 64}));
  // Two ranks known: room for kMaxLocalRanks - 2 more; one past it.
  for (int r = 0; r < static_cast<int>(NcclSkew::kMaxLocalRanks) - 1; ++r)
    s.add(nccl_call(p.allreduce, {.comm_id = 1, .rank = r + 100, .nranks = 200}));
  EXPECT_EQ(s.untracked_calls(), 2u);
}

TEST(NcclSkew, ACommunicatorIdleLongEnoughMakesRoomAtTheCap) {
  Probes p;
  NcclSkew::Options o;
  o.max_comms = 2;
  o.forget_idle_ns = 60 * kS;
  NcclSkew s(o);
  s.add(nccl_call(p.allreduce, {.comm_id = 1, .rank = 0, .nranks = 1, .ts_ns = kT0}));
  s.add(nccl_call(p.allreduce, {.comm_id = 2, .rank = 0, .nranks = 1, .ts_ns = kT0 + 30 * kS}));
  // Full, and communicator 1 idle for 50 s only: the new one is not followed.
  s.add(nccl_call(p.allreduce, {.comm_id = 3, .rank = 0, .nranks = 1, .ts_ns = kT0 + 50 * kS}));
  EXPECT_EQ(s.untracked_calls(), 1u);
  EXPECT_EQ(s.forgotten_comms(), 0u);
  // Communicator 1, idle for 70 s, the longest, makes room; communicator 2 stays.
  s.add(nccl_call(p.allreduce, {.comm_id = 3, .rank = 0, .nranks = 1, .ts_ns = kT0 + 70 * kS}));
  EXPECT_EQ(s.untracked_calls(), 1u);
  EXPECT_EQ(s.forgotten_comms(), 1u);
  std::vector<std::uint64_t> ids;
  for (const auto& c : s.progress()) ids.push_back(c.comm_id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{2, 3}));
  // Communicator 3's calls keep their place; 1 is a new communicator again when it returns.
  s.add(nccl_call(p.allreduce, {.comm_id = 3, .rank = 0, .nranks = 1, .ts_ns = kT0 + 71 * kS}));
  s.add(nccl_call(p.allreduce, {.comm_id = 1, .rank = 0, .nranks = 1, .ts_ns = kT0 + 72 * kS}));
  EXPECT_EQ(s.untracked_calls(), 2u);
}

TEST(NcclSkew, LiveAnalysisSnapshotsCarryTheSkew) {
  Probes p;
  LiveAnalysis live;
  auto events = instances(p.allreduce, 2, 3, [](int, int r) { return r == 0 ? 7 * kUs : 0; });
  live.on_calls(events);
  live.on_end(CounterValues{});
  auto snap = live.snapshot();
  ASSERT_NE(snap, nullptr);
  ASSERT_EQ(snap->get<analysis::NcclSkewSummary>().comms.size(), 1u);
  EXPECT_EQ(snap->get<analysis::NcclSkewSummary>().comms[0].instances, 3u);
  EXPECT_EQ(rank_of(snap->get<analysis::NcclSkewSummary>().comms[0], 0).last, 3u);
}

// A rank keeps its starts of the instances numbered a multiple of 16, 256, ... (the last
// four of each), the same instances on every rank, for comparing ranks across nodes.
TEST(NcclSkew, EachRankKeepsItsStartsOfTheSameSparseInstances) {
  Probes p;
  NcclSkew s;
  // One rank here of a communicator of 4 (the others on other nodes).
  for (int k = 0; k < 600; ++k) {
    s.add(nccl_call(
        p.allreduce,
        {.comm_id = 0xc0, .rank = 2, .nranks = 4, .ts_ns = kT0 + static_cast<std::uint64_t>(k) * kMs}));
  }
  const auto progress = s.progress();
  ASSERT_EQ(progress.size(), 1u);
  ASSERT_EQ(progress[0].ranks.size(), 1u);
  std::vector<std::uint64_t> seqs;
  for (const NcclArrival& a : progress[0].ranks[0].arrivals) {
    EXPECT_EQ(a.kind, NcclCollective::kAllReduce);
    EXPECT_EQ(a.ts_ns, kT0 + a.seq * kMs) << a.seq;
    seqs.push_back(a.seq);
  }
  // The last four multiples of 16 below 600, and of 256: 0, 256 and 512 (0 once).
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{0, 256, 512, 544, 560, 576, 592}));
}

}  // namespace
}  // namespace eacgm::analysis
