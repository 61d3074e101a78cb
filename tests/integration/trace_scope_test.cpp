// [trace] cgroup: two `eacgm serve`s on one machine, each limited to its own cgroup v2
// subtree (a node of a job, a tenant), with a CUDA driver loop in each subtree and one
// outside both: each agent counts exactly its own loop's calls and lists no other
// process; a path that is no cgroup is refused at start with what to do. As two nodes of
// a job: NCCL stand-in ranks on both, one stopped before a collective, are named by the
// missing-rank rule's expression over both agents' progress series, in a real Prometheus.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "../unit/server/http_client.h"
#include "core/proc_file.h"
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
  for (auto* s : {serve_a.get(), serve_b.get()}) {
    ASSERT_TRUE(s->wait_for("tracing all processes in cgroup /eacgm-scope-", true)) << s->err();
    ASSERT_TRUE(s->wait_for("libcuda.so", true)) << s->err();
  }
  std::ofstream(dir_ + "/go") << "go";
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
// on, the rule names nobody, and the series go with the processes.
TEST_F(TraceScope, TwoAgentsProgressSeriesLetTheRuleNameTheRankAnotherNodeWaitsFor) {
  if (!std::filesystem::exists("/usr/bin/prometheus"))
    GTEST_SKIP() << "Debian's prometheus package is needed";
  const std::string lib = EACGM_TEST_BIN_DIR "/fake_libnccl/libnccl.so.2";
  ::setenv("EACGM_FAKE_NCCL_DIR", dir_.c_str(), 1);
  const std::string id0 = fmt::format("{:x}", 0xeac90000ull + static_cast<unsigned>(getpid())), id1 = "5eed";
  std::vector<std::unique_ptr<Subprocess>> ranks;
  for (int r = 0; r < 4; ++r) {
    std::vector<std::string> argv{bin("nccl_ranks"), lib,           std::to_string(r), "4", id0, id1, "10",
                                  dir_ + "/go",      dir_ + "/done"};
    if (r == 3) argv.insert(argv.end(), {"--stop-before", "6", dir_ + "/release"});
    ranks.push_back(std::make_unique<Subprocess>(argv, dir_));
    ASSERT_TRUE(ranks.back()->wait_for("ready")) << ranks.back()->err();
    std::ofstream(mount_ + cgroups_[r < 2 ? 0 : 1] + "/cgroup.procs") << ranks.back()->pid() << "\n";
  }
  const std::uint16_t port_a = free_port(), port_b = free_port();
  auto serve_a = serve(port_a, cgroups_[0], "a", "nccl", "[hangs]\nmin_age_s = 1\n");
  auto serve_b = serve(port_b, cgroups_[1], "b", "nccl", "[hangs]\nmin_age_s = 1\n");
  for (auto* s : {serve_a.get(), serve_b.get()}) {
    ASSERT_TRUE(s->wait_for("tracing all processes in cgroup /eacgm-scope-", true)) << s->err();
    ASSERT_TRUE(s->wait_for("libnccl.so", true)) << s->err();
  }
  PrometheusServer prometheus(dir_, std::vector<std::uint16_t>{port_a, port_b});
  std::ofstream(dir_ + "/go") << "go";
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

}  // namespace
}  // namespace eacgm::test
