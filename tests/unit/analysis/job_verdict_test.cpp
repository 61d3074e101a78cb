// JobVerdict over this node's standings and other nodes' rows: the rank missing on
// another node is named with its node, the waiting side with theirs; stale rows and rows
// of this node's name are left out (their ranks unreported); a rank this node has is its
// own; a row's wait grows by the row's age; nothing under the minimum age or with every
// rank past the instance; a hang lasts across updates and is over once the rank arrives.
#include "analysis/job_verdict.h"

#include <gtest/gtest.h>

#include <vector>

namespace eacgm::analysis {
namespace {

constexpr std::uint64_t kSecond = 1'000'000'000;
constexpr std::uint64_t kT0 = 1'700'000'000 * kSecond;
constexpr std::uint64_t kComm = 0xeac9;

NcclRankStanding standing(std::int32_t rank, std::uint64_t entered, std::uint64_t finished,
                          std::uint64_t waiting_ns) {
  return {rank,       static_cast<std::uint32_t>(1000 + rank),
          entered,    finished,
          waiting_ns, NcclCollective::kAllReduce,
          {}};
}

RankReport row(const std::string& node, const NcclRankStanding& s, std::uint64_t written_ns) {
  return {node, kComm, 4, s, static_cast<std::int64_t>(written_ns), 0};
}

// Node a's ranks 0 and 1, inside all-reduce #6 for `waited`.
NcclProgressSummary node_a(std::uint64_t waited, std::uint64_t entered = 6) {
  NcclProgressSummary s;
  s.comms.push_back({kComm, 4, {standing(0, entered, 5, waited), standing(1, entered, 5, waited)}});
  return s;
}

FleetReports fleet(std::vector<RankReport> rows, std::uint64_t read_ns) {
  FleetReports f;
  f.node = "a";
  f.read_ns = static_cast<std::int64_t>(read_ns);
  f.stale_ns = 30 * kSecond;
  f.rows = std::move(rows);
  return f;
}

TEST(JobVerdict, NamesTheRankAnotherNodeNeverSentIntoTheCollectiveAndWhoWaits) {
  JobVerdict v;
  v.set_min_age_ns(5 * kSecond);
  const auto f =
      fleet({row("b", standing(2, 6, 5, 6 * kSecond), kT0), row("b", standing(3, 5, 5, 0), kT0)}, kT0);
  v.update(node_a(7 * kSecond), &f, kT0 + kSecond);
  const auto& s = v.summary();
  EXPECT_TRUE(s.shared);
  EXPECT_EQ(s.other_ranks, 2u);
  ASSERT_EQ(s.communicators.size(), 1u);
  const JobCommVerdict& c = s.communicators[0];
  EXPECT_TRUE(c.hang);
  EXPECT_EQ(c.function, "ncclAllReduce");
  EXPECT_EQ(c.number, 6u);
  ASSERT_EQ(c.missing.size(), 1u);
  EXPECT_EQ(c.missing[0].rank, 3);
  EXPECT_EQ(c.missing[0].node, "b");
  EXPECT_EQ(c.missing[0].pid, 1003u);
  ASSERT_EQ(c.in.size(), 3u);
  EXPECT_EQ(c.in[2].node, "b");
  EXPECT_EQ(c.in[2].waiting_ns, 7 * kSecond) << "a row's wait goes on for the row's age";
  EXPECT_EQ(c.age_ns, 7 * kSecond);
  EXPECT_TRUE(c.unreported.empty());
  EXPECT_EQ(c.nodes, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c.verdict,
            "rank 3 on node b never entered ncclAllReduce #6; ranks 0-2 on nodes a,b waiting for 7 s");
  EXPECT_EQ(s.total, 1u);
  EXPECT_EQ(c.start_ns, kT0 + kSecond - 7 * kSecond);
}

TEST(JobVerdict, SaysNothingBeforeTheMinimumAgeOrWhenEveryRankIsPastTheInstance) {
  JobVerdict v;
  v.set_min_age_ns(5 * kSecond);
  auto f = fleet({row("b", standing(2, 6, 5, 2 * kSecond), kT0), row("b", standing(3, 5, 5, 0), kT0)}, kT0);
  v.update(node_a(3 * kSecond), &f, kT0);
  EXPECT_TRUE(v.summary().communicators.empty());
  f = fleet({row("b", standing(2, 6, 6, 0), kT0), row("b", standing(3, 6, 6, 0), kT0)}, kT0);
  v.update(node_a(0, 6), &f, kT0);
  EXPECT_TRUE(v.summary().communicators.empty());
  EXPECT_EQ(v.summary().total, 0u);
}

TEST(JobVerdict, StaleRowsAndRowsOfThisNodesNameReportNothing) {
  JobVerdict v;
  v.set_min_age_ns(kSecond);
  // Node b's rows are 31 s old (its agent stopped writing); a row named "a" is this node's
  // own, written before, and its rank 1 stands as the node's standings say.
  const auto f = fleet({row("b", standing(2, 6, 5, kSecond), kT0), row("b", standing(3, 5, 5, 0), kT0),
                        row("a", standing(1, 2, 2, 0), kT0 + 31 * kSecond)},
                       kT0 + 31 * kSecond);
  v.update(node_a(10 * kSecond), &f, kT0 + 31 * kSecond);
  ASSERT_EQ(v.summary().communicators.size(), 1u);
  const JobCommVerdict& c = v.summary().communicators[0];
  EXPECT_EQ(v.summary().other_ranks, 0u);
  EXPECT_TRUE(c.hang);
  EXPECT_TRUE(c.missing.empty());
  EXPECT_EQ(c.unreported, (std::vector<std::int32_t>{2, 3}));
  EXPECT_EQ(c.verdict,
            "ranks 0,1 on node a waiting in ncclAllReduce #6 for 10 s; ranks 2,3 reported by no agent");
}

TEST(JobVerdict, ThisNodesStandingOfARankIsItsOwnOverAnotherNodesRow) {
  JobVerdict v;
  v.set_min_age_ns(kSecond);
  // Node c still has rank 1 behind (a row from before it moved); node a has it inside #6.
  const auto f = fleet({row("c", standing(1, 5, 5, 0), kT0), row("b", standing(2, 6, 5, 4 * kSecond), kT0),
                        row("b", standing(3, 6, 5, 4 * kSecond), kT0)},
                       kT0);
  v.update(node_a(4 * kSecond), &f, kT0);
  EXPECT_EQ(v.summary().other_ranks, 2u);
  EXPECT_TRUE(v.summary().communicators.empty()) << "every rank is inside #6: none is missing";
  // Without node a's standing of it, c's row makes rank 1 the one missing.
  NcclProgressSummary only_0;
  only_0.comms.push_back({kComm, 4, {standing(0, 6, 5, 4 * kSecond)}});
  v.update(only_0, &f, kT0);
  ASSERT_EQ(v.summary().communicators.size(), 1u);
  EXPECT_EQ(v.summary().communicators[0].verdict,
            "rank 1 on node c never entered ncclAllReduce #6; ranks 0,2,3 on nodes a,b waiting for 4 s");
}

TEST(JobVerdict, AHangLastsAcrossUpdatesAndIsOverOnceTheRankArrives) {
  JobVerdict v;
  v.set_min_age_ns(kSecond);
  auto behind =
      fleet({row("b", standing(2, 6, 5, 2 * kSecond), kT0), row("b", standing(3, 5, 5, 0), kT0)}, kT0);
  v.update(node_a(2 * kSecond), &behind, kT0);
  behind = fleet({row("b", standing(2, 6, 5, 12 * kSecond), kT0 + 10 * kSecond),
                  row("b", standing(3, 5, 5, 0), kT0 + 10 * kSecond)},
                 kT0 + 10 * kSecond);
  v.update(node_a(12 * kSecond), &behind, kT0 + 10 * kSecond);
  ASSERT_EQ(v.summary().communicators.size(), 1u);
  EXPECT_EQ(v.summary().communicators[0].start_ns, kT0 - 2 * kSecond);
  EXPECT_EQ(v.summary().total, 1u);
  EXPECT_TRUE(v.summary().ended.empty());

  const auto arrived = fleet({row("b", standing(2, 7, 7, 0), kT0 + 11 * kSecond),
                              row("b", standing(3, 7, 7, 0), kT0 + 11 * kSecond)},
                             kT0 + 11 * kSecond);
  v.update(node_a(0, 7), &arrived, kT0 + 11 * kSecond);
  EXPECT_TRUE(v.summary().communicators.empty());
  ASSERT_EQ(v.summary().ended.size(), 1u);
  const JobCommVerdict& over = v.summary().ended[0];
  EXPECT_EQ(over.end_ns, kT0 + 11 * kSecond);
  EXPECT_EQ(over.age_ns, 13 * kSecond);
  EXPECT_EQ(over.missing.at(0).rank, 3);
  EXPECT_EQ(v.summary().total, 1u);
}

// The merge alone, as `eacgm job` runs it over every node's rows: ranks missing on two
// nodes are named per node.
TEST(JudgeJob, NamesMissingRanksPerNode) {
  std::vector<RankReport> rows{row("a", standing(0, 9, 8, 20 * kSecond), kT0),
                               row("b", standing(1, 8, 8, 0), kT0), row("b", standing(2, 8, 8, 0), kT0),
                               row("c", standing(3, 8, 8, 0), kT0)};
  const auto verdicts = judge_job(rows, static_cast<std::int64_t>(kT0), 5 * kSecond);
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0].verdict,
            "ranks 1,2 on node b, rank 3 on node c never entered ncclAllReduce #9; rank 0 on node a waiting "
            "for 20 s");
}

}  // namespace
}  // namespace eacgm::analysis
