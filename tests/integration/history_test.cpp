// `eacgm serve`'s history in a real SQLite file: what the traced program did is there
// after it exits and after the agent restarts, through the API and `eacgm history` (the
// GPU time of a process that carries the hook included); a
// SIGKILL mid-write leaves a file that passes PRAGMA integrity_check with every interval
// written before it; a store written by a newer schema and a store that cannot be opened
// are refused with one line, and `eacgm history` on a store that is not there makes
// nothing.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "../unit/server/http_client.h"
#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using server::testing::get;

class History : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
    dir_ = temp_dir();
    port_ = free_port();
    store_ = "sqlite:" + dir_ + "/state/eacgm.db";
    std::ofstream(dir_ + "/eacgm.toml") << "[store]\ninterval_s = 1\n";
  }
  std::unique_ptr<Subprocess> start_serve(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {bin("eacgm"),
                                     "serve",
                                     "--listen",
                                     "127.0.0.1:" + std::to_string(port_),
                                     "--mode",
                                     "per-call",
                                     "--no-gpu",
                                     "--config",
                                     dir_ + "/eacgm.toml",
                                     "--store",
                                     store_,
                                     "--node",
                                     "test-node"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto p = std::make_unique<Subprocess>(argv, dir_);
    EXPECT_TRUE(p->wait_for("tracing all processes", true)) << p->err();
    EXPECT_TRUE(eventually([&] { return get(port_, "/readyz").status == 200; })) << p->err();
    return p;
  }
  json api(const std::string& path) {
    auto reply = get(port_, path);
    EXPECT_EQ(reply.status, 200) << path << ": " << reply.body;
    return json::parse(reply.body, nullptr, false);
  }
  std::string dir_;
  std::string store_;
  std::uint16_t port_ = 0;
};

TEST_F(History, KeptAfterTheProgramExitsAndTheAgentRestarts) {
  auto serve = start_serve();
  EXPECT_NE(serve->err().find("keeping history in " + store_ + " (node test-node, every 1 s)"),
            std::string::npos)
      << serve->err();
  for (int i = 0; i < 2; ++i) {
    Subprocess program({bin("cuda_calls")});
    EXPECT_EQ(program.wait(), 7);
  }
  // Each run's two cudaMalloc calls, written within an interval or two.
  ASSERT_TRUE(eventually([&] {
    return calls_of(api("/api/v1/history/functions?since=1h"), "cudaMalloc") == 4;
  })) << get(port_, "/api/v1/history/functions?since=1h").body;
  const json procs = api("/api/v1/history/processes?since=1h&comm=cuda_calls");
  ASSERT_EQ(procs["processes"].size(), 2u) << procs.dump();
  for (const auto& p : procs["processes"]) {
    EXPECT_EQ(p["node"], "test-node");
    EXPECT_EQ(p["calls"], 12);
  }
  // Both exits are written once the analysis finds the processes gone.
  EXPECT_TRUE(eventually([&] {
    const json d = api("/api/v1/history/processes?since=1h&comm=cuda_calls");
    return d["processes"].size() == 2 && d["processes"][0]["exited"] == true &&
           d["processes"][1]["exited"] == true;
  })) << get(port_, "/api/v1/history/processes?since=1h").body;
  const std::string body = get(port_, "/metrics").body;
  EXPECT_NE(body.find("\neacgm_store_up 1\n"), std::string::npos);
  EXPECT_EQ(body.find("\neacgm_store_write_failures_total 0\n") == std::string::npos, false);
  serve->signal(SIGTERM);
  ASSERT_EQ(serve->wait(), 0) << serve->err();

  // The agent is gone: `eacgm history` reads the file.
  Subprocess cli({bin("eacgm"), "history", "--store", store_, "--since", "1h", "--json"});
  ASSERT_EQ(cli.wait(), 0) << cli.err();
  const json doc = json::parse(cli.out(), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << cli.out();
  EXPECT_EQ(calls_of(doc, "cudaMalloc"), 4u);
  EXPECT_EQ(calls_of(doc, "cudaLaunchKernel"), 6u);
  EXPECT_EQ(doc["window"]["tier"], "raw");
  Subprocess text({bin("eacgm"), "history", "--store", store_, "--comm", "cuda_calls"});
  ASSERT_EQ(text.wait(), 0) << text.err();
  EXPECT_NE(text.out().find("cudaMalloc"), std::string::npos) << text.out();
  EXPECT_NE(text.out().find("exited"), std::string::npos) << text.out();
  Subprocess one({bin("eacgm"), "history", "--store", store_, "--pid", "1", "--json"});
  ASSERT_EQ(one.wait(), 0) << one.err();
  EXPECT_EQ(calls_of(json::parse(one.out()), "cudaMalloc"), 0u) << "a filter that matches nothing";

  // Restarted: the same history through the API, and new calls add to it.
  auto again = start_serve();
  EXPECT_EQ(calls_of(api("/api/v1/history/functions?since=1h"), "cudaMalloc"), 4u);
  {
    Subprocess program({bin("cuda_calls")});
    EXPECT_EQ(program.wait(), 7);
  }
  EXPECT_TRUE(eventually([&] {
    return calls_of(api("/api/v1/history/functions?since=1h"), "cudaMalloc") == 6;
  })) << get(port_, "/api/v1/history/functions?since=1h").body;
  EXPECT_EQ(get(port_, "/api/v1/history/functions?since=yesterday").status, 400);
  again->signal(SIGTERM);
  EXPECT_EQ(again->wait(), 0) << again->err();
}

// A process that carries the hook with GPU time on (against the FAKE libcuda: each
// launch is 50 us of pretend GPU work per block) has its GPU time kept: per kernel name,
// its exact launches and the durations of its timed launches, after it exits.
TEST_F(History, KeepsTheGpuTimeOfAProcessThatCarriesTheHook) {
  auto serve = start_serve();
  Subprocess program({"/usr/bin/env", "LD_PRELOAD=" + bin("libeacgm_hook.so"), "EACGM_GPU_TIME=1",
                      "EACGM_FAKE_KERNEL_US=50", bin("gpu_time_calls"), bin("fake_libcuda/libcuda.so.1")});
  ASSERT_EQ(program.wait(), 0) << program.err();
  auto gpu_row = [](const json& doc) -> json {
    for (const auto& f : doc.value("functions", json::array())) {
      if (f["domain"] == "gpu_time" && f["function"] == "kernelA(float*)") return f;
    }
    return nullptr;
  };
  ASSERT_TRUE(eventually([&] {
    const json row = gpu_row(api("/api/v1/history/functions?since=1h"));
    return row.is_object() && row["calls"] == 200;
  })) << get(port_, "/api/v1/history/functions?since=1h").body;
  const json row = gpu_row(api("/api/v1/history/functions?since=1h"));
  // 12 or 13 timed, of which the first launch is kept apart from the durations.
  EXPECT_GE(row["timed"].get<int>(), 11) << row.dump();
  EXPECT_NEAR(row["p50_ns"].get<double>(), 50'000, 50'000 * 0.04) << row.dump();
  serve->signal(SIGTERM);
  ASSERT_EQ(serve->wait(), 0) << serve->err();

  Subprocess text({bin("eacgm"), "history", "--store", store_, "--since", "1h"});
  ASSERT_EQ(text.wait(), 0) << text.err();
  const auto table = text.out().find("gpu time (CUDA events through the hook");
  ASSERT_NE(table, std::string::npos) << text.out();
  EXPECT_NE(text.out().find("kernelA(float*)", table), std::string::npos) << text.out();
}

TEST_F(History, SigkillMidWriteLeavesACleanFileWithEveryWrittenInterval) {
  auto serve = start_serve();
  // A program that keeps calling while the agent writes an interval each second.
  std::atomic<bool> stop{false};
  std::thread load([&] {
    while (!stop) {
      Subprocess program({bin("cuda_calls"), "--repeat", "20"});
      program.wait();
    }
  });
  std::uint64_t before_kill = 0;
  EXPECT_TRUE(eventually(
      [&] {
        before_kill = calls_of(api("/api/v1/history/functions?since=1h"), "cudaMalloc");
        return before_kill >= 200;
      },
      60s))
      << before_kill;
  serve->signal(SIGKILL);
  serve->wait();
  stop = true;
  load.join();
  const std::string path = dir_ + "/state/eacgm.db";
  Subprocess check(
      {"/usr/bin/python3", "-c",
       "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); "
       "print(c.execute('PRAGMA integrity_check').fetchone()[0]); "
       "print(c.execute(\"SELECT coalesce(sum(f.calls),0) FROM functions f JOIN names n ON n.id = "
       "f.function WHERE f.tier=0 AND n.name='cudaMalloc'\").fetchone()[0])",
       path});
  ASSERT_EQ(check.wait(), 0) << check.err();
  std::istringstream lines(check.out());
  std::string integrity;
  std::uint64_t kept = 0;
  lines >> integrity >> kept;
  EXPECT_EQ(integrity, "ok");
  EXPECT_GE(kept, before_kill) << "every interval written before the kill is in the file";
}

TEST_F(History, RefusesANewerSchemaAndAStoreThatCannotOpen) {
  const std::string path = dir_ + "/newer.db";
  Subprocess make({"/usr/bin/python3", "-c",
                   "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); "
                   "c.execute('CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL)'); "
                   "c.execute(\"INSERT INTO meta VALUES('schema_version', 99)\"); c.commit()",
                   path});
  ASSERT_EQ(make.wait(), 0) << make.err();
  store_ = "sqlite:" + path;
  Subprocess newer({bin("eacgm"), "serve", "--listen", "127.0.0.1:" + std::to_string(port_), "--no-gpu",
                    "--store", store_});
  EXPECT_EQ(newer.wait(), 2);
  EXPECT_NE(newer.err().find("written by a newer eacgm (schema 99; this agent reads up to "),
            std::string::npos)
      << newer.err();
  Subprocess bad({bin("eacgm"), "serve", "--no-gpu", "--store", "mysql://root:hunter2@db/x"});
  EXPECT_EQ(bad.wait(), 2);
  EXPECT_NE(bad.err().find("--store: store URL \"mysql://root:***@db/x\" is not one eacgm knows"),
            std::string::npos)
      << bad.err();
  EXPECT_EQ(bad.err().find("hunter2"), std::string::npos);
  Subprocess closed({bin("eacgm"), "serve", "--no-gpu", "--store", "sqlite:/proc/eacgm/none.db"});
  EXPECT_EQ(closed.wait(), 2);
  EXPECT_NE(closed.err().find("store sqlite:/proc/eacgm/none.db"), std::string::npos) << closed.err();
  Subprocess history({bin("eacgm"), "history", "--store", "sqlite:" + path});
  EXPECT_EQ(history.wait(), 1);
  EXPECT_NE(history.err().find("newer eacgm"), std::string::npos) << history.err();
  // Reading a store that is not there makes nothing.
  const std::string missing = dir_ + "/missing/dir/eacgm.db";
  Subprocess none({bin("eacgm"), "history", "--store", "sqlite:" + missing});
  EXPECT_EQ(none.wait(), 1);
  EXPECT_NE(none.err().find("cannot open store sqlite:" + missing + " (no such file)"), std::string::npos)
      << none.err();
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/missing"));
}

}  // namespace
}  // namespace eacgm::test
