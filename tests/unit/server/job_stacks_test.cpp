// The job verdict's ranks' Python stacks: two real agents' servers (node a answering
// /api/v1/inflight?stacks=1, node b holding two of the job's ranks) and a real SQLite
// store listing b's agent and a node c whose agent is gone. Node a's rank gets its stack
// from a's own calls in flight; b's ranks theirs from b's agent, asked once for both and
// with the fleet's token; c is named with why it has none, and the answer is still 200; an
// answer is reused for its few seconds (b stopped meanwhile), then asked again; without
// stacks=1 nobody is asked; a request from another agent asks no one.
#include "server/job_stacks.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../common/cuda_probe.h"
#include "analysis/analysis_snapshot.h"
#include "analysis/job_verdict.h"
#include "history/sqlite_store.h"
#include "http_client.h"
#include "recorded_daemon.h"
#include "server/api_routes.h"

namespace eacgm::server {
namespace {

using json = nlohmann::json;
using testing::get;

constexpr std::int64_t kS = 1'000'000'000;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A thread of `pid` waiting 30 s in ncclAllReduce, inside train.step (train.py:`line`).
analysis::InflightRow waiting(std::uint32_t pid, int line) {
  analysis::InflightRow row;
  row.call.call.pid = pid;
  row.call.call.tid = pid + 1;
  row.call.call.probe = test::cuda_probe("ncclAllReduce");
  auto stack = std::make_shared<PythonStack>();
  stack->pid = pid;
  stack->tid = pid + 1;
  stack->frames.push_back({std::make_shared<PythonCode>(PythonCode{"[nccl] ncclAllReduce", "", 0, true}), 0});
  stack->frames.push_back({std::make_shared<PythonCode>(PythonCode{"step", "train.py", 10, false}), line});
  row.call.python_stack = std::move(stack);
  row.age_ns = 30 * kS;
  return row;
}

analysis::JobRank rank(const std::string& node, std::int32_t r, std::uint32_t pid) {
  analysis::JobRank out;
  out.node = node;
  out.rank = r;
  out.pid = pid;
  return out;
}

// Node a's snapshot: ranks 0 (a, pid 100), 1 (b, pid 901) and 5 (c, pid 500) in
// ncclAllReduce #18204, rank 9 (b, pid 900) never entered it.
std::shared_ptr<analysis::AnalysisSnapshot> snapshot_a() {
  auto snap = std::make_shared<analysis::AnalysisSnapshot>();
  snap->edit<analysis::InflightSummary>().rows.push_back(waiting(100, 42));
  auto& job = snap->edit<analysis::JobVerdictSummary>();
  job.shared = true;
  job.node = "node-a";
  analysis::JobCommVerdict v;
  v.comm_id = 0x5eed;
  v.nranks = 16;
  v.function = "ncclAllReduce";
  v.number = 18204;
  v.in = {rank("node-a", 0, 100), rank("node-b", 1, 901), rank("node-c", 5, 500)};
  v.missing = {rank("node-b", 9, 900)};
  v.nodes = {"node-a", "node-b", "node-c"};
  v.hang = true;
  v.verdict = "rank 9 on node node-b never entered ncclAllReduce #18204";
  job.communicators.push_back(v);
  return snap;
}

// Node b: pid 900 waits elsewhere (a barrier's all-reduce at train.py:77); pid 901 has no stack.
std::shared_ptr<analysis::AnalysisSnapshot> snapshot_b() {
  auto snap = std::make_shared<analysis::AnalysisSnapshot>();
  snap->edit<analysis::InflightSummary>().rows.push_back(waiting(900, 77));
  return snap;
}

class JobStacksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fmt::format("/tmp/eacgm-job-stacks-{}-{}", getpid(), ++serial_);
    std::filesystem::create_directories(dir_);
    token_file_ = dir_ + "/token";
    std::ofstream(token_file_) << "fleet-token-1\n";
    ::chmod(token_file_.c_str(), 0600);
    start_b();
    // c's agent: a port nobody listens on any more.
    HttpServer c;
    ServerOptions co;
    co.address = "127.0.0.1";
    co.port = 0;
    ASSERT_TRUE(c.start(co));
    c_url_ = fmt::format("http://127.0.0.1:{}", c.port());
    c.stop();
    put_agent("node-b", fmt::format("http://127.0.0.1:{}", b_->port()));
    put_agent("node-c", c_url_);
  }
  void TearDown() override {
    a_.stop();
    if (b_) b_->stop();
    std::filesystem::remove_all(dir_);
  }
  void start_b() {
    b_ = std::make_unique<HttpServer>();
    add_api_routes(*b_, std::make_shared<test::RecordedSource>(snapshot_b()), {});
    ServerOptions so;
    so.address = "127.0.0.1";
    so.port = 0;
    so.token_file = token_file_;
    ASSERT_TRUE(b_->start(so));
  }
  void put_agent(const std::string& node, const std::string& url) {
    auto s = history::SqliteStore::open(dir_ + "/fleet.db");
    ASSERT_TRUE(s) << s.error();
    const std::int64_t seen = now_ns() - 3 * kS;
    ASSERT_TRUE((*s)->put_agent(history::StoredAgent{node, url, "test", seen - 60 * kS, seen, 10 * kS}));
  }
  // Node a's routes, its JobStacks reading the store's agents and keeping answers `keep`.
  void start_a(std::chrono::milliseconds keep) {
    JobStackOptions o;
    o.peer.node = "node-a";
    o.peer.token = "fleet-token-1";
    o.peer.timeout = std::chrono::seconds(2);
    o.keep = keep;
    auto stacks = std::make_shared<JobStacks>(o, [path = dir_ + "/fleet.db"]() -> Result<history::AgentList> {
      auto s = history::SqliteStore::open(path);
      if (!s) return std::move(s).take_error();
      return (*s)->agents();
    });
    add_api_routes(a_, std::make_shared<test::RecordedSource>(snapshot_a()), {}, stacks);
    ServerOptions so;
    so.address = "127.0.0.1";
    so.port = 0;
    ASSERT_TRUE(a_.start(so));
  }
  json inflight(const std::string& query = "?stacks=1", const std::string& headers = "") {
    const auto r = get(a_.port(), "/api/v1/inflight" + query, headers);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body, nullptr, false);
  }
  // The verdict's rank `r` ("in" and "missing" together).
  static json rank_of(const json& doc, int r) {
    for (const char* list : {"in", "missing"}) {
      for (const auto& x : doc["job"]["communicators"][0][list])
        if (x["rank"] == r) return x;
    }
    return nullptr;
  }
  static json node_of(const json& doc, const std::string& node) {
    for (const auto& n : doc["job"]["stacks"])
      if (n["node"] == node) return n;
    return nullptr;
  }

  static inline int serial_ = 0;
  std::string dir_, token_file_, c_url_;
  HttpServer a_;
  std::unique_ptr<HttpServer> b_;
};

TEST_F(JobStacksTest, EachRankGetsItsStackFromItsOwnNodesAgentAndADeadNodeIsNamed) {
  start_a(std::chrono::milliseconds(60'000));
  const json doc = inflight();
  ASSERT_FALSE(doc.is_discarded());
  // a's own rank: from a's calls in flight.
  const json r0 = rank_of(doc, 0);
  EXPECT_EQ(r0["python_stack"], json({"[nccl] ncclAllReduce", "step (train.py:42)"})) << r0.dump();
  EXPECT_EQ(r0["stack_tid"], 101);
  // The missing rank: b's stack of pid 900, not a's.
  const json r9 = rank_of(doc, 9);
  EXPECT_EQ(r9["python_stack"], json({"[nccl] ncclAllReduce", "step (train.py:77)"})) << r9.dump();
  EXPECT_EQ(r9["stack_call"], "ncclAllReduce");
  // b answered, without a stack of pid 901.
  const json r1 = rank_of(doc, 1);
  EXPECT_TRUE(r1["python_stack"].is_null()) << r1.dump();
  EXPECT_NE(r1["stack_error"].get<std::string>().find("node node-b has no Python stack of pid 901"),
            std::string::npos)
      << r1.dump();
  const json b = node_of(doc, "node-b");
  EXPECT_TRUE(b["error"].is_null()) << b.dump();
  EXPECT_EQ(b["pids"], json({901, 900})) << "one request for both of b's ranks";
  // c's agent is gone: its rank says why, and so does its node.
  const json r5 = rank_of(doc, 5);
  EXPECT_TRUE(r5["python_stack"].is_null());
  const json c = node_of(doc, "node-c");
  ASSERT_TRUE(c["error"].is_string()) << doc["job"].dump();
  const std::string why = c["error"];
  EXPECT_NE(why.find("node node-c's agent at " + c_url_ + " did not answer: could not connect"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("last seen"), std::string::npos) << why;
  EXPECT_EQ(r5["stack_error"], why);
  EXPECT_TRUE(node_of(doc, "node-a").is_null()) << "a's ranks are not asked of anyone";
}

TEST_F(JobStacksTest, AnAnswerIsReusedForItsSecondsThenAskedAgain) {
  start_a(std::chrono::milliseconds(60'000));
  ASSERT_EQ(rank_of(inflight(), 9)["python_stack"].size(), 2u);
  b_->stop();
  // Within the minute: b's answer as it was, b not asked.
  const json again = inflight();
  EXPECT_EQ(rank_of(again, 9)["python_stack"].size(), 2u) << again["job"].dump();
  EXPECT_TRUE(node_of(again, "node-b")["error"].is_null());
  EXPECT_GT(node_of(again, "node-b")["answer_age_ns"].get<std::int64_t>(), 0);
}

TEST_F(JobStacksTest, AnAgentThatStoppedIsNamedOnceItsAnswerIsOld) {
  start_a(std::chrono::milliseconds(0));
  ASSERT_EQ(rank_of(inflight(), 9)["python_stack"].size(), 2u);
  b_->stop();
  const json doc = inflight();
  const json r9 = rank_of(doc, 9);
  EXPECT_TRUE(r9["python_stack"].is_null()) << r9.dump();
  EXPECT_NE(r9["stack_error"].get<std::string>().find("node node-b's agent at"), std::string::npos)
      << r9.dump();
}

TEST_F(JobStacksTest, AWrongTokenIsNamedWithTheFleetsTokenFile) {
  b_->stop();
  std::ofstream(token_file_) << "another-token\n";
  start_b();
  put_agent("node-b", fmt::format("http://127.0.0.1:{}", b_->port()));
  start_a(std::chrono::milliseconds(0));
  const std::string why = node_of(inflight(), "node-b")["error"];
  EXPECT_NE(why.find("answered 401"), std::string::npos) << why;
  EXPECT_NE(why.find("[serve] token_file"), std::string::npos) << why;
}

TEST_F(JobStacksTest, OnlyWhenAskedAndNeverForAnotherAgent) {
  start_a(std::chrono::milliseconds(0));
  const json plain = inflight("");
  EXPECT_FALSE(rank_of(plain, 9).contains("python_stack")) << plain.dump();
  EXPECT_FALSE(plain["job"].contains("stacks"));
  const json forwarded = inflight("?stacks=1", std::string(kForwardedHeader) + ": node-x\r\n");
  const json r9 = rank_of(forwarded, 9);
  EXPECT_TRUE(r9["python_stack"].is_null());
  EXPECT_NE(r9["stack_error"].get<std::string>().find("came from another agent"), std::string::npos);
  EXPECT_EQ(rank_of(forwarded, 0)["python_stack"].size(), 2u) << "a's own ranks all the same";
  EXPECT_EQ(get(a_.port(), "/api/v1/inflight?stacks=2").status, 400);
}

TEST_F(JobStacksTest, TheStacksRouteAnswersTheGivenPidsAndRefusesOthers) {
  const std::string auth = "Authorization: Bearer fleet-token-1\r\n";
  const auto r = get(b_->port(), "/api/v1/inflight/stacks?pids=900,901,900", auth);
  ASSERT_EQ(r.status, 200) << r.body;
  const json doc = json::parse(r.body);
  ASSERT_EQ(doc["stacks"].size(), 1u) << doc.dump();
  EXPECT_EQ(doc["stacks"][0]["pid"], 900);
  EXPECT_EQ(doc["stacks"][0]["tid"], 901);
  EXPECT_EQ(doc["stacks"][0]["age_ns"], 30 * kS);
  for (const char* bad : {"", "?pids=", "?pids=1,,2", "?pids=x", "?pids=0", "?pids=5,"}) {
    const auto e = get(b_->port(), std::string("/api/v1/inflight/stacks") + bad, auth);
    EXPECT_EQ(e.status, 400) << bad;
    EXPECT_NE(e.body.find("pids: process ids separated by commas"), std::string::npos) << e.body;
  }
}

}  // namespace
}  // namespace eacgm::server
