// job_places_of: a job's ranks by node from the store's rows: its live processes (an
// exited one and another job's left out, a pid's last row counted once), ranks from the
// row or else the node's standing in the widest communicator, the communicators' ranks
// whose processes are not in the store yet, each node's agent and clock.
#include "history/job_ranks.h"

#include <gtest/gtest.h>

namespace eacgm::history {
namespace {

StoredProcess process(const std::string& node, std::uint32_t pid, const std::string& job,
                      std::optional<long> rank = std::nullopt, bool exited = false,
                      std::int64_t last_ns = 100) {
  StoredProcess p;
  p.node = node;
  p.record.key.pid = pid;
  p.record.comm = "python";
  p.record.job = job;
  p.record.rank = rank;
  p.record.exited = exited;
  p.record.last_ns = last_ns;
  return p;
}

analysis::RankReport standing(const std::string& node, std::uint64_t comm, std::int32_t nranks,
                              std::int32_t rank, std::uint32_t pid) {
  analysis::RankReport r;
  r.node = node;
  r.comm_id = comm;
  r.nranks = nranks;
  r.standing.rank = rank;
  r.standing.pid = pid;
  return r;
}

TEST(JobPlaces, RanksByNodeWithTheirAgentsAndClocks) {
  const std::vector<StoredProcess> processes{
      process("a", 10, "J", 0),
      process("a", 11, "J"),                 // its rank from the standings
      process("a", 12, "J", 5, true),        // exited
      process("a", 13, "other", 9),          // another job
      process("b", 20, "J", 2, true, 50),    // an earlier row of pid 20...
      process("b", 20, "J", 2, false, 200),  // ...and its last, running
  };
  const std::vector<analysis::RankReport> standings{
      standing("a", 0x1, 2, 0, 11),  // a small communicator: rank 0 in it
      standing("a", 0x2, 4, 1, 11),  // the job's world: rank 1
      standing("a", 0x2, 4, 0, 10), standing("b", 0x2, 4, 2, 20),
      standing("c", 0x2, 4, 3, 30),  // node c's processes not in the store yet
      standing("d", 0x9, 2, 0, 40),  // another communicator
  };
  AgentList agents;
  agents.now_ns = 1'000'000'000'000;
  agents.rows = {StoredAgent{"a", "http://a:9977", "v", 0, agents.now_ns - 1'000'000'000, 10'000'000'000},
                 StoredAgent{"c", "http://c:9977", "v", 0, agents.now_ns - 100'000'000'000, 10'000'000'000}};
  const std::vector<NodeClock> clocks{{"b", ClockEstimate{0, -2'000'000, 300'000}}};

  const JobPlaces got = job_places_of("J", processes, standings, agents, clocks);
  EXPECT_EQ(got.job, "J");
  ASSERT_EQ(got.nodes.size(), 3u);
  const JobNodePlace& a = got.nodes[0];
  EXPECT_EQ(a.node, "a");
  ASSERT_EQ(a.ranks.size(), 2u);
  EXPECT_EQ(a.ranks[0].rank, 0);
  EXPECT_EQ(a.ranks[0].pid, 10u);
  EXPECT_EQ(a.ranks[1].rank, 1) << "the widest communicator's rank";
  EXPECT_EQ(a.ranks[1].pid, 11u);
  EXPECT_EQ(a.ranks[1].comm, "python");
  EXPECT_EQ(a.agent_url, "http://a:9977");
  EXPECT_TRUE(a.agent_up);
  EXPECT_FALSE(a.clock);

  const JobNodePlace& b = got.nodes[1];
  EXPECT_EQ(b.node, "b");
  ASSERT_EQ(b.ranks.size(), 1u);
  EXPECT_EQ(b.ranks[0].rank, 2);
  EXPECT_EQ(b.agent_url, "") << "no agent row";
  ASSERT_TRUE(b.clock);
  EXPECT_EQ(b.clock->offset_ns, -2'000'000);

  const JobNodePlace& c = got.nodes[2];
  EXPECT_EQ(c.node, "c");
  ASSERT_EQ(c.ranks.size(), 1u);
  EXPECT_EQ(c.ranks[0].rank, 3);
  EXPECT_EQ(c.ranks[0].pid, 30u);
  EXPECT_EQ(c.ranks[0].comm, "");
  EXPECT_EQ(c.agent_url, "http://c:9977");
  EXPECT_FALSE(c.agent_up) << "last seen 100 s ago, beating every 10 s";
}

TEST(JobPlaces, AJobNoProcessCarriesHasNoPlaces) {
  const JobPlaces got =
      job_places_of("missing", {process("a", 10, "J", 0)}, {standing("a", 0x2, 4, 0, 10)}, AgentList{}, {});
  EXPECT_TRUE(got.nodes.empty());
}

}  // namespace
}  // namespace eacgm::history
