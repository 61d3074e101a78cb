// A history request naming another node: which store answers it, or its node's agent
// (the decision, table-driven); and two real history servers over real SQLite stores,
// node a's listing node b's agent: a's answer for b's raw rows is b's, marked with its
// source and sent with the fleet's token; a forwarded request is never forwarded again;
// b stopped, silent, refusing the token or without an agent row is a JSON error naming
// node b, the URL tried and when it was last seen.
#include "server/history_forward.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../history/store_batches.h"
#include "history/sqlite_store.h"
#include "http_client.h"
#include "server/history_routes.h"

namespace eacgm::server {
namespace {

using history::NodeKeeping;
using history::Tier;
using json = nlohmann::json;
using testing::get;

constexpr NodeKeeping kNone{false, false};
constexpr NodeKeeping kRaw{true, false};
constexpr NodeKeeping kRollups{true, true};

TEST(HistorySource, OnlyAnotherNodesWindowThatNoStoreKeepsGoesToItsAgent) {
  struct Case {
    bool other, forwarded;
    Tier tier;
    NodeKeeping local;
    std::optional<NodeKeeping> fleet;
    HistorySource want;
  };
  const Case cases[] = {
      // This node's own rows, or every node's: always here.
      {false, false, Tier::kRaw, kNone, kRollups, HistorySource::kLocal},
      // A node writing directly to the shared store: its raw rows are there.
      {true, false, Tier::kRaw, kRaw, std::nullopt, HistorySource::kLocal},
      // A node shipping to the shared store: its minutes are there, its raw rows on the node.
      {true, false, Tier::kMinute, kRollups, std::nullopt, HistorySource::kLocal},
      {true, false, Tier::kHour, kRollups, std::nullopt, HistorySource::kLocal},
      {true, false, Tier::kRaw, kRollups, std::nullopt, HistorySource::kAgent},
      // An agent with its own store and a fleet store: another node's minutes from the fleet's.
      {true, false, Tier::kMinute, kNone, kRollups, HistorySource::kFleet},
      {true, false, Tier::kRaw, kNone, kRollups, HistorySource::kAgent},
      {true, false, Tier::kRaw, kNone, kRaw, HistorySource::kFleet},
      // A node not shipped yet, or that no store knows: its agent.
      {true, false, Tier::kMinute, kNone, kNone, HistorySource::kAgent},
      {true, false, Tier::kRaw, kNone, std::nullopt, HistorySource::kAgent},
      // Forwarded once: answered where it lands, whatever it keeps.
      {true, true, Tier::kRaw, kNone, kRollups, HistorySource::kLocal},
  };
  for (const Case& c : cases) {
    HistoryRouteFacts f{c.other, c.forwarded, c.tier, c.local, c.fleet};
    EXPECT_EQ(choose_history_source(f), c.want)
        << "other " << c.other << " forwarded " << c.forwarded << " tier " << history::tier_name(c.tier)
        << " local " << c.local.written << c.local.rollups_only << " fleet "
        << (c.fleet ? fmt::format("{}{}", c.fleet->written, c.fleet->rollups_only) : "none");
  }
}

TEST(HistorySource, SpansReadAsPeopleSayThem) {
  constexpr std::int64_t kS = 1'000'000'000;
  EXPECT_EQ(span_text(-5 * kS), "0 s");
  EXPECT_EQ(span_text(42 * kS), "42 s");
  EXPECT_EQ(span_text(5 * 60 * kS + 7 * kS), "5 min");
  EXPECT_EQ(span_text(3 * 3600 * kS), "3 h");
  EXPECT_EQ(span_text(9 * 86400 * kS), "9 d");
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class HistoryForwardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fmt::format("/tmp/eacgm-forward-{}-{}", getpid(), ++serial_);
    std::filesystem::create_directories(dir_);
    token_file_ = dir_ + "/token";
    std::ofstream(token_file_) << "fleet-token-1\n";
    ::chmod(token_file_.c_str(), 0600);
    // Node b's raw intervals a minute ago, in its own store; node a's store knows only a.
    const std::int64_t t = (now_ns() / (10 * kS) - 6) * 10 * kS;
    write("b", "node-b", history::test::batch(t, 42, 7, 1000));
    write("a", "node-a", history::test::batch(t, 41, 3, 1000));
    start_b();
    b_url_ = fmt::format("http://127.0.0.1:{}", b_port_);
    put_agent("node-b", b_url_, now_ns() - 310 * kS);
    start(a_, reader("a"), "node-a", "fleet-token-1", {});
  }
  void TearDown() override {
    a_.stop();
    if (b_) b_->stop();
    std::filesystem::remove_all(dir_);
  }
  void write(const std::string& file, const std::string& node, const history::IntervalBatch& batch) {
    auto s = history::SqliteStore::open(dir_ + "/" + file + ".db");
    ASSERT_TRUE(s) << s.error();
    ASSERT_TRUE((*s)->write(node, batch));
  }
  void put_agent(const std::string& node, const std::string& url, std::int64_t seen) {
    auto s = history::SqliteStore::open(dir_ + "/a.db");
    ASSERT_TRUE(s) << s.error();
    history::StoredAgent agent{node, url, "test", seen - 60 * kS, seen, 10 * kS};
    ASSERT_TRUE((*s)->put_agent(agent));
  }
  std::shared_ptr<history::HistoryReader> reader(const std::string& file) {
    return std::make_shared<history::HistoryReader>("sqlite:" + dir_ + "/" + file + ".db",
                                                    history::Retention{}, 2);
  }
  void start(HttpServer& http, const std::shared_ptr<history::HistoryReader>& r, const std::string& node,
             const std::string& token, const std::string& token_file, std::uint16_t port = 0) {
    HistoryForwardOptions o;
    o.node = node;
    o.token = token;
    o.timeout = std::chrono::seconds(1);
    add_history_routes(http, r, {}, r, std::make_shared<HistoryForward>(o, r, r));
    ServerOptions so;
    so.address = "127.0.0.1";
    so.port = port;
    so.token_file = token_file;
    ASSERT_TRUE(http.start(so));
  }
  void start_b(std::uint16_t port = 0) {
    b_ = std::make_unique<HttpServer>();
    start(*b_, reader("b"), "node-b", "", token_file_, port);
    b_port_ = b_->port();
  }
  // node-b's functions over the last 10 minutes, asked of a.
  testing::Reply ask_a(const std::string& node = "node-b", const std::string& headers = "") {
    return get(a_.port(), "/api/v1/history/functions?since=10m&node=" + node, headers);
  }

  static constexpr std::int64_t kS = 1'000'000'000;
  static inline int serial_ = 0;
  std::string dir_, token_file_, b_url_;
  HttpServer a_;
  std::unique_ptr<HttpServer> b_;
  std::uint16_t b_port_ = 0;
};

std::uint64_t calls_of(const json& doc, const std::string& function) {
  if (!doc.contains("functions")) return 0;
  for (const json& f : doc["functions"])
    if (f["function"] == function) return f["calls"].get<std::uint64_t>();
  return 0;
}

TEST_F(HistoryForwardTest, AnotherNodesRawRowsComeFromItsAgentMarkedWithTheirSource) {
  const auto r = ask_a();
  ASSERT_EQ(r.status, 200) << r.body;
  json doc = json::parse(r.body);
  EXPECT_EQ(doc["source"], json({{"node", "node-b"}, {"agent", b_url_}})) << doc.dump();
  EXPECT_EQ(calls_of(doc, "cudaMemcpy"), 7u) << doc.dump();
  // The same document node b gives (with a's token), its source aside.
  const auto direct = get(b_port_, "/api/v1/history/functions?since=10m&node=node-b",
                          "Authorization: Bearer fleet-token-1\r\n");
  ASSERT_EQ(direct.status, 200) << direct.body;
  doc.erase("source");
  json mine = json::parse(direct.body);
  mine["window"].erase("from_ns");  // each answer's window ends at its own now
  mine["window"].erase("to_ns");
  doc["window"].erase("from_ns");
  doc["window"].erase("to_ns");
  EXPECT_EQ(doc, mine);
  // a's own rows, and a name no store knows, stay a's (no source).
  const json own = json::parse(ask_a("node-a").body);
  EXPECT_FALSE(own.contains("source"));
  EXPECT_EQ(calls_of(own, "cudaMemcpy"), 3u) << own.dump();
  const auto nobody = ask_a("node-x");
  EXPECT_EQ(nobody.status, 200) << nobody.body;
  EXPECT_FALSE(json::parse(nobody.body).contains("source"));
}

TEST_F(HistoryForwardTest, AForwardedRequestIsAnsweredWhereItLands) {
  const auto r = ask_a("node-b", std::string(kForwardedHeader) + ": node-c\r\n");
  ASSERT_EQ(r.status, 200) << r.body;
  const json doc = json::parse(r.body);
  EXPECT_FALSE(doc.contains("source"));
  EXPECT_EQ(calls_of(doc, "cudaMemcpy"), 0u) << "a's store has none of b's rows";
}

TEST_F(HistoryForwardTest, AnAgentThatIsDownIsAnErrorNamingItsNodeURLAndLastSeenThenAnsweredAgain) {
  b_->stop();
  const auto r = ask_a();
  EXPECT_EQ(r.status, 502) << r.body;
  const json doc = json::parse(r.body);
  EXPECT_EQ(
      doc["error"],
      fmt::format("node node-b's agent at {} did not answer: could not connect; last seen 5 min ago", b_url_))
      << doc.dump();
  EXPECT_EQ(doc["node"], "node-b");
  EXPECT_EQ(doc["agent"], b_url_);
  // Back on its port: answered again.
  start_b(b_port_);
  const auto again = ask_a();
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(calls_of(json::parse(again.body), "cudaMemcpy"), 7u);
}

TEST_F(HistoryForwardTest, AnAgentThatDoesNotAnswerInTimeIs504) {
  // A socket that listens and never accepts: the connection is made, no answer comes.
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string silent = fmt::format("http://127.0.0.1:{}", ntohs(addr.sin_port));
  put_agent("node-b", silent, now_ns());
  const auto r = ask_a();
  ::close(fd);
  EXPECT_EQ(r.status, 504) << r.body;
  EXPECT_NE(
      r.body.find(fmt::format("node node-b's agent at {} did not answer: no answer within 1 s", silent)),
      std::string::npos)
      << r.body;
}

TEST_F(HistoryForwardTest, AWrongTokenSaysTheFleetSharesOne) {
  HttpServer other;
  start(other, reader("a"), "node-a", "not-the-token", {});
  const auto r = get(other.port(), "/api/v1/history/functions?since=10m&node=node-b");
  other.stop();
  EXPECT_EQ(r.status, 502) << r.body;
  EXPECT_NE(r.body.find(fmt::format("node node-b's agent at {} answered 401", b_url_)), std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("share one token"), std::string::npos) << r.body;
}

TEST_F(HistoryForwardTest, ANodeKnownOnlyByItsRollupsWithoutAnAgentRowIsAnError) {
  // Node c's minutes came to a's store (its mark says so), and it never said where it answers.
  write("a", "node-c", history::test::batch((now_ns() / (10 * kS) - 6) * 10 * kS, 43, 1, 1000));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ + "/a.db").c_str(), &db), SQLITE_OK);
  const int rc = sqlite3_exec(db, "INSERT INTO meta(key, value) VALUES('shipped_to:node-c', 1)", nullptr,
                              nullptr, nullptr);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK);
  const auto r = ask_a("node-c");
  EXPECT_EQ(r.status, 502) << r.body;
  const json doc = json::parse(r.body);
  EXPECT_NE(doc["error"].get<std::string>().find("node node-c has no agent in the fleet store sqlite:"),
            std::string::npos)
      << doc.dump();
  EXPECT_TRUE(doc["agent"].is_null());
  // Its minutes are a's to answer.
  const auto minutes = get(a_.port(), "/api/v1/history/functions?since=3d&node=node-c");
  EXPECT_EQ(minutes.status, 200) << minutes.body;
}

}  // namespace
}  // namespace eacgm::server
