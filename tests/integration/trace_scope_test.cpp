// [trace] cgroup: two `eacgm serve`s on one machine, each limited to its own cgroup v2
// subtree (a node of a job, a tenant), with a CUDA driver loop in each subtree and one
// outside both: each agent counts exactly its own loop's calls and lists no other
// process; a path that is no cgroup is refused at start with what to do.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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
  std::unique_ptr<Subprocess> serve(std::uint16_t port, const std::string& cgroup, const std::string& name) {
    const std::string cfg = dir_ + "/" + name + ".toml";
    std::ofstream(cfg) << "[trace]\ncgroup = \"" << cgroup << "\"\n";
    return std::make_unique<Subprocess>(
        std::vector<std::string>{bin("eacgm"), "serve", "--listen", "127.0.0.1:" + std::to_string(port),
                                 "--no-gpu", "--probes", "cuda_driver", "--config", cfg, "--store",
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

}  // namespace
}  // namespace eacgm::test
