// The fleet's history in a real PostgreSQL server (a throwaway cluster, run as an
// unprivileged user): two `eacgm serve` agents with different --node write to one
// database while the CUDA test program runs; the server is stopped for a while mid-run
// and started again. Each agent counts the refused writes, spools the intervals and
// writes them once the server is back; at the end every run's calls are in the history
// of each node, none dropped, and the password shows in no line. Each agent measures
// its clock against the server's (/metrics, node_clocks).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "../unit/history/pg_cluster.h"
#include "../unit/server/http_client.h"
#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using history::test::PgCluster;
using server::testing::get;

// One agent: its port, its node and the process.
struct Agent {
  std::string node;
  std::uint16_t port = 0;
  std::unique_ptr<Subprocess> serve;

  // The value of one series in /metrics ("" when absent).
  std::string metric(const std::string& series) const {
    const std::string body = get(port, "/metrics").body;
    auto at = body.find("\n" + series + " ");
    if (at == std::string::npos) return "";
    auto start = at + series.size() + 2;
    return body.substr(start, body.find('\n', start) - start);
  }
  double number(const std::string& series) const {
    const std::string v = metric(series);
    return v.empty() ? -1 : std::stod(v);
  }
};

class HistoryPostgres : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
    ASSERT_EQ(cluster_.start(), "");
    ASSERT_EQ(cluster_.create_database("fleet"), "");
    dir_ = temp_dir();
    std::ofstream(dir_ + "/eacgm.toml") << "[store]\ninterval_s = 1\n";
  }
  Agent start_agent(const std::string& node) {
    Agent a;
    a.node = node;
    a.port = free_port();
    a.serve = std::make_unique<Subprocess>(
        std::vector<std::string>{bin("eacgm"), "serve", "--listen", "127.0.0.1:" + std::to_string(a.port),
                                 "--mode", "per-call", "--no-gpu", "--config", dir_ + "/eacgm.toml",
                                 "--store", cluster_.url("fleet"), "--node", node},
        dir_);
    EXPECT_TRUE(a.serve->wait_for("tracing all processes", true)) << a.serve->err();
    const std::uint16_t port = a.port;
    EXPECT_TRUE(eventually([port] { return get(port, "/readyz").status == 200; })) << a.serve->err();
    return a;
  }
  // `eacgm history` of one node, as JSON.
  json history_of(const std::string& node) {
    Subprocess cli({bin("eacgm"), "history", "--store", cluster_.url("fleet"), "--node", node, "--since",
                    "1h", "--json"},
                   dir_);
    EXPECT_EQ(cli.wait(), 0) << cli.err();
    EXPECT_EQ(cli.err().find(PgCluster::kPassword), std::string::npos) << cli.err();
    return json::parse(cli.out(), nullptr, false);
  }
  PgCluster cluster_;
  std::string dir_;
};

TEST_F(HistoryPostgres, TwoNodesKeepEveryCallThroughAServerOutage) {
  Agent agents[] = {start_agent("node-a"), start_agent("node-b")};
  for (const auto& a : agents) {
    EXPECT_NE(
        a.serve->err().find("keeping history in postgresql://eacgm:***@127.0.0.1:" +
                            std::to_string(cluster_.port()) + "/fleet (node " + a.node + ", every 1 s)"),
        std::string::npos)
        << a.serve->err();
  }
  int runs = 0;
  auto run_program = [&] {
    Subprocess program({bin("cuda_calls")}, dir_);
    EXPECT_EQ(program.wait(), 7);
    ++runs;
  };
  for (int i = 0; i < 3; ++i) run_program();
  // Both nodes' first runs are in the database before the outage.
  for (const auto& a : agents) {
    EXPECT_TRUE(eventually([&] {
      const auto r = get(a.port, "/api/v1/history/functions?since=1h&node=" + a.node);
      return calls_of(json::parse(r.body, nullptr, false), "cudaMalloc") == 6;
    })) << a.node;
  }

  // The server goes away for about five seconds while the program keeps running.
  ASSERT_EQ(cluster_.stop(), "");
  const auto down_at = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) run_program();
  for (const auto& a : agents) {
    EXPECT_TRUE(eventually([&] { return a.number("eacgm_store_write_failures_total") > 0; }, 15s)) << a.node;
    EXPECT_EQ(a.metric("eacgm_store_up"), "0") << a.node;
  }
  std::this_thread::sleep_until(down_at + 5s);
  ASSERT_EQ(cluster_.start_server(), "");
  for (int i = 0; i < 3; ++i) run_program();

  // Back: the spool is written, in order, and nothing was let go.
  for (const auto& a : agents) {
    EXPECT_TRUE(eventually(
        [&] { return a.metric("eacgm_store_up") == "1" && a.metric("eacgm_store_spooled_batches") == "0"; },
        60s))
        << a.node << ": " << get(a.port, "/metrics").body;
    EXPECT_TRUE(eventually([&] {
      const auto r = get(a.port, "/api/v1/history/functions?since=1h&node=" + a.node);
      return calls_of(json::parse(r.body, nullptr, false), "cudaMalloc") == 2ULL * runs;
    })) << a.node
        << ": " << get(a.port, "/api/v1/history/functions?since=1h&node=" + a.node).body;
    EXPECT_EQ(a.metric("eacgm_store_dropped_rows_total"), "0") << a.node;
    EXPECT_EQ(a.metric("eacgm_store_dropped_batches_total"), "0") << a.node;
    EXPECT_GT(a.number("eacgm_store_rows_written_total"), 0) << a.node;
  }
  for (auto& a : agents) {
    a.serve->signal(SIGTERM);
    EXPECT_EQ(a.serve->wait(), 0) << a.serve->err();
    const std::string err = a.serve->err();
    EXPECT_NE(err.find("write failed (kept for a retry)"), std::string::npos) << err;
    EXPECT_NE(err.find("writing again"), std::string::npos) << err;
    EXPECT_EQ(err.find(PgCluster::kPassword), std::string::npos) << err;
  }

  // With the agents gone, each node's history holds every run's calls exactly.
  for (const auto& a : agents) {
    const json doc = history_of(a.node);
    ASSERT_FALSE(doc.is_discarded());
    EXPECT_EQ(calls_of(doc, "cudaMalloc"), 2ULL * runs) << a.node;
    EXPECT_EQ(calls_of(doc, "cudaLaunchKernel"), 3ULL * runs) << a.node;
    std::size_t programs = 0;
    for (const auto& p : doc["processes"]) {
      if (p["comm"] != "cuda_calls") continue;
      ++programs;
      EXPECT_EQ(p["node"], a.node);
      EXPECT_EQ(p["calls"], 12) << p.dump();
    }
    EXPECT_EQ(programs, static_cast<std::size_t>(runs)) << a.node;
  }
  // Both nodes in one database: the fleet's sum is theirs.
  const json fleet = [&] {
    Subprocess cli({bin("eacgm"), "history", "--store", cluster_.url("fleet"), "--since", "1h", "--json"},
                   dir_);
    EXPECT_EQ(cli.wait(), 0) << cli.err();
    return json::parse(cli.out(), nullptr, false);
  }();
  EXPECT_EQ(calls_of(fleet, "cudaMalloc"), 4ULL * runs);
  auto [rc, nodes] = cluster_.psql("fleet", "SELECT count(DISTINCT node) FROM intervals");
  EXPECT_EQ(rc, 0) << nodes;
  EXPECT_EQ(nodes, "2");
}

// The server runs on the agents' machine: one clock. Each agent's measured offset is
// then zero within its bound, on /metrics and in its row of node_clocks (one per node).
TEST_F(HistoryPostgres, EachNodeMeasuresItsClockAgainstTheServer) {
  Agent agents[] = {start_agent("node-a"), start_agent("node-b")};
  constexpr double kEpsilonS = 1e-6;  // /metrics prints the seconds in floating point
  for (const auto& a : agents) {
    EXPECT_TRUE(eventually([&] {
      return !a.metric("eacgm_store_clock_offset_seconds").empty() &&
             !a.metric("eacgm_store_clock_uncertainty_seconds").empty();
    })) << a.node
        << ": " << get(a.port, "/metrics").body;
    const double offset = a.number("eacgm_store_clock_offset_seconds");
    const double uncertainty = a.number("eacgm_store_clock_uncertainty_seconds");
    EXPECT_GT(uncertainty, 0) << a.node;
    EXPECT_LE(std::abs(offset), uncertainty + kEpsilonS) << a.node << ": offset " << offset;
    // A round trip to a server on the same machine: well under a second.
    EXPECT_LT(uncertainty, 1.0) << a.node;
  }
  auto [rc, rows] =
      cluster_.psql("fleet",
                    "SELECT n.name, abs(c.offset_ns) <= c.uncertainty_ns, c.uncertainty_ns > 0, "
                    "abs((extract(epoch FROM clock_timestamp()) * 1e9)::bigint - c.measured_ns) "
                    "< 60e9 FROM node_clocks c JOIN names n ON n.id = c.node ORDER BY 1");
  ASSERT_EQ(rc, 0) << rows;
  EXPECT_EQ(rows, "node-a|t|t|t\nnode-b|t|t|t");
  for (auto& a : agents) {
    a.serve->signal(SIGTERM);
    EXPECT_EQ(a.serve->wait(), 0) << a.serve->err();
  }
}

// A node with its own store and a fleet store: its SQLite file keeps every interval, the
// fleet's database gets its minute rollups, processes and clock, never a raw row. With the
// fleet server away while the node rolls a minute up, shipping fails and is retried; once
// the server is back, the minutes made meanwhile arrive with the calls of the outage.
TEST_F(HistoryPostgres, ANodeShipsItsRollupsToTheFleetStoreThroughAnOutage) {
  Agent a;
  a.node = "node-s";
  a.port = free_port();
  a.serve = std::make_unique<Subprocess>(
      std::vector<std::string>{bin("eacgm"), "serve", "--listen", "127.0.0.1:" + std::to_string(a.port),
                               "--mode", "per-call", "--no-gpu", "--config", dir_ + "/eacgm.toml", "--store",
                               "sqlite:" + dir_ + "/node.db", "--fleet-store", cluster_.url("fleet"),
                               "--node", a.node},
      dir_);
  ASSERT_TRUE(a.serve->wait_for("tracing all processes", true)) << a.serve->err();
  EXPECT_NE(
      a.serve->err().find("keeping history in sqlite:" + dir_ +
                          "/node.db (node node-s, every 1 s); its rollups and facts go to the fleet store "
                          "postgresql://eacgm:***@127.0.0.1:" +
                          std::to_string(cluster_.port()) + "/fleet"),
      std::string::npos)
      << a.serve->err();
  auto fleet = [&](const std::string& sql) {
    auto [rc, out] = cluster_.psql("fleet", sql);
    return rc == 0 ? out : "error: " + out;
  };
  // Only this test's runs count: the agent traces every process of the machine.
  std::vector<std::string> pids;
  auto ours = [&pids] {
    std::string list;
    for (const auto& p : pids) list += (list.empty() ? "" : ", ") + p;
    return list;
  };
  auto malloc_calls = [&] {
    return "SELECT coalesce(sum(t.calls), 0) FROM functions t JOIN names f ON f.id = t.function WHERE t.tier "
           "= 1 "
           "AND f.name = 'cudaMalloc' AND t.pid IN (" +
           ours() + ")";
  };
  auto processes = [&] { return "SELECT count(*) FROM processes WHERE pid IN (" + ours() + ")"; };
  auto run_program = [&] {
    Subprocess program({bin("cuda_calls")}, dir_);
    pids.push_back(std::to_string(program.pid()));
    EXPECT_EQ(program.wait(), 7);
  };
  for (int i = 0; i < 3; ++i) run_program();
  // The node rolls each complete minute up once a minute and ships it at once.
  EXPECT_TRUE(eventually([&] { return fleet(malloc_calls()) == "6"; }, 180s)) << fleet(malloc_calls()) << "\n"
                                                                              << a.serve->err();
  EXPECT_EQ(fleet("SELECT count(*) FROM functions WHERE tier = 0"), "0");
  EXPECT_EQ(fleet("SELECT count(*) FROM intervals"), "0");
  EXPECT_TRUE(eventually([&] { return fleet(processes()) == "3"; }, 30s)) << fleet(processes());
  EXPECT_EQ(fleet("SELECT n.name FROM node_clocks c JOIN names n ON n.id = c.node"), "node-s");
  EXPECT_EQ(a.metric("eacgm_fleet_store_up"), "1");
  EXPECT_FALSE(a.metric("eacgm_store_clock_offset_seconds").empty());

  ASSERT_EQ(cluster_.stop(), "");
  for (int i = 0; i < 3; ++i) run_program();
  EXPECT_TRUE(eventually([&] { return a.number("eacgm_fleet_store_failures_total") > 0; }, 90s))
      << get(a.port, "/metrics").body;
  EXPECT_EQ(a.metric("eacgm_fleet_store_up"), "0");
  ASSERT_EQ(cluster_.start_server(), "");
  EXPECT_TRUE(eventually([&] { return fleet(malloc_calls()) == "12"; }, 180s)) << fleet(malloc_calls());
  EXPECT_TRUE(eventually([&] { return fleet(processes()) == "6"; }, 30s)) << fleet(processes());
  EXPECT_EQ(fleet("SELECT count(*) FROM functions WHERE tier = 0"), "0");
  EXPECT_TRUE(eventually([&] { return a.metric("eacgm_fleet_store_up") == "1"; }, 30s));
  // The node's own store has every interval.
  EXPECT_NE(a.number("eacgm_store_rows_written_total"), 0);
  a.serve->signal(SIGTERM);
  EXPECT_EQ(a.serve->wait(), 0) << a.serve->err();
  const std::string err = a.serve->err();
  EXPECT_NE(err.find("shipping failed (retried)"), std::string::npos) << err;
  EXPECT_NE(err.find("shipping again"), std::string::npos) << err;
  EXPECT_EQ(err.find(PgCluster::kPassword), std::string::npos) << err;
}

// Two nodes, each keeping its own store and shipping to the fleet store: node a's agent,
// asked for node b's raw intervals (below a minute: none in the fleet store), finds b's
// agent in the fleet store's agents and answers with b's rows, marked as b's. With b
// stopped the answer is an error naming b, the URL tried and when it was last seen; with
// b started again, b's rows again.
TEST_F(HistoryPostgres, ANodesRawIntervalsAreAskedOfItsAgentFoundThroughTheFleetStore) {
  auto start_shipping = [&](Agent& a) {
    a.serve = std::make_unique<Subprocess>(
        std::vector<std::string>{bin("eacgm"), "serve", "--listen", "127.0.0.1:" + std::to_string(a.port),
                                 "--mode", "per-call", "--no-gpu", "--config", dir_ + "/eacgm.toml",
                                 "--store", "sqlite:" + dir_ + "/" + a.node + ".db", "--fleet-store",
                                 cluster_.url("fleet"), "--node", a.node},
        dir_);
    ASSERT_TRUE(a.serve->wait_for("tracing all processes", true)) << a.serve->err();
    const std::uint16_t port = a.port;
    ASSERT_TRUE(eventually([port] { return get(port, "/readyz").status == 200; })) << a.serve->err();
  };
  Agent a{"node-a", free_port(), nullptr};
  Agent b{"node-b", free_port(), nullptr};
  ASSERT_NO_FATAL_FAILURE(start_shipping(a));
  ASSERT_NO_FATAL_FAILURE(start_shipping(b));
  const std::string b_url = "http://127.0.0.1:" + std::to_string(b.port);
  Subprocess program({bin("cuda_calls")}, dir_);
  const std::string pid = std::to_string(program.pid());
  ASSERT_EQ(program.wait(), 7);
  const std::string path = "/api/v1/history/functions?since=10m&node=node-b&pid=" + pid;
  // b's own answer, then a's once b's agent is in the fleet store.
  ASSERT_TRUE(eventually([&] {
    return calls_of(json::parse(get(b.port, path).body, nullptr, false), "cudaMalloc") == 2;
  })) << get(b.port, path).body;
  json doc;
  ASSERT_TRUE(eventually([&] {
    doc = json::parse(get(a.port, path).body, nullptr, false);
    return calls_of(doc, "cudaMalloc") == 2;
  })) << doc.dump()
      << "\n"
      << a.serve->err();
  EXPECT_EQ(doc["source"], json({{"node", "node-b"}, {"agent", b_url}})) << doc.dump();
  EXPECT_EQ(cluster_.psql("fleet", "SELECT count(*) FROM functions WHERE tier = 0").second, "0");
  // a's own rows are its own.
  json own;
  EXPECT_TRUE(eventually([&] {
    own = json::parse(get(a.port, "/api/v1/history/functions?since=10m&node=node-a&pid=" + pid).body, nullptr,
                      false);
    return calls_of(own, "cudaMalloc") == 2;
  })) << own.dump();
  EXPECT_FALSE(own.contains("source"));

  b.serve->signal(SIGTERM);
  ASSERT_EQ(b.serve->wait(), 0) << b.serve->err();
  const auto down = get(a.port, path);
  EXPECT_EQ(down.status, 502) << down.body;
  const json err = json::parse(down.body, nullptr, false);
  EXPECT_EQ(err["node"], "node-b") << down.body;
  EXPECT_EQ(err["agent"], b_url) << down.body;
  EXPECT_NE(
      down.body.find("node node-b's agent at " + b_url + " did not answer: could not connect; last seen "),
      std::string::npos)
      << down.body;

  ASSERT_NO_FATAL_FAILURE(start_shipping(b));
  const auto back = get(a.port, path);
  ASSERT_EQ(back.status, 200) << back.body;
  const json again = json::parse(back.body);
  EXPECT_EQ(calls_of(again, "cudaMalloc"), 2u) << again.dump();
  EXPECT_EQ(again["source"]["node"], "node-b");

  // Once b's minutes are in the fleet store, its raw window there has its whole minutes
  // only: `eacgm history` over the fleet store says where the rest is; a still asks b.
  EXPECT_TRUE(eventually(
      [&] {
        return cluster_.psql("fleet", "SELECT count(*) FROM meta WHERE key = 'shipped_to:node-b'").second ==
               "1";
      },
      180s));
  Subprocess cli(
      {bin("eacgm"), "history", "--store", cluster_.url("fleet"), "--node", "node-b", "--since", "10m"},
      dir_);
  EXPECT_EQ(cli.wait(), 0) << cli.err();
  EXPECT_NE(
      cli.err().find("note: node node-b ships only its minutes and hours to this store; its rows below a "
                     "minute are on its agent at " +
                     b_url + " (up)"),
      std::string::npos)
      << cli.err();
  const json shipped = json::parse(get(a.port, path).body, nullptr, false);
  EXPECT_EQ(shipped["source"]["node"], "node-b") << shipped.dump();
  EXPECT_EQ(calls_of(shipped, "cudaMalloc"), 2u) << shipped.dump();
  for (Agent* x : {&a, &b}) {
    x->serve->signal(SIGTERM);
    EXPECT_EQ(x->serve->wait(), 0) << x->serve->err();
  }
}

TEST_F(HistoryPostgres, AStoreThatCannotOpenIsOneLineWithoutThePassword) {
  const std::string wrong =
      "postgresql://eacgm:Not-the-pw-808@127.0.0.1:" + std::to_string(cluster_.port()) + "/fleet";
  Subprocess serve({bin("eacgm"), "serve", "--no-gpu", "--listen", "127.0.0.1:" + std::to_string(free_port()),
                    "--store", wrong},
                   dir_);
  EXPECT_EQ(serve.wait(), 2);
  EXPECT_NE(serve.err().find("store postgresql://eacgm:***@127.0.0.1:"), std::string::npos) << serve.err();
  EXPECT_NE(serve.err().find("password authentication failed"), std::string::npos) << serve.err();
  EXPECT_EQ(serve.err().find("Not-the-pw-808"), std::string::npos) << serve.err();
  Subprocess history({bin("eacgm"), "history", "--store", wrong}, dir_);
  EXPECT_EQ(history.wait(), 1);
  EXPECT_EQ(history.err().find("Not-the-pw-808"), std::string::npos) << history.err();
  EXPECT_NE(history.err().find("password authentication failed"), std::string::npos) << history.err();
}

}  // namespace
}  // namespace eacgm::test
