// The fleet shipper against a real PostgreSQL (the tests' throwaway server): a node's
// own SQLite store, written and maintained as the writer does, ships its minute and hour
// rows, job rollups and facts (never its raw intervals) by marks kept in its own store;
// a restart, a fleet store away and a lost mark each end with the same rows there, once;
// and the fleet store so filled answers the job report and the history's lists as one
// written directly by every node does.
#include "history/fleet_shipper.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "history/job_report_read.h"
#include "history/sqlite_store.h"
#include "job_batches.h"
#include "store_backends.h"

namespace eacgm::history {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace)

// interval() with an anomaly in the sixth interval of each 10 minutes, and a leak.
IntervalBatch with_events(const std::string& node, std::int64_t i) {
  IntervalBatch b = interval(node, i);
  if (i % 60 == 5) {
    AnomalyRecord a;
    a.t_ns = b.t_ns + kS;
    a.end_ns = a.t_ns + 5'000'000;
    a.process = b.processes[0].key;
    a.kind = "call";
    a.domain = "cudart";
    a.function = "cudaStreamSynchronize";
    a.score = 9;
    a.value = 5e6;
    a.median_ns = 1e5;
    b.anomalies.push_back(a);
  }
  if (i == 100) b.leaks.push_back(LeakRecord{b.processes[0].key, 0, 3, 4096});
  return b;
}

// What a store holds of its nodes' rollups (tier above `min_tier` - 1) and facts, in SQL
// both stores answer alike.
std::string holding(StoreBackend& b, int min_tier = 1) {
  std::string out;
  for (const Table* t : tables::kAll) {
    // The fleet store's own rollups (the namespace rollup, the calls per job) are made from
    // the rows shipped there.
    if (!t->tiered() || t->fleet_rollup) continue;
    out += fmt::format(
        "{}: {}\n", t->name,
        b.query(fmt::format("SELECT tier, count(*), min(t_ns), max(t_ns) FROM {} WHERE tier >= {} "
                            "GROUP BY tier ORDER BY tier",
                            t->name, min_tier)));
  }
  out += "calls: " +
         b.query(fmt::format("SELECT tier, sum(calls), sum(timed), sum(estimated), sum(length(latency)) FROM "
                             "functions WHERE tier "
                             ">= {} GROUP BY tier ORDER BY tier",
                             min_tier)) +
         "\n";
  out +=
      "processes: " +
      b.query("SELECT pid, start_ns, comm, first_ns, last_ns, exited, job, pod FROM processes ORDER BY pid") +
      "\n";
  out += "anomalies: " +
         b.query("SELECT t_ns, end_ns, pid, kind, CAST(score AS INTEGER) FROM anomalies ORDER BY t_ns") +
         "\n";
  out += "leaks: " + b.query("SELECT t_ns, pid, device, allocations, bytes FROM leaks ORDER BY t_ns");
  return out;
}

class FleetShipperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(fleet_.fresh(), "");
    ASSERT_EQ(local_.fresh(), "");
    auto s = SqliteStore::open(local_.path());
    ASSERT_TRUE(s) << s.error();
    store_ = std::move(s).value();
  }
  // node-a's intervals [from, to) into its own store, then maintained as at their end.
  void write(std::int64_t from, std::int64_t to) {
    for (std::int64_t i = from; i < to; ++i) ASSERT_TRUE(store_->write("node-a", with_events("node-a", i)));
    now_ = kT0 + to * 10 * kS;
    ASSERT_TRUE(store_->maintain("node-a", now_, Retention{}));
  }
  FleetShipperOptions options() {
    FleetShipperOptions o;
    o.node = "node-a";
    o.local_path = local_.path();
    o.fleet_url = PostgresBackend::cluster().url(fleet_.database());
    o.retention.max_bytes = 0;
    o.now_ns = [this] { return now_; };
    return o;
  }
  void expect_same_rows() {
    EXPECT_EQ(holding(fleet_), holding(local_));
    // Every hour in the job rollups is in the namespace rollup (processes and their
    // namespace known), whichever came first.
    EXPECT_EQ(
        fleet_.query("SELECT count(DISTINCT t_ns) FROM namespace_gpus"),
        fleet_.query("SELECT count(DISTINCT j.t_ns) FROM job_gpus j JOIN processes p ON p.node = j.node "
                     "AND p.pid = j.pid AND p.start_ns = j.start_ns WHERE p.namespace <> ''"));
    // Every hour row of functions is in the calls per job, under its process's job as the
    // fleet store knows it, whichever came first.
    EXPECT_EQ(
        fleet_.query("SELECT t.t_ns, coalesce(p.job, ''), sum(t.calls), count(DISTINCT t.pid) FROM functions "
                     "t LEFT JOIN processes p ON p.node = t.node AND p.pid = t.pid AND p.start_ns = "
                     "t.start_ns WHERE t.tier = 2 GROUP BY 1, 2 ORDER BY 1, 2"),
        fleet_.query("SELECT t_ns, job, sum(calls) FILTER (WHERE domain <> 0), max(processes) FILTER "
                     "(WHERE domain = 0) FROM job_functions GROUP BY 1, 2 ORDER BY 1, 2"));
    // Some rows of each kind (the comparison is not of two empty stores).
    EXPECT_NE(fleet_.query("SELECT count(*) FROM job_functions"), "0");
    EXPECT_NE(fleet_.query("SELECT count(*) FROM functions WHERE tier = 1"), "0");
    EXPECT_NE(fleet_.query("SELECT count(*) FROM job_calls"), "0");
    EXPECT_NE(fleet_.query("SELECT count(*) FROM anomalies"), "0");
  }
  PostgresBackend fleet_;
  SqliteBackend local_;
  std::unique_ptr<Store> store_;
  std::int64_t now_ = kT0;
};

TEST_F(FleetShipperTest, ShipsTheRollupsAndFactsNeverTheRawIntervals) {
  write(0, 720);  // two hours
  FleetShipper shipper(options(), nullptr);
  ASSERT_TRUE(shipper.ship_once());
  expect_same_rows();
  EXPECT_EQ(holding(fleet_, 0), holding(fleet_, 1)) << "raw rows in the fleet store";
  EXPECT_NE(local_.query("SELECT count(*) FROM functions WHERE tier = 0"), "0");
  EXPECT_EQ(fleet_.query("SELECT count(*) FROM intervals"), "0");
  // The hour rows and the job rollups of both hours, the leak, every process.
  EXPECT_EQ(fleet_.query("SELECT count(DISTINCT t_ns) FROM job_gpus"), "2");
  EXPECT_EQ(fleet_.query("SELECT count(*) FROM leaks"), "1");
  EXPECT_EQ(fleet_.query("SELECT count(*) FROM processes"), "2");
  // The node's clock against the server's, and the marks the fleet's readers use.
  EXPECT_EQ(fleet_.query("SELECT count(*) FROM node_clocks"), "1");
  EXPECT_EQ(fleet_.query("SELECT key, value FROM meta WHERE key LIKE '%:node-a' ORDER BY key COLLATE \"C\""),
            fmt::format(
                "rolled_1h:node-a|{0}\nrolled_1m:node-a|{0}\nrolled_jobs:node-a|{0}\nshipped_to:node-a|{0}\n"
                "totals_from:node-a|{1}\nwritten_to:node-a|{0}",
                kT0 + 7200 * kS, 0));
  const FleetStats stats = shipper.stats();
  EXPECT_TRUE(stats.up);
  EXPECT_GT(stats.rows_shipped, 0u);
  EXPECT_GT(stats.bytes_sent, 0u);
  EXPECT_EQ(stats.behind_seconds, 0);
  EXPECT_TRUE(stats.clock_offset_seconds);
}

// What each store says it keeps of the node (the history routes' drill-down asks it): its
// own store every row, the fleet store its rollups only, and nothing of a node neither knows.
TEST_F(FleetShipperTest, EachStoreSaysWhatItKeepsOfTheNode) {
  write(0, 30);
  auto before = fleet_.open();
  ASSERT_TRUE(before) << before.error();
  auto none = (*before)->node_keeping("node-a");
  ASSERT_TRUE(none) << none.error();
  EXPECT_FALSE(none->written) << "nothing shipped yet";
  FleetShipper shipper(options(), nullptr);
  ASSERT_TRUE(shipper.ship_once());
  auto fleet = fleet_.open();
  ASSERT_TRUE(fleet) << fleet.error();
  for (auto [store, rollups_only] : {std::pair{store_.get(), false}, std::pair{fleet->get(), true}}) {
    auto k = store->node_keeping("node-a");
    ASSERT_TRUE(k) << k.error();
    EXPECT_TRUE(k->written) << store->description();
    EXPECT_EQ(k->rollups_only, rollups_only) << store->description();
    auto other = store->node_keeping("node-b");
    ASSERT_TRUE(other) << other.error();
    EXPECT_FALSE(other->written) << store->description();
    EXPECT_FALSE(other->rollups_only) << store->description();
  }
}

// Each table's mark moves on after the fleet store committed: a shipper started again
// (an agent restarted) ships what came since, once; a round with nothing new ships no row;
// marks lost after a commit (a crash) ship rows again that change nothing there.
TEST_F(FleetShipperTest, ResumesFromItsMarksWithoutDuplicates) {
  write(0, 360);
  {
    FleetShipper first(options(), nullptr);
    ASSERT_TRUE(first.ship_once());
  }
  write(360, 720);
  FleetShipper again(options(), nullptr);
  ASSERT_TRUE(again.ship_once());
  expect_same_rows();
  const std::uint64_t rows = again.stats().rows_shipped;
  EXPECT_GT(rows, 0u);
  ASSERT_TRUE(again.ship_once());
  EXPECT_EQ(again.stats().rows_shipped, rows) << "nothing new, nothing shipped";
  ASSERT_EQ(local_.exec("DELETE FROM meta WHERE key LIKE 'shipped_%'"), "");
  FleetShipper lost(options(), nullptr);
  ASSERT_TRUE(lost.ship_once());
  EXPECT_GT(lost.stats().rows_shipped, rows);
  expect_same_rows();
}

// A fleet store away while the node goes on: each round fails and ships nothing; once it
// is back, every row made meanwhile arrives, in bounded transactions (10 minutes of
// minute rows, an hour of hour rows, one row of facts at a time here).
TEST_F(FleetShipperTest, AFleetStoreAwayGetsEveryRowAfterwardsInBoundedTransactions) {
  FleetShipperOptions o = options();
  o.hour_chunk_ns = 3600 * kS;
  o.fact_rows = 1;
  FleetShipper shipper(o, nullptr);
  write(0, 360);
  ASSERT_TRUE(shipper.ship_once());
  const std::uint64_t before = shipper.stats().shipments;
  ASSERT_EQ(PostgresBackend::cluster().stop(), "");
  write(360, 1080);  // two hours more
  EXPECT_FALSE(shipper.ship_once());
  EXPECT_FALSE(shipper.stats().up);
  EXPECT_EQ(shipper.stats().shipments, before);
  EXPECT_EQ(shipper.stats().behind_seconds, 7200);
  ASSERT_EQ(PostgresBackend::cluster().start_server(), "");
  ASSERT_TRUE(shipper.ship_once());
  EXPECT_TRUE(shipper.stats().up);
  expect_same_rows();
  // 12 of minutes, 2 of hours, 2 of job rollups, 2 processes, 12 anomalies.
  EXPECT_EQ(shipper.stats().shipments - before, 30u);
}

// Two nodes, each with its own store shipping to the fleet store, against one store both
// write directly: the same job report (figure for figure) over whole hours from the
// hour tier and over whole minutes from the finer tiers, and the same lists.
TEST(FleetShipperAgrees, WithAStoreWrittenDirectly) {
  PostgresBackend direct_db, fleet_db;
  ASSERT_EQ(direct_db.fresh(), "");
  ASSERT_EQ(fleet_db.fresh(), "");
  auto direct = direct_db.open();
  ASSERT_TRUE(direct) << direct.error();
  const std::int64_t end = kT0 + 7200 * kS;
  const std::int64_t now = end + 3600 * kS;
  std::vector<std::unique_ptr<SqliteBackend>> locals;
  for (const char* node : {"node-a", "node-b"}) {
    locals.push_back(std::make_unique<SqliteBackend>());
    ASSERT_EQ(locals.back()->fresh(), "");
    auto local = SqliteStore::open(locals.back()->path());
    ASSERT_TRUE(local) << local.error();
    for (std::int64_t i = 0; i < 720; ++i) {
      const IntervalBatch b = with_events(node, i);
      ASSERT_TRUE((*local)->write(node, b));
      ASSERT_TRUE((*direct)->write(node, b));
    }
    ASSERT_TRUE((*local)->maintain(node, now, Retention{}));
    ASSERT_TRUE((*direct)->maintain(node, now, Retention{}));
    FleetShipperOptions o;
    o.node = node;
    o.local_path = locals.back()->path();
    o.fleet_url = PostgresBackend::cluster().url(fleet_db.database());
    o.now_ns = [] { return kT0 + 3 * 3600 * kS; };  // now, an hour past the rows
    FleetShipper shipper(o, nullptr);
    ASSERT_TRUE(shipper.ship_once());
  }
  auto fleet = fleet_db.open();
  ASSERT_TRUE(fleet) << fleet.error();
  std::vector<Store*> stores = {direct->get(), fleet->get()};
  for (Tier tier : {Tier::kRaw, Tier::kMinute, Tier::kHour}) {
    SCOPED_TRACE(tier_name(tier));
    // Whole hours for the hour tier, else whole minutes from the tenth.
    const HistoryQuery q = window(tier == Tier::kHour ? kT0 : kT0 + 600 * kS, end);
    std::vector<std::string> seen;
    for (Store* store : stores) {
      std::string out;
      auto rows = read_job_report(*store, q, {}, tier, ReportOptions{0.05, 2.0, "USD"});
      ASSERT_TRUE(rows) << rows.error();
      for (const auto& r : *rows) out += figures(r) + "\n";
      auto functions = store->functions(q, tier);
      ASSERT_TRUE(functions) << functions.error();
      for (const auto& f : *functions) {
        out += fmt::format("{}/{} {} {} {} {} p50 {}\n", f.domain, f.function, f.calls, f.timed, f.estimated,
                           f.latency.count, f.latency.quantile(0.5));
      }
      auto processes = store->processes(q, tier);
      ASSERT_TRUE(processes) << processes.error();
      for (const auto& p : processes->rows)
        out += fmt::format("{} {} {} {}\n", p.node, p.record.key.pid, p.calls, p.record.job);
      auto anomalies = store->anomalies(q);
      ASSERT_TRUE(anomalies) << anomalies.error();
      out += fmt::format("{} anomalies\n", anomalies->rows.size());
      seen.push_back(out);
    }
    EXPECT_EQ(seen[0], seen[1]);
    EXPECT_NE(seen[0].find("train"), std::string::npos) << seen[0];
  }
}

}  // namespace
}  // namespace eacgm::history
