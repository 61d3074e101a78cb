// Integration tests (root, real eBPF uprobes): the waiting calls in flight end to end.
// block_calls blocks in block_wait() of a user library (libeacgm_block), traced by a
// `[[probe]]` with `waits = true`, or in the FAKE libcuda's cuStreamSynchronize (a probe
// counted in always-on mode); `eacgm serve` must list the call on /api/v1/inflight with
// its pid, tid and a growing age once it is older than [hangs] min_age_s, never list the
// short calls, and drop the call once it returned; `eacgm run --json` must list the calls
// still in flight when the run ended.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <thread>

#include "../unit/server/http_client.h"
#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using server::testing::get;

constexpr const char* kProbe = R"([[probe]]
name = "block_wait"
library = "libeacgm_block.so*"
symbol = "block_wait"
waits = true
args = [
  { name = "index", reg = 0, kind = "raw", format = "signed" },
  { name = "ms", reg = 1, kind = "raw", format = "signed" },
]

[[probe]]
name = "block_outer"
library = "libeacgm_block.so*"
symbol = "block_outer"
waits = true
args = [{ name = "index", reg = 0, kind = "raw", format = "signed" }]
)";

// The number after `word ` in a program's output, once it is there.
std::optional<long> printed(const Subprocess& p, const std::string& word) {
  std::smatch m;
  const std::string out = p.out();
  if (!std::regex_search(out, m, std::regex("(?:^|\n)" + word + " (\\d+)"))) return std::nullopt;
  return std::stol(m[1]);
}

class Inflight : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
    dir_ = temp_dir();
    port_ = free_port();
    std::ofstream(dir_ + "/eacgm.toml") << "[hangs]\nmin_age_s = 1\n\n" << kProbe;
  }
  std::unique_ptr<Subprocess> start_serve(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {
        bin("eacgm"),         "serve",   "--listen", "127.0.0.1:" + std::to_string(port_), "--config",
        dir_ + "/eacgm.toml", "--no-gpu"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto p = std::make_unique<Subprocess>(argv, dir_);
    EXPECT_TRUE(p->wait_for("tracing all processes", true)) << p->err();
    return p;
  }
  // The listed calls named `name`.
  std::vector<json> listed(const std::string& name) {
    std::vector<json> out;
    auto reply = get(port_, "/api/v1/inflight");
    if (reply.status != 200) return out;
    const json doc = json::parse(reply.body, nullptr, false);
    if (doc.is_discarded()) return out;
    for (const json& c : doc.at("calls")) {
      if (c.at("name") == name) out.push_back(c);
    }
    return out;
  }
  std::string dir_;
  std::uint16_t port_ = 0;
};

TEST_F(Inflight, ServeListsAWaitingUserCallWhileItBlocksAndNeverTheShortOnes) {
  auto serve = start_serve({});
  const std::string go = dir_ + "/go", done = dir_ + "/done";
  // 150 calls of 10 ms, then one of 6 s; the program lives on until `done`.
  Subprocess program({bin("block_calls"), "--wait-file", go, "--done-file", done, "150", "10", "6000"}, dir_);
  ASSERT_TRUE(program.wait_for("ready")) << program.err();
  ASSERT_TRUE(serve->wait_for("probes to " + bin("libeacgm_block.so"), true)) << serve->err();
  std::ofstream(go) << "go";

  // The short calls (1.5 s of them, each far younger than min_age_s) are never listed.
  while (!printed(program, "long_start")) {
    ASSERT_TRUE(listed("block_wait").empty()) << get(port_, "/api/v1/inflight").body;
    ASSERT_EQ(waitpid(program.pid(), nullptr, WNOHANG), 0) << program.err();
    std::this_thread::sleep_for(100ms);
  }
  const auto long_start = Clock::now();
  const long tid = *printed(program, "long_start");
  ASSERT_NE(tid, program.pid()) << "the calls run on a thread of their own";

  // Listed within a second or two of min_age_s (a scan a second, a snapshot a second).
  std::vector<json> calls;
  while ((calls = listed("block_wait")).empty() && Clock::now() - long_start < 3500ms) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(calls.size(), 1u) << get(port_, "/api/v1/inflight").body;
  const auto first_seen = Clock::now() - long_start;
  EXPECT_GE(first_seen, 900ms);
  const json first = calls[0];
  EXPECT_EQ(first.at("pid"), program.pid());
  EXPECT_EQ(first.at("tid"), tid);
  EXPECT_EQ(first.at("comm"), "block_calls");
  EXPECT_EQ(first.at("domain"), "user");
  EXPECT_TRUE(first.at("rank").is_null());
  EXPECT_EQ(first.at("args"), (json{{"index", 1000000}, {"ms", 6000}})) << first.dump();
  const auto first_age = first.at("age_ns").get<std::uint64_t>();
  EXPECT_GE(first_age, 1'000'000'000u);
  EXPECT_LE(first_age, 4'000'000'000u);

  // Its age grows with the wait.
  std::this_thread::sleep_for(2s);
  calls = listed("block_wait");
  ASSERT_EQ(calls.size(), 1u) << get(port_, "/api/v1/inflight").body;
  const auto later_age = calls[0].at("age_ns").get<std::uint64_t>();
  EXPECT_GE(later_age, first_age + 1'000'000'000u) << first_age << " then " << later_age;
  EXPECT_LE(later_age, first_age + 3'500'000'000u) << first_age << " then " << later_age;
  EXPECT_EQ(calls[0].at("ts_ns"), first.at("ts_ns")) << "the same call";

  // The metrics say the same while it waits.
  const std::string metrics = get(port_, "/metrics").body;
  EXPECT_NE(metrics.find("eacgm_call_in_flight_max_seconds{domain=\"user\",function=\"block_wait\"}"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("eacgm_process_stuck_seconds{pid=\"" + std::to_string(program.pid()) +
                         "\",comm=\"block_calls\"}"),
            std::string::npos);

  // Gone after the return, while the process lives on.
  ASSERT_TRUE(program.wait_for("long_end", false, 15s)) << program.err();
  const auto returned = Clock::now();
  while (!listed("block_wait").empty() && Clock::now() - returned < 3s) std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(listed("block_wait").empty()) << get(port_, "/api/v1/inflight").body;
  EXPECT_EQ(waitpid(program.pid(), nullptr, WNOHANG), 0) << "still running";
  std::ofstream(done) << "done";
  EXPECT_EQ(program.wait(), 0) << program.err();
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0) << serve->err();
}

TEST_F(Inflight, ServeListsACountedSynchronisationInAlwaysOnMode) {
  auto serve = start_serve({"--mode", "always-on", "--probes", "cuda_driver"});
  const std::string go = dir_ + "/go";
  Subprocess program(
      {bin("block_calls"), "--wait-file", go, "--cuda", bin("fake_libcuda/libcuda.so.1"), "0", "0", "5000"},
      dir_);
  ASSERT_TRUE(program.wait_for("ready")) << program.err();
  ASSERT_TRUE(serve->wait_for("fake_libcuda/libcuda.so.1", true)) << serve->err();
  std::ofstream(go) << "go";
  ASSERT_TRUE(program.wait_for("long_start")) << program.err();
  const auto long_start = Clock::now();
  const long tid = *printed(program, "long_start");
  std::vector<json> calls;
  while ((calls = listed("cuStreamSynchronize")).empty() && Clock::now() - long_start < 3500ms) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(calls.size(), 1u) << get(port_, "/api/v1/inflight").body << serve->err();
  EXPECT_EQ(calls[0].at("pid"), program.pid());
  EXPECT_EQ(calls[0].at("tid"), tid);
  EXPECT_EQ(calls[0].at("domain"), "cuda_driver");
  EXPECT_EQ(calls[0].at("args").at("stream"), "0x5eed") << calls[0].dump();
  EXPECT_GE(calls[0].at("age_ns").get<std::uint64_t>(), 1'000'000'000u);
  ASSERT_TRUE(program.wait_for("long_end", false, 15s)) << program.err();
  EXPECT_EQ(program.wait(), 0) << program.err();
  const auto returned = Clock::now();
  while (!listed("cuStreamSynchronize").empty() && Clock::now() - returned < 3s) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(listed("cuStreamSynchronize").empty()) << get(port_, "/api/v1/inflight").body;
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0) << serve->err();
}

// [hangs] in_flight = false: the probes leave the table alone, nothing is listed.
TEST_F(Inflight, InFlightOffListsNothing) {
  std::ofstream(dir_ + "/eacgm.toml") << "[hangs]\nmin_age_s = 1\nin_flight = false\n\n" << kProbe;
  auto serve = start_serve({"--mode", "always-on", "--probes", "cuda_driver"});
  const std::string go = dir_ + "/go";
  Subprocess program(
      {bin("block_calls"), "--wait-file", go, "--cuda", bin("fake_libcuda/libcuda.so.1"), "0", "0", "3000"},
      dir_);
  ASSERT_TRUE(program.wait_for("ready")) << program.err();
  ASSERT_TRUE(serve->wait_for("fake_libcuda/libcuda.so.1", true)) << serve->err();
  std::ofstream(go) << "go";
  ASSERT_TRUE(program.wait_for("long_start")) << program.err();
  std::this_thread::sleep_for(2500ms);  // past min_age_s and a scan
  EXPECT_TRUE(listed("cuStreamSynchronize").empty()) << get(port_, "/api/v1/inflight").body;
  ASSERT_TRUE(program.wait_for("long_end", false, 15s)) << program.err();
  EXPECT_EQ(program.wait(), 0) << program.err();
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0) << serve->err();
}

TEST_F(Inflight, AThreadKilledInsideItsCallLeavesTheKernelsTable) {
  auto serve = start_serve({});
  // Threads in a waiting call of any age, as the kernel's table holds them.
  auto table_size = [&]() -> long {
    std::smatch m;
    const std::string body = get(port_, "/metrics").body;
    if (!std::regex_search(body, m, std::regex("\neacgm_calls_in_flight (\\d+)"))) return -1;
    return std::stol(m[1]);
  };
  ASSERT_TRUE(serve->wait_for("ready in", true)) << serve->err();
  long before = -1;
  while ((before = table_size()) < 0) std::this_thread::sleep_for(100ms);
  const std::string go = dir_ + "/go";
  Subprocess program({bin("block_calls"), "--wait-file", go, "0", "0", "60000"}, dir_);
  ASSERT_TRUE(program.wait_for("ready")) << program.err();
  ASSERT_TRUE(serve->wait_for("probes to " + bin("libeacgm_block.so"), true)) << serve->err();
  std::ofstream(go) << "go";
  const auto start = Clock::now();
  while (listed("block_wait").empty() && Clock::now() - start < 4s) std::this_thread::sleep_for(50ms);
  ASSERT_EQ(listed("block_wait").size(), 1u) << get(port_, "/api/v1/inflight").body;
  EXPECT_EQ(table_size(), before + 1);
  program.signal(SIGKILL);
  program.wait();
  // The thread's exit deleted its entry: the table holds what it held before.
  const auto killed = Clock::now();
  while (table_size() != before && Clock::now() - killed < 3s) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(table_size(), before);
  EXPECT_TRUE(listed("block_wait").empty()) << get(port_, "/api/v1/inflight").body;
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0) << serve->err();
}

TEST_F(Inflight, RunJsonListsTheCallsStillInFlightWhenTheRunEndedTheOutermostOfNestedOnes) {
  // The command blocks for 60 s in block_wait inside block_outer, both waiting probes;
  // the run ends after 3.
  Subprocess eacgm({bin("eacgm"), "run", "--json", "--no-gpu", "--duration", "3", "--config",
                    dir_ + "/eacgm.toml", "--", bin("block_calls"), "--nested", "1", "5", "1", "60000"},
                   dir_);
  ASSERT_EQ(eacgm.wait(), 0) << eacgm.err();
  const json doc = json::parse(eacgm.out());
  const json& inflight = doc.at("in_flight");
  EXPECT_EQ(inflight.at("min_age_ns"), 1'000'000'000u);
  EXPECT_EQ(inflight.at("in_flight"), 1) << "one entry per thread: the outer call's";
  ASSERT_EQ(inflight.at("calls").size(), 1u) << inflight.dump(1);
  const json& call = inflight.at("calls")[0];
  EXPECT_EQ(call.at("name"), "block_outer");
  EXPECT_EQ(call.at("args"), (json{{"index", 1000000}}));
  EXPECT_GE(call.at("age_ns").get<std::uint64_t>(), 1'000'000'000u);
  EXPECT_LE(call.at("age_ns").get<std::uint64_t>(), 4'000'000'000u);
  EXPECT_NE(call.at("tid"), call.at("pid"));
}

}  // namespace
}  // namespace eacgm::test
