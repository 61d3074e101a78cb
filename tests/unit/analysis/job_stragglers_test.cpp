// JobStragglers: the rank arriving last across nodes, from the ranks' kept starts on the
// store's clock, named only above the clocks' bound (analysis/job_stragglers.h).
#include "analysis/job_stragglers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace eacgm::analysis {
namespace {

constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kT0 = 1'700'000'000'000'000'000;

// Rank `rank` on `node` with starts of instances 0, 16, 32, ... (count of them), each
// `late` after kT0 + seq ms, its node's clock bound `bound`.
RankReport rank_row(const std::string& node, std::int32_t rank, std::uint64_t late, std::int64_t bound,
                    int count = 6, std::uint64_t first = 0) {
  RankReport r;
  r.node = node;
  r.comm_id = 0xc0;
  r.nranks = 4;
  r.standing.rank = rank;
  r.clock_uncertainty_ns = bound;
  for (int i = 0; i < count; ++i) {
    const std::uint64_t seq = first + 16 * static_cast<std::uint64_t>(i);
    r.standing.arrivals.push_back({NcclCollective::kAllReduce, seq, kT0 + seq * kMs + late});
  }
  return r;
}

TEST(JobStragglers, TheRankArrivingLastOnAnotherNodeIsNamedAboveTheClocksBound) {
  const std::vector<RankReport> rows{rank_row("a", 0, 0, 50'000), rank_row("a", 1, 100'000, 50'000),
                                     rank_row("b", 2, 200'000, 80'000), rank_row("b", 3, 5 * kMs, 80'000)};
  const auto out = job_stragglers(rows);
  ASSERT_EQ(out.size(), 1u);
  const JobCommStragglers& c = out[0];
  EXPECT_EQ(c.comm_id, 0xc0u);
  EXPECT_EQ(c.nodes, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c.instances, 6u);
  EXPECT_EQ(c.straggler, 3);
  EXPECT_EQ(c.straggler_node, "b");
  ASSERT_EQ(c.ranks.size(), 4u);
  EXPECT_EQ(c.ranks[3].last, 6u);
  EXPECT_DOUBLE_EQ(c.ranks[3].mean_lateness_ns, 5e6);
  EXPECT_EQ(c.ranks[3].uncertainty_ns, 80'000 + 50'000);
  EXPECT_DOUBLE_EQ(c.ranks[0].mean_lateness_ns, 0);
  EXPECT_EQ(c.verdict,
            "straggler: rank 3 on node b arrives last at 6 of 6 instances, 5.00 ms late on average (clocks "
            "±0.13 ms)");
}

TEST(JobStragglers, ALatenessWithinTheClocksBoundIsSaidNotRanked) {
  // 2 ms late, but node b's clock is known only to ±3 ms.
  const std::vector<RankReport> rows{rank_row("a", 0, 0, 10'000), rank_row("b", 1, 2 * kMs, 3 * kMs)};
  const auto out = job_stragglers(rows);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].straggler, -1);
  EXPECT_NE(out[0].verdict.find("no straggler named: rank 1 on node b arrives last at 6 of 6 instances"),
            std::string::npos)
      << out[0].verdict;
  EXPECT_NE(out[0].verdict.find("within the clocks' uncertainty"), std::string::npos);
  // A clock never measured: the same, said so.
  const std::vector<RankReport> unmeasured{rank_row("a", 0, 0, 10'000), rank_row("b", 1, 9 * kMs, -1)};
  const auto u = job_stragglers(unmeasured);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].straggler, -1);
  EXPECT_EQ(u[0].ranks[1].uncertainty_ns, -1);
  EXPECT_NE(u[0].verdict.find("clocks not measured"), std::string::npos) << u[0].verdict;
}

TEST(JobStragglers, OnlyInstancesEveryRankKeptAreComparedAndTooFewNameNone) {
  // Rank 1's kept instances start at 48: 3 in common with rank 0's 0..80.
  const std::vector<RankReport> rows{rank_row("a", 0, 0, 0), rank_row("b", 1, 4 * kMs, 0, 6, 48)};
  const auto out = job_stragglers(rows);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].instances, 3u);
  EXPECT_EQ(out[0].straggler, -1);
  EXPECT_EQ(out[0].verdict, "3 instance(s) kept by every rank, fewer than the 4 to compare");
}

TEST(JobStragglers, ACommunicatorOnOneNodeIsLeftToTheNodesOwnSkew) {
  const std::vector<RankReport> rows{rank_row("a", 0, 0, 0), rank_row("a", 1, 4 * kMs, 0)};
  EXPECT_TRUE(job_stragglers(rows).empty());
}

TEST(JobStragglers, RanksArrivingTogetherHaveNoStraggler) {
  // Each rank last at some instances, none at most of them, lateness under 1 ms.
  std::vector<RankReport> rows{rank_row("a", 0, 0, 0), rank_row("b", 1, 0, 0)};
  for (std::size_t i = 0; i < rows[1].standing.arrivals.size(); ++i) {
    rows[i % 2].standing.arrivals[i].ts_ns += 200'000;
  }
  const auto out = job_stragglers(rows);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].straggler, -1);
  EXPECT_EQ(out[0].verdict.rfind("no straggler: the latest, rank ", 0), 0u) << out[0].verdict;
}

}  // namespace
}  // namespace eacgm::analysis
