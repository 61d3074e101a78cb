// FleetLink over a real SQLite store (a fleet of one; the PostgreSQL fleet store is the
// integration tests'): the agent's row of `agents` at the first round and once per
// interval; the node's NCCL rank standings written at most each second while a rank
// waits, else when they change or each interval; every node's rows of its communicators
// read back each second only while a rank waits here or in the rows last read, else once
// per interval; a store that refuses is said once, retried with back-off, and seen again.
#include "history/fleet_link.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "analysis/analysis_snapshot.h"
#include "analysis/nccl_progress.h"
#include "history/sqlite_store.h"
#include "refusing_store.h"

namespace eacgm::history {
namespace {

constexpr std::int64_t kS = 1'000'000'000;
using test::RefusingStore;

struct LinkHarness {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("eacgm-link-" + std::to_string(getpid()));
  std::int64_t now = 1'790'000'000 * kS;
  const std::int64_t started = now;
  std::shared_ptr<const analysis::AnalysisSnapshot> snap = std::make_shared<analysis::AnalysisSnapshot>();
  RefusingStore* store = nullptr;
  bool refuse_open = false;
  int opens = 0;
  std::vector<std::string> log;
  std::vector<std::shared_ptr<const analysis::FleetReports>> handed;
  std::unique_ptr<SqliteStore> check;  // another connection, as another node's agent
  std::unique_ptr<FleetLink> link;

  LinkHarness() {
    std::filesystem::remove_all(dir);
    const std::string path = (dir / "h.db").string();
    auto c = SqliteStore::open(path);
    EXPECT_TRUE(c) << c.error();
    check = std::move(c).value();
    FleetLinkOptions o;
    o.node = "n1";
    o.url = "sqlite:" + path;
    o.interval = std::chrono::seconds(10);
    o.agent_url = "http://n1.example:9977";
    o.version = "9.9.9";
    o.now_ns = [this] { return now; };
    link = std::make_unique<FleetLink>(
        o, [this] { return snap; }, [this](const std::string& line) { log.push_back(line); },
        [this, path](const std::string&) -> Result<std::unique_ptr<Store>> {
          ++opens;
          if (refuse_open) return make_error("connection refused");
          auto real = SqliteStore::open(path);
          if (!real) return std::move(real).take_error();
          auto refusing = std::make_unique<RefusingStore>(std::move(real).value());
          store = refusing.get();
          return std::unique_ptr<Store>(std::move(refusing));
        });
    link->set_fleet_sink([this](auto reports) { handed.push_back(std::move(reports)); });
  }
  ~LinkHarness() {
    link.reset();
    check.reset();
    std::filesystem::remove_all(dir);
  }
  // The node's one rank of communicator 0xc0: waiting `waiting_ns`, at collective `entered`.
  void standing(std::uint64_t waiting_ns, std::uint64_t entered = 6) {
    analysis::AnalysisSnapshot s;
    s.edit<analysis::NcclProgressSummary>().comms.push_back(
        {0xc0, 2, {{0, 500, entered, 5, waiting_ns, analysis::NcclCollective::kAllReduce, {}}}});
    snap = std::make_shared<analysis::AnalysisSnapshot>(std::move(s));
  }
  // n2's rank 1 of communicator 0xc0 (and one of 0xd0), written now.
  void other_node(std::uint64_t waiting_ns) {
    const analysis::NcclRankStanding behind{1, 501, 5, 5, waiting_ns, analysis::NcclCollective::kAllReduce,
                                            {}};
    ASSERT_TRUE(check->write_standings(
        "n2", std::vector<analysis::RankReport>{{"", 0xc0, 2, behind, now, 0}, {"", 0xd0, 2, behind, now, 0}},
        now));
  }
  // When n1's row of 0xc0 was written; -1: none.
  std::int64_t written_at() {
    const std::uint64_t comm[] = {0xc0};
    auto rows = check->standings(comm, 0, 10);
    EXPECT_TRUE(rows) << rows.error();
    for (const auto& r : *rows) {
      if (r.node == "n1") return r.written_ns;
    }
    return -1;
  }
  std::vector<StoredAgent> agents() {
    auto list = check->agents();
    EXPECT_TRUE(list) << list.error();
    return list ? list->rows : std::vector<StoredAgent>();
  }
  long failures_said() {
    return std::count_if(log.begin(), log.end(),
                         [](const std::string& l) { return l.find("(retried)") != std::string::npos; });
  }
};

TEST(FleetLink, WritesTheAgentsRowAtTheFirstRoundAndOncePerInterval) {
  LinkHarness h;
  EXPECT_TRUE(h.agents().empty());
  h.link->poll_once();
  auto rows = h.agents();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].node, "n1");
  EXPECT_EQ(rows[0].url, "http://n1.example:9977");
  EXPECT_EQ(rows[0].version, "9.9.9");
  EXPECT_EQ(rows[0].started_ns, h.started);
  EXPECT_EQ(rows[0].last_seen_ns, h.now);
  EXPECT_EQ(rows[0].every_ns, 10 * kS);
  EXPECT_TRUE(agent_up(rows[0], h.now + 30 * kS));
  EXPECT_FALSE(agent_up(rows[0], h.now + 30 * kS + 1)) << "three heartbeats missed";
  const std::int64_t first = h.now;
  h.now += 9 * kS;
  h.link->poll_once();
  EXPECT_EQ(h.agents()[0].last_seen_ns, first);
  h.now += kS;
  h.link->poll_once();
  EXPECT_EQ(h.agents()[0].last_seen_ns, first + 10 * kS);
  EXPECT_EQ(h.agents()[0].started_ns, h.started);
  EXPECT_TRUE(h.link->stats().up);
  EXPECT_EQ(h.link->stats().last_heartbeat_unix, static_cast<double>(h.now) / 1e9);
  EXPECT_EQ(h.opens, 1) << "one connection, kept";
}

TEST(FleetLink, WritesTheNodesStandingsWhenDueAndReadsTheJobsEachSecondOnlyWhileARankWaits) {
  LinkHarness h;
  h.other_node(0);
  const std::int64_t t0 = h.now;

  h.standing(2 * kS);
  h.link->poll_once();
  EXPECT_EQ(h.written_at(), t0);
  ASSERT_EQ(h.handed.size(), 1u);
  EXPECT_EQ(h.handed[0]->node, "n1");
  EXPECT_EQ(h.handed[0]->read_ns, t0);
  EXPECT_EQ(h.handed[0]->stale_ns, static_cast<std::uint64_t>(30 * kS)) << "three 10 s intervals";
  ASSERT_EQ(h.handed[0]->rows.size(), 2u) << "its own row and n2's of communicator 0xc0";
  std::set<std::string> nodes;
  for (const auto& r : h.handed[0]->rows) nodes.insert(r.node);
  EXPECT_EQ(nodes, (std::set<std::string>{"n1", "n2"}));

  // A rank waits: written and read again a second later, not before.
  h.now += kS / 2;
  h.standing(2 * kS + kS / 2);
  h.link->poll_once();
  EXPECT_EQ(h.written_at(), t0);
  EXPECT_EQ(h.handed.size(), 1u);
  h.now += kS / 2;
  h.standing(3 * kS);
  h.link->poll_once();
  EXPECT_EQ(h.written_at(), t0 + kS);
  EXPECT_EQ(h.handed.size(), 2u);

  // It entered the next collective: written and read at once.
  h.now += kS;
  h.standing(0, 7);
  h.link->poll_once();
  EXPECT_EQ(h.written_at(), t0 + 2 * kS);
  EXPECT_EQ(h.handed.size(), 3u);
  // Nobody waits and nothing changes: written and read only after the interval.
  h.now += 5 * kS;
  h.link->poll_once();
  EXPECT_EQ(h.written_at(), t0 + 2 * kS);
  EXPECT_EQ(h.handed.size(), 3u) << "no read while nobody waits";
  h.now += 5 * kS;
  h.link->poll_once();
  EXPECT_EQ(h.written_at(), t0 + 12 * kS);
  EXPECT_EQ(h.handed.size(), 4u);
  EXPECT_EQ(h.link->stats().standings_reads, 4u);

  // A rank of n2 waits: seen at the next interval's read, then read each second.
  h.now += kS;
  h.other_node(4 * kS);
  h.link->poll_once();
  EXPECT_EQ(h.handed.size(), 4u);
  h.now += 9 * kS;
  h.link->poll_once();
  ASSERT_EQ(h.handed.size(), 5u);
  h.now += kS;
  h.link->poll_once();
  EXPECT_EQ(h.handed.size(), 6u) << "n2's rank waits in the rows last read";
  EXPECT_EQ(h.written_at(), t0 + 22 * kS) << "n1's own rows only at their interval";

  // Its rank exits: its row goes, n2's stay; nothing is read for no communicator.
  h.now += kS;
  h.snap = std::make_shared<analysis::AnalysisSnapshot>();
  const auto reads = h.link->stats().standings_reads;
  h.link->poll_once();
  EXPECT_EQ(h.written_at(), -1);
  EXPECT_TRUE(h.handed.back()->rows.empty());
  EXPECT_EQ(h.link->stats().standings_reads, reads);
  EXPECT_EQ(h.check->standings({}, 0, 10)->size(), 2u);
}

TEST(FleetLink, AStoreThatRefusesIsSaidOnceAndTriedAgainWithBackOff) {
  LinkHarness h;
  h.refuse_open = true;
  h.link->poll_once();
  EXPECT_EQ(h.failures_said(), 1);
  EXPECT_NE(h.log.back().find("connecting failed: connection refused"), std::string::npos) << h.log.back();
  EXPECT_FALSE(h.link->stats().up);
  EXPECT_EQ(h.link->stats().failures, 1u);
  // Back-off: 1 s, then 2 s; nothing is tried before.
  h.now += kS / 2;
  h.link->poll_once();
  EXPECT_EQ(h.opens, 1);
  h.now += kS / 2;
  h.link->poll_once();
  EXPECT_EQ(h.opens, 2);
  h.now += kS;
  h.link->poll_once();
  EXPECT_EQ(h.opens, 2);
  h.now += kS;
  h.link->poll_once();
  EXPECT_EQ(h.opens, 3);
  EXPECT_EQ(h.failures_said(), 1) << "said once";
  EXPECT_EQ(h.link->stats().failures, 3u);

  // It answers: the agent is seen at once, and said so.
  h.refuse_open = false;
  h.now += 4 * kS;
  h.link->poll_once();
  EXPECT_TRUE(h.link->stats().up);
  EXPECT_EQ(h.log.back().find("answering again") != std::string::npos, true) << h.log.back();
  ASSERT_EQ(h.agents().size(), 1u);
  EXPECT_EQ(h.agents()[0].last_seen_ns, h.now);

  // The store goes away with a rank waiting: the standings' write fails, said once; the
  // retry writes the heartbeat first.
  h.standing(2 * kS);
  h.store->down = true;
  h.now += kS;
  h.link->poll_once();
  h.now += kS;
  h.link->poll_once();
  EXPECT_EQ(h.failures_said(), 2);
  EXPECT_NE(h.log.back().find("writing NCCL standings failed"), std::string::npos) << h.log.back();
  h.store->down = false;
  h.now += 2 * kS;
  h.link->poll_once();
  EXPECT_TRUE(h.link->stats().up);
  EXPECT_EQ(h.agents()[0].last_seen_ns, h.now);
  EXPECT_EQ(h.written_at(), h.now);
}

}  // namespace
}  // namespace eacgm::history
