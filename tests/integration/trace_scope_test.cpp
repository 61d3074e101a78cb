// [trace] cgroup: two `eacgm serve`s on one machine, each limited to its own cgroup v2
// subtree (a node of a job, a tenant), with a CUDA driver loop in each subtree and one
// outside both: each agent counts exactly its own loop's calls and lists no other
// process; a path that is no cgroup is refused at start with what to do. As two nodes of
// a job: NCCL stand-in ranks on both, one stopped before a collective, are named by the
// missing-rank rule's expression over both agents' progress series, in a real Prometheus,
// and, through a shared PostgreSQL store (a throwaway cluster), by each agent's own
// job-wide verdict and by `eacgm job`, each asking the other's agent for its ranks' stacks;
// `eacgm capture --job` and an agent's POST /api/v1/capture/job merge both nodes' captures
// of the job's ranks into one timeline, naming a node whose agent is down.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "../unit/history/pg_cluster.h"
#include "../unit/server/http_client.h"
#include "core/proc_file.h"
#include "history/job_ranks.h"
#include "history/store.h"
#include "sample/cgroup_scope.h"
#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using json = nlohmann::json;

class TraceScope : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes, cgroups)";
    auto mounts = read_small_file("/proc/self/mounts", 1 << 20);
    auto mount = mounts ? sample::cgroup2_mount(*mounts) : Result<std::string>(make_error("no mounts"));
    if (!mount) GTEST_SKIP() << "no cgroup v2 hierarchy on this machine: " << mount.error();
    mount_ = *mount;
    dir_ = temp_dir();
    for (const char* name : {"a", "b"}) {
      const std::string path = fmt::format("/eacgm-scope-{}-{}", getpid(), name);
      ASSERT_TRUE(std::filesystem::create_directory(mount_ + path) || std::filesystem::exists(mount_ + path));
      cgroups_.push_back(path);
    }
  }
  void TearDown() override {
    for (const auto& c : cgroups_) ::rmdir((mount_ + c).c_str());
  }
  // A driver loop of `iters` rounds, held until the go file exists, moved into `cgroup`
  // ("" none).
  std::unique_ptr<Subprocess> loop(int iters, const std::string& cgroup) {
    auto p = std::make_unique<Subprocess>(
        std::vector<std::string>{bin("driver_loop"), "--threads", "1", "--iters", std::to_string(iters),
                                 "--wait-file", dir_ + "/go"},
        dir_);
    EXPECT_TRUE(p->wait_for("ready", false)) << p->err();
    if (!cgroup.empty()) std::ofstream(mount_ + cgroup + "/cgroup.procs") << p->pid() << "\n";
    return p;
  }
  std::unique_ptr<Subprocess> serve(std::uint16_t port, const std::string& cgroup, const std::string& name,
                                    const std::string& probes = "cuda_driver",
                                    const std::string& config = "") {
    const std::string cfg = dir_ + "/" + name + ".toml";
    std::ofstream(cfg) << "[trace]\ncgroup = \"" << cgroup << "\"\n" << config;
    return std::make_unique<Subprocess>(
        std::vector<std::string>{bin("eacgm"), "serve", "--listen", "127.0.0.1:" + std::to_string(port),
                                 "--no-gpu", "--probes", probes, "--config", cfg, "--store",
                                 "sqlite:" + dir_ + "/" + name + ".db"},
        dir_);
  }
  // An agent as node `name` writing into the store `url` (and shipping to `fleet_url`,
  // given), with `more` flags.
  std::unique_ptr<Subprocess> serve_node(std::uint16_t port, const std::string& cgroup,
                                         const std::string& name, const std::string& url,
                                         const std::string& config, const std::string& fleet_url = "",
                                         const std::vector<std::string>& more = {}) {
    const std::string cfg = dir_ + "/" + name + ".toml";
    std::ofstream(cfg) << "[trace]\ncgroup = \"" << cgroup << "\"\n" << config;
    std::vector<std::string> argv{bin("eacgm"), "serve",    "--listen", "127.0.0.1:" + std::to_string(port),
                                  "--no-gpu",   "--probes", "nccl",     "--config",
                                  cfg,          "--store",  url,        "--node",
                                  name};
    if (!fleet_url.empty()) argv.insert(argv.end(), {"--fleet-store", fleet_url});
    argv.insert(argv.end(), more.begin(), more.end());
    return std::make_unique<Subprocess>(argv, dir_);
  }
  // Waits until each agent traces its cgroup and has attached to `library`.
  static void wait_attached(std::initializer_list<const Subprocess*> agents, const std::string& library) {
    for (const Subprocess* s : agents) {
      ASSERT_TRUE(s->wait_for("tracing all processes in cgroup /eacgm-scope-", true)) << s->err();
      ASSERT_TRUE(s->wait_for(library, true)) << s->err();
    }
  }
  // The job of an agent's /api/v1/inflight (its status and body when it did not answer).
  static json job_of(std::uint16_t port) {
    const auto answer = server::testing::get(port, "/api/v1/inflight");
    const json doc = json::parse(answer.body, nullptr, false);
    if (answer.status != 200 || !doc.is_object())
      return json{{"status", answer.status}, {"body", answer.body}};
    return doc["job"];
  }
  // Whether a job's verdict names rank 3 on node-b missing from all-reduce #6, three ranks in it.
  static bool names_rank_3(const json& job) {
    if (!job.contains("communicators")) return false;
    for (const json& c : job["communicators"]) {
      if (!c["hang"].get<bool>() || c["missing"].size() != 1) continue;
      const json& m = c["missing"][0];
      if (m["rank"] == 3 && m["node"] == "node-b" && c["instance"] == 6 && c["in"].size() == 3) return true;
    }
    return false;
  }
  // Starts the stand-in ranks: the go file appears whole, renamed into place, so that
  // every rank reads the same modification time for the schedule it keeps (a rank that
  // saw the file created, before its write, started up to a loaded machine's delay early).
  void go() {
    std::ofstream(dir_ + "/go.tmp") << "go";
    std::filesystem::rename(dir_ + "/go.tmp", dir_ + "/go");
  }
  // Four stand-in ranks of one communicator, 0 and 1 in cgroup a, 2 and 3 in b, each
  // making `count` all-reduces; rank 3 stops before collective #6 until the release file
  // exists (`stop`), and calls `late_ms` after the others each time.
  std::vector<std::unique_ptr<Subprocess>> nccl_ranks(int count = 10, bool stop = true, int late_ms = 0) {
    const std::string lib = EACGM_TEST_BIN_DIR "/fake_libnccl/libnccl.so.2";
    ::setenv("EACGM_FAKE_NCCL_DIR", dir_.c_str(), 1);
    const std::string id0 = fmt::format("{:x}", 0xeac90000ull + static_cast<unsigned>(getpid())),
                      id1 = "5eed";
    std::vector<std::unique_ptr<Subprocess>> ranks;
    for (int r = 0; r < 4; ++r) {
      std::vector<std::string> argv{bin("nccl_ranks"),     lib,          std::to_string(r), "4", id0, id1,
                                    std::to_string(count), dir_ + "/go", dir_ + "/done"};
      if (r == 3 && stop) argv.insert(argv.end(), {"--stop-before", "6", dir_ + "/release"});
      if (r == 3 && late_ms > 0) argv.insert(argv.end(), {"--late", std::to_string(late_ms)});
      ranks.push_back(std::make_unique<Subprocess>(argv, dir_));
      EXPECT_TRUE(ranks.back()->wait_for("ready")) << ranks.back()->err();
      std::ofstream(mount_ + cgroups_[r < 2 ? 0 : 1] + "/cgroup.procs") << ranks.back()->pid() << "\n";
    }
    return ranks;
  }
  static std::string metric(std::uint16_t port, const std::string& series) {
    const std::string body = server::testing::get(port, "/metrics").body;
    auto at = body.find("\n" + series + " ");
    if (at == std::string::npos) return "";
    auto start = at + series.size() + 2;
    return body.substr(start, body.find('\n', start) - start);
  }
  std::string mount_, dir_;
  std::vector<std::string> cgroups_;
};

TEST_F(TraceScope, EachAgentCountsOnlyTheProcessesOfItsCgroup) {
  auto in_a = loop(3000, cgroups_[0]);
  auto in_b = loop(5000, cgroups_[1]);
  auto outside = loop(7000, "");
  const std::uint16_t port_a = free_port(), port_b = free_port();
  auto serve_a = serve(port_a, cgroups_[0], "a");
  auto serve_b = serve(port_b, cgroups_[1], "b");
  ASSERT_NO_FATAL_FAILURE(wait_attached({serve_a.get(), serve_b.get()}, "libcuda.so"));
  go();
  for (auto* l : {in_a.get(), in_b.get(), outside.get()}) ASSERT_EQ(l->wait(), 0) << l->err();
  const std::string launches = "eacgm_calls_total{domain=\"cuda_driver\",function=\"cuLaunchKernel\"}";
  EXPECT_TRUE(eventually([&] { return metric(port_a, launches) == "3000"; })) << metric(port_a, launches);
  EXPECT_TRUE(eventually([&] { return metric(port_b, launches) == "5000"; })) << metric(port_b, launches);
  auto pids = [](std::uint16_t port) {
    std::set<int> out;
    const json doc = json::parse(server::testing::get(port, "/api/v1/processes").body);
    for (const auto& p : doc["processes"]) out.insert(p["pid"].get<int>());
    return out;
  };
  EXPECT_EQ(pids(port_a), std::set<int>{in_a->pid()});
  EXPECT_EQ(pids(port_b), std::set<int>{in_b->pid()});
}

TEST_F(TraceScope, ACgroupThatIsNotThereIsRefusedAtStart) {
  auto s = serve(free_port(), "/eacgm-no-such-cgroup", "missing");
  EXPECT_EQ(s->wait(), 2) << s->err();
  EXPECT_NE(s->err().find("[trace] cgroup \"/eacgm-no-such-cgroup\": cannot open " + mount_ +
                          "/eacgm-no-such-cgroup"),
            std::string::npos)
      << s->err();
}

// The expression of `alert` in the shipped rules (the indented block after its `expr: |`).
std::string rule_expression(const std::string& alert) {
  std::ifstream in(EACGM_SOURCE_DIR "/deploy/prometheus/rules/eacgm.rules.yml");
  std::string line, expr;
  bool found = false, inside = false;
  while (std::getline(in, line)) {
    if (!found) {
      found = line.find("- alert: " + alert) != std::string::npos;
    } else if (!inside) {
      inside = line.find("expr: |") != std::string::npos;
    } else if (line.starts_with("          ") || line.empty()) {
      expr += line + "\n";
    } else {
      break;
    }
  }
  return expr;
}

// A progress family's values on one agent's /metrics, by rank.
std::map<int, double> by_rank(std::uint16_t port, const std::string& family) {
  const std::string body = server::testing::get(port, "/metrics").body;
  const std::regex line(family + R"re(\{comm_id="[^"]+",nccl_rank="(\d+)",nranks="4",pid="\d+"\} (\S+))re");
  std::map<int, double> out;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), line); it != std::sregex_iterator(); ++it) {
    out[std::stoi((*it)[1])] = std::stod((*it)[2]);
  }
  return out;
}

// Nodes a and b, each an agent scoped to its cgroup; a communicator of four stand-in ranks
// (the FAKE libnccl), ranks 0 and 1 on a, 2 and 3 on b. Rank 3 stops before all-reduce #6
// while the others enter it and wait inside the call: a's agent sees only waiting ranks,
// b's one waiting and one behind, and the missing-rank rule over both scrapes (its 60 s
// cut to 1 s) names rank 3 on b and collective #6; once rank 3 enters it every rank goes
// on, the rule names nobody, and the series go with the processes. Sharing a PostgreSQL
// store instead, each agent's own verdict names rank 3 and node b.
TEST_F(TraceScope, TwoAgentsProgressSeriesLetTheRuleNameTheRankAnotherNodeWaitsFor) {
  if (!std::filesystem::exists("/usr/bin/prometheus"))
    GTEST_SKIP() << "Debian's prometheus package is needed";
  auto ranks = nccl_ranks();
  ASSERT_FALSE(HasFailure()) << "a stand-in rank did not start";
  const std::uint16_t port_a = free_port(), port_b = free_port();
  auto serve_a = serve(port_a, cgroups_[0], "a", "nccl", "[hangs]\nmin_age_s = 1\n");
  auto serve_b = serve(port_b, cgroups_[1], "b", "nccl", "[hangs]\nmin_age_s = 1\n");
  ASSERT_NO_FATAL_FAILURE(wait_attached({serve_a.get(), serve_b.get()}, "libnccl.so"));
  PrometheusServer prometheus(dir_, std::vector<std::uint16_t>{port_a, port_b});
  go();
  ASSERT_TRUE(ranks[3]->wait_for("stopped 6")) << ranks[3]->err();

  // Each agent's own ranks: inside #6 and waiting, or (rank 3) behind at #5.
  const auto waiting_at_6 = [](const std::map<int, double>& entered, const std::map<int, double>& waiting,
                               std::initializer_list<int> which) {
    for (int r : which) {
      if (!entered.contains(r) || entered.at(r) != 6 || !waiting.contains(r) || waiting.at(r) < 1)
        return false;
    }
    return true;
  };
  EXPECT_TRUE(eventually([&] {
    return waiting_at_6(by_rank(port_a, "eacgm_nccl_rank_collective_entered"),
                        by_rank(port_a, "eacgm_nccl_rank_waiting_seconds"), {0, 1});
  })) << server::testing::get(port_a, "/metrics").body;
  EXPECT_TRUE(eventually([&] {
    const auto entered = by_rank(port_b, "eacgm_nccl_rank_collective_entered");
    return waiting_at_6(entered, by_rank(port_b, "eacgm_nccl_rank_waiting_seconds"), {2}) &&
           entered.contains(3) && entered.at(3) == 5;
  })) << server::testing::get(port_b, "/metrics").body;
  EXPECT_EQ(by_rank(port_b, "eacgm_nccl_rank_collective_finished")[3], 5);
  EXPECT_EQ(by_rank(port_b, "eacgm_nccl_rank_waiting_seconds")[3], 0);
  EXPECT_EQ(by_rank(port_a, "eacgm_nccl_rank_collective_finished")[0], 5);

  // The rule over both scrapes names rank 3, its node and the collective it never entered.
  std::string expr = rule_expression("EacgmNcclRankMissing");
  ASSERT_NE(expr.find(">= 60"), std::string::npos) << expr;
  expr.replace(expr.find(">= 60"), 5, ">= 1");
  json named;
  EXPECT_TRUE(eventually([&] {
    named = prometheus.query(expr);
    return named["data"]["result"].size() == 1;
  })) << named.dump()
      << prometheus.log().substr(0, 2000);
  if (named["data"]["result"].size() == 1) {
    const json& r = named["data"]["result"][0];
    EXPECT_EQ(r["metric"]["nccl_rank"], "3");
    EXPECT_EQ(r["metric"]["instance"], "127.0.0.1:" + std::to_string(port_b));
    EXPECT_EQ(r["metric"]["pid"], std::to_string(ranks[3]->pid()));
    EXPECT_EQ(r["value"][1], "6") << "the collective it never entered";
  }

  // Rank 3 enters #6: every rank goes on to #10, nobody waits, the rule names nobody.
  std::ofstream(dir_ + "/release") << "go";
  for (auto& r : ranks) ASSERT_TRUE(r->wait_for("finished")) << r->err();
  EXPECT_TRUE(eventually([&] {
    const auto a = by_rank(port_a, "eacgm_nccl_rank_collective_entered");
    const auto b = by_rank(port_b, "eacgm_nccl_rank_collective_entered");
    const auto wb = by_rank(port_b, "eacgm_nccl_rank_waiting_seconds");
    return a.size() == 2 && a.at(0) == 10 && a.at(1) == 10 && b.size() == 2 && b.at(2) == 10 &&
           b.at(3) == 10 && wb.at(2) == 0;
  })) << server::testing::get(port_b, "/metrics").body;
  EXPECT_TRUE(eventually([&] { return prometheus.query(expr)["data"]["result"].empty(); }));

  // The processes exit: their series go.
  std::ofstream(dir_ + "/done") << "go";
  for (auto& r : ranks) EXPECT_EQ(r->wait(), 0) << r->err();
  EXPECT_TRUE(eventually([&] { return by_rank(port_a, "eacgm_nccl_rank_collective_entered").empty(); }));
}

// The job-wide verdict through the shared store: agents a and b (each scoped to its node's
// cgroup) write their ranks' standings into one PostgreSQL database and read each
// other's. Rank 3 (node b) stops before all-reduce #6: within 10 s of min_age_s, both
// agents' /api/v1/inflight name rank 3 on node b as the rank that never entered it, with
// ranks 0-2 on nodes a and b waiting, and so does `eacgm job` over the store; once rank 3
// enters it both agents list the hang as over.
TEST_F(TraceScope, TwoAgentsSharingAStoreEachNameTheRankAndNodeTheJobWaitsFor) {
  history::test::PgCluster cluster;
  ASSERT_EQ(cluster.start(), "");
  ASSERT_EQ(cluster.create_database("job"), "");
  const std::string url = cluster.url("job");
  auto ranks = nccl_ranks();
  const std::uint16_t port_a = free_port(), port_b = free_port();
  auto serve_a = serve_node(port_a, cgroups_[0], "node-a", url, "[hangs]\nmin_age_s = 1\n");
  auto serve_b = serve_node(port_b, cgroups_[1], "node-b", url, "[hangs]\nmin_age_s = 1\n");
  ASSERT_NO_FATAL_FAILURE(wait_attached({serve_a.get(), serve_b.get()}, "libnccl.so"));
  go();
  ASSERT_TRUE(ranks[3]->wait_for("stopped 6")) << ranks[3]->err();
  const auto stopped = std::chrono::steady_clock::now();

  // Each agent's verdict: the communicator with a hang whose missing rank is 3 on node-b.
  json job_a, job_b;
  const bool named = eventually(
      [&] {
        job_a = job_of(port_a);
        job_b = job_of(port_b);
        return names_rank_3(job_a) && names_rank_3(job_b);
      },
      std::chrono::seconds(30));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  ASSERT_TRUE(named) << job_a.dump() << "\n" << job_b.dump() << "\n" << serve_a->err() << serve_b->err();
  RecordProperty("verdict_after_ms", static_cast<int>(took * 1000));
  EXPECT_LE(took, 1 + 10) << "the verdict came " << took << " s after rank 3 stopped (min_age_s 1)";
  for (const json* job : {&job_a, &job_b}) {
    const json& c = (*job)["communicators"][0];
    EXPECT_EQ((*job)["store"], true);
    EXPECT_EQ(c["name"], "ncclAllReduce");
    EXPECT_EQ(c["missing"][0]["pid"], ranks[3]->pid());
    EXPECT_EQ(c["nodes"], json::array({"node-a", "node-b"}));
    EXPECT_NE(c["verdict"].get<std::string>().find("rank 3 on node node-b never entered ncclAllReduce #6; "
                                                   "ranks 0-2 on nodes node-a,node-b waiting for"),
              std::string::npos)
        << c["verdict"];
  }
  EXPECT_EQ(job_a["node"], "node-a");
  EXPECT_EQ(job_a["other_ranks"], 2) << "node a merged b's two ranks";
  EXPECT_EQ(job_b["other_ranks"], 2);

  // ?stacks=1: node a asks node b's agent (found in the store's agents) for b's ranks'
  // stacks, one request; the stand-in ranks are no Python processes, so b answers with
  // none, and each of b's ranks says so in b's words.
  const auto with_stacks = server::testing::get(port_a, "/api/v1/inflight?stacks=1");
  ASSERT_EQ(with_stacks.status, 200) << with_stacks.body;
  const json stacked = json::parse(with_stacks.body)["job"];
  ASSERT_EQ(stacked["stacks"].size(), 1u) << stacked.dump();
  EXPECT_EQ(stacked["stacks"][0]["node"], "node-b");
  EXPECT_EQ(stacked["stacks"][0]["agent"], fmt::format("http://127.0.0.1:{}", port_b)) << stacked.dump();
  EXPECT_TRUE(stacked["stacks"][0]["error"].is_null()) << stacked.dump();
  EXPECT_EQ(stacked["stacks"][0]["pids"].size(), 2u) << "b's two ranks in one request";
  const json& missing = stacked["communicators"][0]["missing"][0];
  EXPECT_TRUE(missing["python_stack"].is_null());
  EXPECT_NE(missing["stack_error"].get<std::string>().find(
                fmt::format("node node-b has no Python stack of pid {}", ranks[3]->pid())),
            std::string::npos)
      << missing.dump();

  // `eacgm job` over the store says the same.
  Subprocess cli({bin("eacgm"), "job", "--store", url, "--min-age", "1", "--json"}, dir_);
  ASSERT_EQ(cli.wait(), 0) << cli.err();
  const json doc = json::parse(cli.out());
  ASSERT_EQ(doc["communicators"].size(), 1u) << doc.dump();
  EXPECT_EQ(doc["communicators"][0]["ranks"].size(), 4u);
  const json& verdict = doc["communicators"][0]["verdict"];
  ASSERT_TRUE(verdict.is_object()) << doc.dump();
  EXPECT_EQ(verdict["missing"][0]["rank"], 3);
  EXPECT_EQ(verdict["missing"][0]["node"], "node-b");
  Subprocess text({bin("eacgm"), "job", "--store", url, "--min-age", "1"}, dir_);
  ASSERT_EQ(text.wait(), 0) << text.err();
  EXPECT_NE(text.out().find("HANG: rank 3 on node node-b never entered ncclAllReduce #6"), std::string::npos)
      << text.out();
  // --stacks: both agents asked, each for its node's ranks.
  Subprocess stacks({bin("eacgm"), "job", "--store", url, "--min-age", "1", "--stacks", "--json"}, dir_);
  ASSERT_EQ(stacks.wait(), 0) << stacks.err();
  const json stacked_doc = json::parse(stacks.out());
  const json& asked = stacked_doc["stacks"];
  ASSERT_EQ(asked.size(), 2u) << stacked_doc.dump();
  for (const json& n : asked) EXPECT_TRUE(n["error"].is_null()) << asked.dump();
  const json& rank3 = stacked_doc["communicators"][0]["verdict"]["missing"][0];
  EXPECT_NE(rank3.value("stack_error", std::string()).find("node node-b has no Python stack of pid"),
            std::string::npos)
      << stacked_doc.dump();

  // Rank 3 enters #6: both agents find the hang over, rank 3 still named in it.
  std::ofstream(dir_ + "/release") << "go";
  for (auto& r : ranks) ASSERT_TRUE(r->wait_for("finished")) << r->err();
  const auto over = [](const json& job) {
    return job.contains("ended") && job["communicators"].empty() && job["ended"].size() == 1 &&
           !job["ended"][0]["end_ns"].is_null() && job["ended"][0]["missing"][0]["rank"] == 3 &&
           job["hang_total"] == 1;
  };
  EXPECT_TRUE(eventually([&] {
    job_a = job_of(port_a);
    job_b = job_of(port_b);
    return over(job_a) && over(job_b);
  })) << job_a.dump()
      << "\n"
      << job_b.dump();
  std::ofstream(dir_ + "/done") << "go";
  for (auto& r : ranks) EXPECT_EQ(r->wait(), 0) << r->err();
}

// The same job with two stores: each agent keeps its own SQLite store and ships to one
// PostgreSQL fleet store ([store] fleet_url). Their fleet links write and read the
// standings there (none in the nodes' files), so each agent's verdict names rank 3 on
// node b; both agents are in the fleet store's agents list, up, at their advertised URLs
// (a's given by --advertise-url, b's from its listen address), on each agent's
// /api/v1/history/agents and through `eacgm history nodes`.
TEST_F(TraceScope, TwoAgentsWithAFleetStoreEachNameTheRankAndNodeTheJobWaitsForAndListEachOther) {
  history::test::PgCluster cluster;
  ASSERT_EQ(cluster.start(), "");
  ASSERT_EQ(cluster.create_database("fleet"), "");
  const std::string fleet = cluster.url("fleet");
  auto ranks = nccl_ranks();
  const std::uint16_t port_a = free_port(), port_b = free_port();
  const std::string url_a = fmt::format("http://node-a.example:{}", port_a);
  auto serve_a = serve_node(port_a, cgroups_[0], "node-a", "sqlite:" + dir_ + "/node-a.db",
                            "[hangs]\nmin_age_s = 1\n", fleet, {"--advertise-url", url_a});
  auto serve_b = serve_node(port_b, cgroups_[1], "node-b", "sqlite:" + dir_ + "/node-b.db",
                            "[hangs]\nmin_age_s = 1\n", fleet);
  ASSERT_NO_FATAL_FAILURE(wait_attached({serve_a.get(), serve_b.get()}, "libnccl.so"));
  go();
  ASSERT_TRUE(ranks[3]->wait_for("stopped 6")) << ranks[3]->err();
  const auto stopped = std::chrono::steady_clock::now();

  json job_a, job_b;
  const bool named = eventually(
      [&] {
        job_a = job_of(port_a);
        job_b = job_of(port_b);
        return names_rank_3(job_a) && names_rank_3(job_b);
      },
      std::chrono::seconds(30));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  ASSERT_TRUE(named) << job_a.dump() << "\n" << job_b.dump() << "\n" << serve_a->err() << serve_b->err();
  RecordProperty("verdict_after_ms", static_cast<int>(took * 1000));
  EXPECT_LE(took, 1 + 10) << "the verdict came " << took << " s after rank 3 stopped (min_age_s 1)";
  for (const json* job : {&job_a, &job_b}) {
    const json& c = (*job)["communicators"][0];
    EXPECT_EQ((*job)["store"], true);
    EXPECT_EQ(c["nodes"], json::array({"node-a", "node-b"}));
  }
  EXPECT_EQ(job_a["other_ranks"], 2) << "node a merged b's two ranks";
  EXPECT_EQ(job_b["other_ranks"], 2);
  // The standings are in the fleet store, not in the nodes' own files.
  for (const char* node : {"node-a", "node-b"}) {
    auto local = history::open_store(fmt::format("sqlite:{}/{}.db", dir_, node), history::StoreAccess::kRead);
    ASSERT_TRUE(local) << local.error();
    auto rows = (*local)->standings({}, 0, 100);
    ASSERT_TRUE(rows) << rows.error();
    EXPECT_TRUE(rows->empty()) << node;
  }
  // `eacgm job` over the node's config (fleet_url) reads the fleet store.
  std::ofstream(dir_ + "/job.toml") << "[store]\nurl = \"sqlite:" << dir_ << "/node-a.db\"\nfleet_url = \""
                                    << fleet << "\"\n";
  Subprocess cli({bin("eacgm"), "job", "--config", dir_ + "/job.toml", "--min-age", "1", "--json"}, dir_);
  ASSERT_EQ(cli.wait(), 0) << cli.err();
  const json doc = json::parse(cli.out());
  ASSERT_EQ(doc["communicators"].size(), 1u) << doc.dump();
  EXPECT_EQ(doc["communicators"][0]["ranks"].size(), 4u);

  // Both agents are listed up, each at its URL, by either agent and by the CLI.
  const auto agents_ok = [&](const json& list) {
    if (!list.contains("agents") || list["agents"].size() != 2) return false;
    const json& a = list["agents"][0];
    const json& b = list["agents"][1];
    return a["node"] == "node-a" && a["url"] == url_a && a["up"] == true && a["down_since_ns"].is_null() &&
           b["node"] == "node-b" && b["url"] == fmt::format("http://127.0.0.1:{}", port_b) &&
           b["up"] == true && !a["version"].get<std::string>().empty();
  };
  for (std::uint16_t port : {port_a, port_b}) {
    const auto answer = server::testing::get(port, "/api/v1/history/agents");
    ASSERT_EQ(answer.status, 200) << answer.body;
    const json list = json::parse(answer.body);
    EXPECT_TRUE(agents_ok(list)) << list.dump();
    EXPECT_EQ(list["store"].get<std::string>().rfind("postgresql://", 0), 0u) << list.dump();
  }
  Subprocess nodes({bin("eacgm"), "history", "nodes", "--config", dir_ + "/job.toml", "--json"}, dir_);
  ASSERT_EQ(nodes.wait(), 0) << nodes.err();
  EXPECT_TRUE(agents_ok(json::parse(nodes.out()))) << nodes.out();
  Subprocess text({bin("eacgm"), "history", "nodes", "--store", fleet}, dir_);
  ASSERT_EQ(text.wait(), 0) << text.err();
  EXPECT_NE(text.out().find(url_a), std::string::npos) << text.out();
  EXPECT_EQ(std::regex_search(text.out(), std::regex("node-b +http://127\\.0\\.0\\.1:[0-9]+ +\\S+ +up\n")),
            true)
      << text.out();
  EXPECT_EQ(metric(port_a, "eacgm_fleet_link_up"), "1");
  EXPECT_NE(metric(port_a, "eacgm_fleet_link_standings_reads_total"), "0");

  std::ofstream(dir_ + "/release") << "go";
  std::ofstream(dir_ + "/done") << "go";
  for (auto& r : ranks) EXPECT_EQ(r->wait(), 0) << r->err();
}

// Rank 3 (node b) calls each all-reduce 6 ms after ranks 0-2 (nodes a and b): both agents,
// joining the ranks' kept starts through the shared store on its clock, name rank 3 on
// node-b as the straggler, with the clocks' bound under its lateness; `eacgm job` says
// the same.
TEST_F(TraceScope, TwoAgentsSharingAStoreNameTheRankThatArrivesLastOnAnotherNode) {
  history::test::PgCluster cluster;
  ASSERT_EQ(cluster.start(), "");
  ASSERT_EQ(cluster.create_database("job"), "");
  const std::string url = cluster.url("job");
  auto ranks = nccl_ranks(200, false, 6);
  const std::uint16_t port_a = free_port(), port_b = free_port();
  auto serve_a = serve_node(port_a, cgroups_[0], "node-a", url, "");
  auto serve_b = serve_node(port_b, cgroups_[1], "node-b", url, "");
  ASSERT_NO_FATAL_FAILURE(wait_attached({serve_a.get(), serve_b.get()}, "libnccl.so"));
  go();
  for (auto& r : ranks) ASSERT_TRUE(r->wait_for("finished")) << r->err();

  const auto stragglers_of = [](std::uint16_t port) {
    const auto answer = server::testing::get(port, "/api/v1/nccl");
    const json doc = json::parse(answer.body, nullptr, false);
    if (answer.status != 200 || !doc.is_object() || !doc.contains("job_stragglers"))
      return json{{"status", answer.status}, {"body", answer.body}};
    return doc["job_stragglers"];
  };
  const auto names_rank_3 = [](const json& s) {
    return s.is_array() && s.size() == 1 && s[0]["straggler"] == 3 && s[0]["straggler_node"] == "node-b";
  };
  json a, b;
  ASSERT_TRUE(eventually(
      [&] {
        a = stragglers_of(port_a);
        b = stragglers_of(port_b);
        return names_rank_3(a) && names_rank_3(b);
      },
      std::chrono::seconds(30)))
      << a.dump() << "\n"
      << b.dump() << "\n"
      << serve_a->err() << serve_b->err();
  for (const json* s : {&a, &b}) {
    const json& c = (*s)[0];
    EXPECT_EQ(c["nodes"], json::array({"node-a", "node-b"}));
    EXPECT_GE(c["instances"].get<int>(), 4);
    ASSERT_EQ(c["ranks"].size(), 4u);
    const json& r3 = c["ranks"][3];
    EXPECT_EQ(r3["rank"], 3);
    EXPECT_EQ(r3["last"], c["instances"]);
    // 6 ms planned. On a loaded machine the other ranks' wake-ups are late too (a run
    // measured rank 3 at 1.24 ms against 0.45 ms for the next), so its lateness is judged
    // against theirs and the clocks' bound, not against the plan.
    const double late = r3["mean_lateness_ns"].get<double>();
    EXPECT_LT(late, 12e6) << c.dump();
    ASSERT_TRUE(r3["uncertainty_ns"].is_number()) << c.dump();
    EXPECT_LT(r3["uncertainty_ns"].get<double>(), late);
    for (int r = 0; r < 3; ++r) {
      EXPECT_LT(c["ranks"][r]["mean_lateness_ns"].get<double>(), late) << c.dump();
      EXPECT_LT(c["ranks"][r]["mean_lateness_ns"].get<double>(), 3e6) << c.dump();
    }
    EXPECT_NE(c["verdict"].get<std::string>().find("straggler: rank 3 on node node-b arrives last at"),
              std::string::npos)
        << c["verdict"];
  }

  Subprocess text({bin("eacgm"), "job", "--store", url}, dir_);
  ASSERT_EQ(text.wait(), 0) << text.err();
  EXPECT_NE(text.out().find("arrivals across nodes: straggler: rank 3 on node node-b"), std::string::npos)
      << text.out();
  std::ofstream(dir_ + "/done") << "go";
  for (auto& r : ranks) EXPECT_EQ(r->wait(), 0) << r->err();
}

// `eacgm capture --job`: the job's four stand-in ranks (SLURM_JOB_ID set), two on each
// node, their agents sharing a PostgreSQL store and asking for a token. Once the store
// holds the job's ranks and both agents, one command captures the same 2 s on both nodes
// and writes one trace with a process per rank, named by node and rank, whose all-reduces
// (called on one schedule by every rank) start together on the store's clock. With node
// b's agent killed, the capture names b's ranks as not captured, on stderr and in the
// trace, and still writes a's; with both killed it fails, saying no agent answered.
TEST_F(TraceScope, CaptureJobMergesEveryRanksProcessIntoOneTraceAndNamesANodeThatDoesNotAnswer) {
  history::test::PgCluster cluster;
  ASSERT_EQ(cluster.start(), "");
  ASSERT_EQ(cluster.create_database("job"), "");
  const std::string url = cluster.url("job");
  const std::string job = fmt::format("capture-{}", getpid());
  ::setenv("SLURM_JOB_ID", job.c_str(), 1);
  auto ranks = nccl_ranks(3000, false);
  ::unsetenv("SLURM_JOB_ID");
  ASSERT_FALSE(HasFailure()) << "a stand-in rank did not start";
  const std::string token_file = dir_ + "/token";
  { std::ofstream(token_file) << "s3cret\n"; }
  ASSERT_EQ(::chmod(token_file.c_str(), 0600), 0);
  const std::uint16_t port_a = free_port(), port_b = free_port();
  const std::string config = "[store]\ninterval_s = 1\n";
  auto serve_a = serve_node(port_a, cgroups_[0], "node-a", url, config, "", {"--token-file", token_file});
  auto serve_b = serve_node(port_b, cgroups_[1], "node-b", url, config, "", {"--token-file", token_file});
  ASSERT_NO_FATAL_FAILURE(wait_attached({serve_a.get(), serve_b.get()}, "libnccl.so"));
  go();

  // The store holds the four ranks on two nodes and both agents.
  std::string seen;
  const bool placed = eventually(
      [&] {
        auto store = history::open_store(url, history::StoreAccess::kRead);
        if (!store) {
          seen = store.error();
          return false;
        }
        const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
        auto places = history::read_job_places(**store, job, now, 600'000'000'000, 60'000'000'000);
        if (!places) {
          seen = places.error();
          return false;
        }
        seen.clear();
        std::size_t n = 0;
        for (const auto& node : places->nodes) {
          seen += fmt::format("{} at '{}': {} ranks;", node.node, node.agent_url, node.ranks.size());
          for (const auto& r : node.ranks) n += r.rank >= 0 && !node.agent_url.empty() ? 1 : 0;
        }
        return places->nodes.size() == 2 && n == 4;
      },
      std::chrono::seconds(30));
  ASSERT_TRUE(placed) << seen << "\n" << serve_a->err() << serve_b->err();

  const std::string out = dir_ + "/job.json";
  const std::vector<std::string> capture{bin("eacgm"), "capture", "--job", job, "--store",      url,
                                         "--seconds",  "2",       "-o",    out, "--token-file", token_file};
  Subprocess both(capture, dir_);
  ASSERT_EQ(both.wait(), 0) << both.err();
  EXPECT_NE(both.err().find("captured 4 of 4 ranks of job " + job + " on 2 nodes"), std::string::npos)
      << both.err();
  const auto read_trace = [&] {
    std::ifstream in(out);
    return json::parse(std::string(std::istreambuf_iterator<char>(in), {}), nullptr, false);
  };
  json doc = read_trace();
  ASSERT_TRUE(doc.is_object() && doc.contains("traceEvents")) << "not a trace";
  std::map<std::uint64_t, std::string> names;  // merged pid → name
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name")
      names[e["pid"].get<std::uint64_t>()] = e["args"]["name"].get<std::string>();
  }
  // A process per rank, named by its node, rank and pid.
  std::map<int, std::uint64_t> rank_pid;
  for (int r = 0; r < 4; ++r) {
    const std::string name =
        fmt::format("{}/rank {}: nccl_ranks (pid {})", r < 2 ? "node-a" : "node-b", r, ranks[r]->pid());
    for (const auto& [pid, n] : names) {
      if (n == name) rank_pid[r] = pid;
    }
    EXPECT_TRUE(rank_pid.contains(r)) << name << " in " << json(names).dump();
  }
  ASSERT_EQ(rank_pid.size(), 4u);
  // Each rank's all-reduces, on the store's clock: for each of rank 0's that the others'
  // windows also hold, the farthest of the other ranks' nearest calls. The ranks call on
  // one schedule every 20 ms, so clocks put right leave that within a few ms (a rank
  // woken late on a loaded machine, more now and then); clocks 10 ms apart would not.
  std::map<std::uint64_t, std::vector<double>> calls;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "ncclAllReduce")
      calls[e["pid"].get<std::uint64_t>()].push_back(e["ts"].get<double>());
  }
  for (int r = 0; r < 4; ++r) EXPECT_GE(calls[rank_pid[r]].size(), 50u) << "rank " << r << ": 2 s at 20 ms";
  std::vector<double> apart_us;
  for (double t : calls[rank_pid[0]]) {
    double farthest = 0;
    bool inside = true;
    for (int r = 1; r < 4; ++r) {
      const auto& other = calls[rank_pid[r]];
      if (other.empty() || t < other.front() + 10000 || t > other.back() - 10000) inside = false;
      double nearest = 1e12;
      for (double u : other) nearest = std::min(nearest, std::abs(u - t));
      farthest = std::max(farthest, nearest);
    }
    if (inside) apart_us.push_back(farthest);
  }
  ASSERT_GE(apart_us.size(), 40u) << "rank 0's all-reduces inside every rank's window";
  std::sort(apart_us.begin(), apart_us.end());
  const double median = apart_us[apart_us.size() / 2];
  const auto close = static_cast<std::size_t>(
      std::count_if(apart_us.begin(), apart_us.end(), [](double d) { return d < 5000; }));
  RecordProperty("allreduce_apart_median_us", static_cast<int>(median));
  EXPECT_LT(median, 2000) << "µs between one collective's calls across ranks";
  EXPECT_GE(close * 10, apart_us.size() * 9)
      << close << " of " << apart_us.size() << " within 5 ms; farthest " << apart_us.back() << " µs";
  EXPECT_EQ(doc["eacgm_job_capture"]["job"], job);
  EXPECT_EQ(doc["eacgm_job_capture"]["parts"].size(), 4u);
  EXPECT_TRUE(doc["eacgm_job_capture"]["missing"].empty()) << doc["eacgm_job_capture"].dump();

  // The same from the web UI's job page: POST /api/v1/capture/job to node a's agent, which
  // asks both nodes and answers the merged trace with each node's outcome.
  const auto ask_a = [&] {
    const std::string body = fmt::format(R"({{"job":"{}","seconds":2}})", job);
    return server::testing::round_trip(
        port_a, fmt::format("POST /api/v1/capture/job HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                            "Authorization: Bearer s3cret\r\nContent-Type: application/json\r\n"
                            "Content-Length: {}\r\n\r\n{}",
                            body.size(), body));
  };
  const auto process_names = [](const json& trace) {
    std::set<std::string> out;
    for (const auto& e : trace["traceEvents"]) {
      if (e["ph"] == "M" && e["name"] == "process_name") out.insert(e["args"]["name"].get<std::string>());
    }
    return out;
  };
  {
    const auto r = ask_a();
    ASSERT_EQ(r.status, 200) << r.body;
    const json routed = json::parse(r.body);
    EXPECT_EQ(routed["captured"], 4);
    EXPECT_EQ(routed["asked"], 4);
    ASSERT_EQ(routed["nodes"].size(), 2u) << routed.dump();
    const auto got = process_names(routed["trace"]);
    for (int r = 0; r < 4; ++r) {
      EXPECT_TRUE(got.contains(
          fmt::format("{}/rank {}: nccl_ranks (pid {})", r < 2 ? "node-a" : "node-b", r, ranks[r]->pid())))
          << json(got).dump();
    }
    EXPECT_EQ(routed["trace"]["eacgm_job_capture"]["parts"].size(), 4u);
  }

  // Node b's agent is gone: its ranks are named, not captured; a's are in the trace.
  serve_b->signal(SIGKILL);
  serve_b->wait();
  Subprocess one(capture, dir_);
  ASSERT_EQ(one.wait(), 0) << one.err();
  for (int r = 2; r < 4; ++r) {
    EXPECT_NE(one.err().find(fmt::format("node-b/rank {} (pid {}) not captured: cannot reach the agent at "
                                         "http://127.0.0.1:{}",
                                         r, ranks[r]->pid(), port_b)),
              std::string::npos)
        << one.err();
  }
  EXPECT_NE(one.err().find("captured 2 of 4 ranks"), std::string::npos) << one.err();
  doc = read_trace();
  ASSERT_TRUE(doc.is_object() && doc.contains("eacgm_job_capture"));
  std::set<std::string> labels;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") labels.insert(e["args"]["name"].get<std::string>());
  }
  EXPECT_TRUE(labels.contains(fmt::format("node-a/rank 0: nccl_ranks (pid {})", ranks[0]->pid())));
  EXPECT_TRUE(labels.contains(fmt::format("node-a/rank 1: nccl_ranks (pid {})", ranks[1]->pid())));
  EXPECT_TRUE(labels.contains("node-b/rank 2: not captured")) << json(labels).dump();
  EXPECT_TRUE(labels.contains("node-b/rank 3: not captured")) << json(labels).dump();
  ASSERT_EQ(doc["eacgm_job_capture"]["missing"].size(), 2u);
  EXPECT_EQ(doc["eacgm_job_capture"]["missing"][0]["node"], "node-b");
  // The route names node b's ranks and why, and answers a's.
  {
    const auto r = ask_a();
    ASSERT_EQ(r.status, 200) << r.body;
    const json routed = json::parse(r.body);
    EXPECT_EQ(routed["captured"], 2);
    const json& b = routed["nodes"][1];
    EXPECT_EQ(b["node"], "node-b");
    for (const json& rank : b["ranks"]) {
      EXPECT_FALSE(rank["captured"].get<bool>());
      EXPECT_NE(rank["error"].get<std::string>().find(
                    fmt::format("cannot reach the agent at http://127.0.0.1:{}", port_b)),
                std::string::npos)
          << rank.dump();
    }
    EXPECT_EQ(routed["not_captured"].size(), 2u);
    const auto got = process_names(routed["trace"]);
    EXPECT_TRUE(got.contains("node-b/rank 3: not captured")) << json(got).dump();
    EXPECT_TRUE(got.contains(fmt::format("node-a/rank 0: nccl_ranks (pid {})", ranks[0]->pid())));
  }

  // No agent answers: an error, and no trace.
  serve_a->signal(SIGKILL);
  serve_a->wait();
  std::filesystem::remove(out);
  Subprocess none(capture, dir_);
  EXPECT_EQ(none.wait(), 1) << none.err();
  EXPECT_NE(none.err().find("job " + job + ": no node's agent answered (4 ranks on 2 nodes asked)"),
            std::string::npos)
      << none.err();
  EXPECT_FALSE(std::filesystem::exists(out)) << "a failed capture leaves no file";
  for (auto& r : ranks) r->signal(SIGKILL);
}

}  // namespace
}  // namespace eacgm::test
