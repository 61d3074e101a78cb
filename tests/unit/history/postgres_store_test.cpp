// The PostgreSQL history where it differs from SQLite's (the checks both answer alike are
// store_test.cpp's), against a real server (a throwaway cluster): each write measures the
// node's clock against the server's; a retried batch is written once; it answers as the
// SQLite store does; nodes writing at once make their names without waiting on each
// other; a lost server fails the call and the next call connects again; the password
// never shows.
#include "history/postgres_store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <set>
#include <string>
#include <thread>

#include "history/pg_conn.h"
#include "history/sqlite_store.h"
#include "legacy_schema.h"
#include "store_backends.h"
#include "store_batches.h"

namespace eacgm::history {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace)

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(backend_.fresh(), "");
    cluster_ = &PostgresBackend::cluster();
    db_ = backend_.database();
  }
  std::unique_ptr<PostgresStore> open() {
    auto s = PostgresStore::open(cluster_->url(db_));
    EXPECT_TRUE(s) << s.error();
    return s ? std::move(s).value() : nullptr;
  }
  PostgresBackend backend_;
  PgCluster* cluster_ = nullptr;
  std::string db_;
};

// The server and the test share one clock: the offset each write measures is within its
// bound of zero, the node's one row of node_clocks says so on the server's clock, and
// the bound is the best of the samples (no larger than the first write's).
TEST_F(PostgresStoreTest, EachWriteMeasuresTheNodeClockAgainstTheServers) {
  auto store = open();
  ASSERT_TRUE(store);
  std::int64_t first_bound = 0;
  for (int i = 0; i < 5; ++i) {
    const auto before = std::chrono::system_clock::now();
    auto st = store->write("node-a", batch(kT0 + kS * 10 * i, 42, 10, 1000));
    ASSERT_TRUE(st) << st.error();
    const auto after = std::chrono::system_clock::now();
    auto c = store->clock();
    ASSERT_TRUE(c);
    EXPECT_LE(std::llabs(c->offset_ns), c->uncertainty_ns) << c->offset_ns;
    EXPECT_GT(c->uncertainty_ns, 0);
    // Half the server's microsecond at least; no more than the whole write took.
    EXPECT_GE(c->uncertainty_ns, 500);
    EXPECT_LE(c->uncertainty_ns,
              std::chrono::duration_cast<std::chrono::nanoseconds>(after - before).count() + 1000);
    if (i == 0) first_bound = c->uncertainty_ns;
    EXPECT_LE(c->uncertainty_ns, first_bound);
  }
  auto c = store->clock();
  ASSERT_TRUE(c);
  auto [rc, row] =
      cluster_->psql(db_,
                     "SELECT n.name, c.measured_ns, c.offset_ns, c.uncertainty_ns FROM node_clocks c "
                     "JOIN names n ON n.id = c.node");
  ASSERT_EQ(rc, 0) << row;
  EXPECT_EQ(row, "node-a|" + std::to_string(c->measured_ns) + "|" + std::to_string(c->offset_ns) + "|" +
                     std::to_string(c->uncertainty_ns));
  // Another node has its own row.
  auto other = open();
  ASSERT_TRUE(other);
  ASSERT_TRUE(other->write("node-b", batch(kT0, 43, 10, 1000)));
  auto [count_rc, count] = cluster_->psql(db_, "SELECT count(*) FROM node_clocks");
  ASSERT_EQ(count_rc, 0) << count;
  EXPECT_EQ(count, "2");
}

TEST_F(PostgresStoreTest, ABatchWrittenAgainCountsOnceAndAnotherAtTheSameInstantAdds) {
  auto store = open();
  ASSERT_TRUE(store);
  const IntervalBatch b = batch(kT0, 1, 100, 1000);
  ASSERT_TRUE(store->write("n", b));
  ASSERT_TRUE(store->write("n", b)) << "a retry after a lost commit answer";
  auto once = store->functions(window(kT0, kT0 + 60 * kS), Tier::kRaw);
  ASSERT_TRUE(once);
  ASSERT_EQ(once->size(), 1u);
  EXPECT_EQ(once->front().calls, 100u);
  IntervalBatch other = batch(kT0, 1, 50, 5000);
  other.span_ns = 5 * kS;
  auto st = store->write("n", other);
  ASSERT_TRUE(st) << st.error();
  auto both = store->functions(window(kT0, kT0 + 60 * kS), Tier::kRaw);
  auto kernels = store->kernels(window(kT0, kT0 + 60 * kS), Tier::kRaw);
  ASSERT_TRUE(both && kernels);
  EXPECT_EQ(both->front().calls, 150u);
  EXPECT_EQ(both->front().latency.count, 150u);
  EXPECT_NEAR(both->front().latency.quantile(0.9), 5040, 5040 * 0.02);
  EXPECT_EQ(kernels->front().launches, 300u);
}

// A batch of every kind of row for `node`, varied by `i`.
IntervalBatch full_batch(const std::string& node, int i) {
  IntervalBatch b = batch(kT0 + kS * 10 * i, 100 + static_cast<std::uint32_t>(i % 3), 10 + i, 1000 + 97 * i);
  b.mode = "per-call";
  ProcessRecord p2;
  p2.key = {200, kT0 - 5 * kS};
  p2.comm = node == "node-a" ? "eval" : "train";
  p2.cmdline = "python3 eval.py";
  p2.world_size = 8;
  p2.first_ns = b.t_ns;
  p2.last_ns = b.t_ns + b.span_ns;
  p2.exited = i == 11;
  b.processes.push_back(p2);
  FunctionRecord f = b.functions.front();
  f.process = p2.key;
  f.domain = "nccl";
  f.function = "ncclAllReduce";
  f.calls = 3 + i % 4;
  f.estimated = f.calls;
  f.calls_variance = 0.5 * i;
  b.functions.push_back(f);
  b.kernels.push_back({"void at::native::vectorized_elementwise_kernel<4, float>(int, T1)", 7});
  GpuRecord g = b.gpus.front();
  g.index = 1;
  g.uuid = "GPU-2";
  g.samples = 4 + i % 3;
  g.util_mean = 10.0 * (i % 7);
  g.memory_used_mean = 1e9 * (1 + i % 2);
  g.memory_used_max = 3ULL << 30;
  g.memory_total = 80ULL << 30;
  g.power_mean_w = 300.5;
  g.power_max_w = 400 + i;
  g.temperature_max = 60 + i % 5;
  b.gpus.push_back(g);
  b.gpu_processes.push_back({1, p2.key, 5, 1ULL << 30, 42.5, 2, 1500.0, 1500.0});
  if (i % 5 == 0)
    b.anomalies.push_back(
        {b.t_ns + kS, b.t_ns + 2 * kS, p2.key, "call", "nccl", "ncclAllReduce", 9.5, 1.5e6, 2e5});
  if (i == 11) b.leaks.push_back({p2.key, 0, 3, 3ULL << 20});
  return b;
}

TEST_F(PostgresStoreTest, AnswersAsTheSqliteStoreDoes) {
  auto pg = open();
  ASSERT_TRUE(pg);
  const std::string path = "/tmp/eacgm-pg-compare-" + std::to_string(getpid()) + ".db";
  std::filesystem::remove(path);
  auto lite = SqliteStore::open(path);
  ASSERT_TRUE(lite) << lite.error();
  for (int i = 0; i < 24; ++i) {
    for (const std::string node : {"node-a", "node-b"}) {
      const IntervalBatch b = full_batch(node, i);
      ASSERT_TRUE(pg->write(node, b));
      ASSERT_TRUE((*lite)->write(node, b));
    }
  }
  const std::int64_t now = kT0 + kS * 10 * 24;
  for (const std::string node : {"node-a", "node-b"}) {
    ASSERT_TRUE(pg->maintain(node, now, Retention{}));
    ASSERT_TRUE((*lite)->maintain(node, now, Retention{}));
  }
  std::vector<HistoryQuery> queries;
  for (int v = 0; v < 5; ++v) {
    HistoryQuery q = window(kT0 + 10 * kS, now);
    if (v == 1) q.node = "node-b";
    if (v == 2) q.pid = 200;
    if (v == 3) q.comm = "eval";
    if (v == 4) q = window(kT0 + 60 * kS, kT0 + 120 * kS);
    queries.push_back(q);
  }
  for (const auto& q : queries) {
    for (Tier tier : {Tier::kRaw, Tier::kMinute}) {
      SCOPED_TRACE(std::string(tier_name(tier)) + " node " + q.node.value_or("*") + " pid " +
                   std::to_string(q.pid.value_or(0)) + " comm " + q.comm.value_or("*"));
      auto a = pg->functions(q, tier);
      auto b = (*lite)->functions(q, tier);
      ASSERT_TRUE(a && b) << (a ? b.error() : a.error());
      ASSERT_EQ(a->size(), b->size());
      EXPECT_FALSE(a->empty());
      for (std::size_t i = 0; i < a->size(); ++i) {
        const auto& x = (*a)[i];
        const auto& y = (*b)[i];
        EXPECT_EQ(x.domain + x.function, y.domain + y.function);
        EXPECT_EQ(x.calls, y.calls);
        EXPECT_EQ(x.errors, y.errors);
        EXPECT_EQ(x.bytes, y.bytes);
        EXPECT_EQ(x.timed, y.timed);
        EXPECT_EQ(x.estimated, y.estimated);
        EXPECT_DOUBLE_EQ(x.calls_variance, y.calls_variance);
        EXPECT_EQ(encode(x.latency), encode(y.latency));
      }
      auto pa = pg->processes(q, tier);
      auto pb = (*lite)->processes(q, tier);
      ASSERT_TRUE(pa && pb) << (pa ? pb.error() : pa.error());
      auto key = [](const StoredProcess& p) {
        return p.node + "/" + std::to_string(p.record.key.pid) + "/" + std::to_string(p.calls) + "/" +
               std::to_string(p.errors) + "/" + p.record.comm + "/" + p.record.cmdline + "/" +
               std::to_string(p.record.rank.value_or(-1)) + "/" +
               std::to_string(p.record.world_size.value_or(-1)) + "/" + std::to_string(p.record.first_ns) +
               "/" + std::to_string(p.record.last_ns) + "/" + (p.record.exited ? "x" : "-");
      };
      std::multiset<std::string> ka, kb;
      for (const auto& p : pa->rows) ka.insert(key(p));
      for (const auto& p : pb->rows) kb.insert(key(p));
      EXPECT_EQ(ka, kb);
      auto ga = pg->gpus(q, tier);
      auto gb = (*lite)->gpus(q, tier);
      ASSERT_TRUE(ga && gb) << (ga ? gb.error() : ga.error());
      auto gkey = [](const StoredGpuPoint& p) {
        return p.node + "/" + std::to_string(p.gpu) + "/" + p.uuid + "/" + p.name + "/" +
               std::to_string(p.t_ns) + "/" + std::to_string(p.util_mean.value_or(-1)) + "/" +
               std::to_string(p.util_max.value_or(0)) + "/" +
               std::to_string(p.memory_used_mean.value_or(-1)) + "/" +
               std::to_string(p.memory_used_max.value_or(0)) + "/" +
               std::to_string(p.power_mean_w.value_or(-1)) + "/" +
               std::to_string(p.power_max_w.value_or(-1)) + "/" +
               std::to_string(p.temperature_max.value_or(0));
      };
      std::multiset<std::string> gka, gkb;
      for (const auto& p : *ga) gka.insert(gkey(p));
      for (const auto& p : *gb) gkb.insert(gkey(p));
      EXPECT_EQ(gka, gkb);
      auto ka2 = pg->kernels(q, tier);
      auto kb2 = (*lite)->kernels(q, tier);
      ASSERT_TRUE(ka2 && kb2);
      ASSERT_EQ(ka2->size(), kb2->size());
      for (std::size_t i = 0; i < ka2->size(); ++i) {
        EXPECT_EQ((*ka2)[i].kernel, (*kb2)[i].kernel);
        EXPECT_EQ((*ka2)[i].launches, (*kb2)[i].launches);
      }
    }
    auto aa = pg->anomalies(q);
    auto ab = (*lite)->anomalies(q);
    ASSERT_TRUE(aa && ab) << (aa ? ab.error() : aa.error());
    ASSERT_EQ(aa->rows.size(), ab->rows.size());
    EXPECT_EQ(aa->total, ab->total);
    for (std::size_t i = 0; i < aa->rows.size(); ++i) {
      EXPECT_EQ(aa->rows[i].record.t_ns, ab->rows[i].record.t_ns);
      EXPECT_EQ(aa->rows[i].record.function, ab->rows[i].record.function);
      EXPECT_DOUBLE_EQ(aa->rows[i].record.value, ab->rows[i].record.value);
    }
    auto la = pg->leaks(q);
    auto lb = (*lite)->leaks(q);
    ASSERT_TRUE(la && lb) << (la ? lb.error() : la.error());
    ASSERT_EQ(la->rows.size(), lb->rows.size());
    EXPECT_EQ(la->total, lb->total);
    for (std::size_t i = 0; i < la->rows.size(); ++i) {
      EXPECT_EQ(la->rows[i].node, lb->rows[i].node);
      EXPECT_EQ(la->rows[i].comm, lb->rows[i].comm);
      EXPECT_EQ(la->rows[i].record.bytes, lb->rows[i].record.bytes);
    }
  }
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
}

TEST_F(PostgresStoreTest, NodesWritingAtOnceMakeTheirNamesWithoutWaitingOnEachOther) {
  std::vector<std::thread> nodes;
  nodes.reserve(4);
  std::atomic<int> failures{0};
  for (int n = 0; n < 4; ++n) {
    nodes.emplace_back([&, n] {
      auto s = PostgresStore::open(cluster_->url(db_));
      if (!s) {
        ++failures;
        return;
      }
      for (int i = 0; i < 20; ++i) {
        IntervalBatch b = batch(kT0 + kS * 10 * i, 1, 10, 100);
        // Names new to every node at once, in different orders.
        for (int k = 0; k < 30; ++k) b.kernels.push_back({"k" + std::to_string((k * (n + 1) + i) % 40), 1});
        if (auto st = (*s)->write("node-" + std::to_string(n), b); !st) {
          ++failures;
          ADD_FAILURE() << st.error();
        }
      }
    });
  }
  for (auto& t : nodes) t.join();
  EXPECT_EQ(failures.load(), 0);
  auto store = open();
  ASSERT_TRUE(store);
  auto all = store->functions(window(kT0, kT0 + 3600 * kS), Tier::kRaw);
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(all->front().calls, 4u * 20 * 10);
  auto procs = store->processes(window(kT0, kT0 + 3600 * kS), Tier::kRaw);
  ASSERT_TRUE(procs);
  EXPECT_EQ(procs->rows.size(), 4u);
  EXPECT_EQ(procs->totals.processes, 4u);
}

TEST_F(PostgresStoreTest, ALostServerFailsTheCallAndTheNextCallConnectsAgain) {
  auto store = open();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->write("n", batch(kT0, 1, 10, 100)));
  ASSERT_EQ(cluster_->stop(), "");
  auto down = store->write("n", batch(kT0 + 10 * kS, 1, 20, 100));
  EXPECT_FALSE(down);
  auto still = store->write("n", batch(kT0 + 10 * kS, 1, 20, 100));
  EXPECT_FALSE(still);
  EXPECT_FALSE(store->functions(window(kT0, kT0 + 60 * kS), Tier::kRaw));
  for (const auto& e : {down.error(), still.error()}) {
    EXPECT_EQ(e.find(PgCluster::kPassword), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  ASSERT_EQ(cluster_->start_server(), "");
  auto back = store->write("n", batch(kT0 + 10 * kS, 1, 20, 100));
  ASSERT_TRUE(back) << back.error();
  auto all = store->functions(window(kT0, kT0 + 60 * kS), Tier::kRaw);
  ASSERT_TRUE(all) << all.error();
  EXPECT_EQ(all->front().calls, 30u);
}

TEST_F(PostgresStoreTest, ThePasswordNeverShows) {
  const std::string port = std::to_string(cluster_->port());
  struct Case {
    std::string url, secret, shows;
  };
  const Case cases[] = {
      // The password is wrong.
      {"postgresql://eacgm:Wrong-pw-4711@127.0.0.1:" + port + "/" + db_, "Wrong-pw-4711",
       "password authentication failed"},
      {"host=127.0.0.1 port=" + port + " user=eacgm password='Kv pass 77' dbname=" + db_, "Kv pass 77",
       "password authentication failed"},
      // Nothing listens there.
      {"postgresql://eacgm:Unreach-31337@127.0.0.1:1/x", "Unreach-31337",
       "postgresql://eacgm:***@127.0.0.1:1/x"},
      // libpq echoes what it cannot parse.
      {"postgresql://eacgm:Pct-pw%zz@127.0.0.1:" + port + "/x", "Pct-pw", "store postgresql://eacgm:***@"},
      {"host=127.0.0.1 password=Kv-unparsed-9 dbname", "Kv-unparsed-9", "store host=127.0.0.1 password=***"},
  };
  for (const auto& c : cases) {
    auto s = PostgresStore::open(c.url);
    ASSERT_FALSE(s) << c.url;
    EXPECT_EQ(s.error().find(c.secret), std::string::npos) << s.error();
    EXPECT_NE(s.error().find(c.shows), std::string::npos) << s.error();
    EXPECT_EQ(s.error().find('\n'), std::string::npos) << s.error();
  }
  auto ok = PostgresStore::open(cluster_->url(db_));
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ((*ok)->description().find(PgCluster::kPassword), std::string::npos);
}

// The interval tables are partitioned by tier, each tier by day (docs/history.md): a
// node's maintenance makes today's and the next two days' tables; a write older than any
// day there (a node back after an outage) makes its day and keeps its rows; retention
// drops a tier's days once they have passed its window (whole days: a row stays until
// its day has), and a day dropped is made again when written again.
TEST_F(PostgresStoreTest, IntervalTablesArePartitionedByTierAndDayAndRetentionDropsWholeDays) {
  auto store = open();
  ASSERT_TRUE(store);
  auto sql = [this](const std::string& q) {
    auto [rc, out] = cluster_->psql(db_, q);
    EXPECT_EQ(rc, 0) << out;
    return out;
  };
  auto days = [&sql](const std::string& parent) {
    return sql(
        "SELECT string_agg(c.relname, ' ' ORDER BY c.relname) FROM pg_inherits i JOIN pg_class c ON "
        "c.oid = i.inhrelid WHERE i.inhparent = '" +
        parent + "'::regclass");
  };
  EXPECT_EQ(sql("SELECT relkind FROM pg_class WHERE relname IN ('functions', 'functions_t0', 'gpus_t2', "
                "'namespace_gpus') ORDER BY relname"),
            "p\np\np\np");
  ASSERT_TRUE(store->write("n", batch(kT0, 1, 10, 100)));  // 2026-11-01, a day's start
  ASSERT_TRUE(store->maintain("n", kT0 + 10 * kS, Retention{}));
  EXPECT_EQ(days("functions_t0"), "functions_t0_d20261101 functions_t0_d20261102 functions_t0_d20261103");
  EXPECT_EQ(days("job_gpus_t2"), "job_gpus_t2_d20261101 job_gpus_t2_d20261102 job_gpus_t2_d20261103");
  // Ten days late.
  auto st = store->write("n", batch(kT0 - 10 * kDay + 30 * kS, 2, 7, 100));
  ASSERT_TRUE(st) << st.error();
  EXPECT_EQ(sql("SELECT count(*), sum(calls) FROM functions_t0_d20261022"), "1|7");
  EXPECT_EQ(sql("SELECT count(*) FROM functions WHERE tier = 0"), "2");
  // Three days on, raw rows kept a day: the days that ended a day ago or before go whole.
  Retention r;
  r.raw_ns = kDay;
  ASSERT_TRUE(store->maintain("n", kT0 + 3 * kDay, r));
  EXPECT_EQ(days("functions_t0"),
            "functions_t0_d20261103 functions_t0_d20261104 functions_t0_d20261105 functions_t0_d20261106");
  EXPECT_EQ(sql("SELECT count(*) FROM functions WHERE tier = 0"), "0");
  // The minutes' days (kept 7 days) stay.
  EXPECT_NE(days("functions_t1").find("functions_t1_d20261101"), std::string::npos);
  // The same late node again: its day is made again.
  st = store->write("n", batch(kT0 - 10 * kDay + 40 * kS, 2, 5, 100));
  ASSERT_TRUE(st) << st.error();
  EXPECT_EQ(sql("SELECT count(*) FROM functions_t0_d20261022"), "1");
}

// A reader in the middle of a long query holds its tables: the write that must make a new
// day's table gives up after the lock timeout (an error, the batch spooled and written
// again) instead of waiting behind it with every query queued after; once the reader is
// done the same write goes through.
TEST_F(PostgresStoreTest, ADayTableWaitsForAReaderOnlyUpToTheLockTimeout) {
  auto store = open();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->write("n", batch(kT0, 1, 10, 100)));
  auto reader = PgConn::connect(cluster_->url(db_));
  ASSERT_TRUE(reader) << reader.error();
  ASSERT_TRUE(reader->exec("BEGIN"));
  auto held = reader->query("SELECT count(*) FROM functions");
  ASSERT_TRUE(held) << held.error();
  // Five days on: a day with no table yet.
  auto write =
      std::async(std::launch::async, [&] { return store->write("n", batch(kT0 + 5 * kDay, 2, 7, 100)); });
  const bool returned = write.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  ASSERT_TRUE(reader->exec("COMMIT"));
  ASSERT_TRUE(returned) << "the write waited behind the reader";
  const Status st = write.get();
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().find("lock timeout"), std::string::npos) << st.error();
  auto again = store->write("n", batch(kT0 + 5 * kDay, 2, 7, 100));
  ASSERT_TRUE(again) << again.error();
  auto [rc, out] = cluster_->psql(db_, "SELECT sum(calls) FROM functions_t0_d20261106");
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(out, "7");
}

// A window's rows are read from its days' tables alone: the plan of a day's hour rows
// names that day's table of tier 2 and no other.
TEST_F(PostgresStoreTest, AWindowReadsOnlyItsDaysTables) {
  auto store = open();
  ASSERT_TRUE(store);
  for (int d = 0; d < 3; ++d) ASSERT_TRUE(store->write("n", batch(kT0 + d * kDay, 1, 10, 100)));
  auto maintained = store->maintain("n", kT0 + 3 * kDay, Retention{});
  ASSERT_TRUE(maintained) << maintained.error();
  auto [rc, plan] = cluster_->psql(
      db_, "EXPLAIN (COSTS OFF) SELECT sum(calls) FROM functions WHERE tier = 2 AND t_ns >= " +
               std::to_string(kT0 + kDay) + " AND t_ns < " + std::to_string(kT0 + kDay + 3600 * kS));
  ASSERT_EQ(rc, 0) << plan;
  EXPECT_NE(plan.find("functions_t2_d20261102"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("functions_t2_d20261101"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("functions_t2_d20261103"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("functions_t0"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("functions_t1"), std::string::npos) << plan;
}

// A store written at version 9 (its literal SQL, rows of every tier over several days)
// is migrated to partitioned tables in one step: every row kept, the old tables gone,
// and the namespace rollup made from its job rollups.
TEST_F(PostgresStoreTest, AVersion9StoreIsMigratedToPartitionedTablesKeepingEveryRow) {
  const std::string t = std::to_string(kT0);
  const std::string h = std::to_string(3600 * kS);
  std::string old = legacy_schema_sql("postgres", 9) +
                    "INSERT INTO meta(key, value) VALUES('schema_version', 9);"
                    "INSERT INTO names(name) VALUES('node-a'), ('cudart'), ('f'), ('H100'), ('GPU-0');"
                    "INSERT INTO processes(node, pid, start_ns, first_ns, last_ns, namespace, job, pod) "
                    "VALUES(1, 7, 100, " +
                    t + ", " + t + ", 'ml', 'j1', 'p0'), (1, 8, 100, " + t + ", " + t + ", 'ml', '', 'nb');";
  // Raw rows on one day, minutes on two, hours on five; a GPU's hour rows.
  for (int i = 0; i < 5; ++i) {
    const std::string at = std::to_string(kT0 - i * kDay);
    const int tier = i == 0 ? 0 : i < 2 ? 1 : 2;
    old += fmt::format(
        "INSERT INTO functions VALUES({0}, 1, {1}, {2}, 7, 100, 2, 3, {3}, 0, 0, 0, 0, 0, NULL);"
        "INSERT INTO kernels VALUES({0}, 1, {1}, {2}, 3, {3});"
        "INSERT INTO gpus(tier, node, t_ns, span_ns, gpu, uuid, name, samples) VALUES({0}, 1, {1}, {2}, 0, "
        "5, "
        "4, 10);",
        tier, at, h, 10 + i);
  }
  old +=
      "INSERT INTO job_gpus(tier, node, t_ns, span_ns, gpu, pid, start_ns, samples, sm_mean, gpu_processes, "
      "gpu_processes_with_sm, gpu_sm_sum, gpu_samples, memory_total) VALUES(2, 1, " +
      t + ", " + h + ", 0, 7, 100, 10, 30, 2, 2, 40, 10, 80), (2, 1, " + t + ", " + h +
      ", 0, 8, 100, 5, 10, 2, 2, 40, 10, 80);";
  ASSERT_EQ(backend_.exec(old), "");
  auto sql = [this](const std::string& q) {
    auto [rc, out] = cluster_->psql(db_, q);
    EXPECT_EQ(rc, 0) << out;
    return out;
  };
  const std::string before = sql("SELECT tier, t_ns, calls FROM functions ORDER BY 1, 2");
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_EQ(sql("SELECT value FROM meta WHERE key = 'schema_version'"), std::to_string(kSchemaVersion));
  EXPECT_EQ(sql("SELECT tier, t_ns, calls FROM functions ORDER BY 1, 2"), before);
  EXPECT_EQ(sql("SELECT count(*), sum(launches) FROM kernels"), "5|60");
  EXPECT_EQ(sql("SELECT count(*) FROM gpus"), "5");
  EXPECT_EQ(sql("SELECT relkind FROM pg_class WHERE relname = 'functions'"), "p");
  EXPECT_EQ(sql("SELECT count(*) FROM pg_class WHERE relname LIKE '%\\_v10%'"), "0");
  // Each row in its tier's day.
  EXPECT_EQ(sql("SELECT count(*) FROM functions_t2_d20261029"), "1");
  EXPECT_EQ(sql("SELECT count(*) FROM functions_t1_d20261031"), "1");
  EXPECT_EQ(sql("SELECT count(*) FROM functions_t0_d20261101"), "1");
  // The namespace's hour: job j1 and pod ml/nb sharing GPU 0.
  EXPECT_EQ(sql("SELECT job, processes, sm_sum, held FROM namespace_gpus ORDER BY job"),
            "j1|1|30|1\nml/nb|1|10|0.5");
  // The calls per job of the hours already there: pid 7's in job j1, each hour's function
  // row and the job's row.
  EXPECT_EQ(
      sql("SELECT job, domain, function, count(*), sum(processes), sum(calls) FROM job_functions GROUP BY "
          "1, 2, 3 ORDER BY 2"),
      "j1|0|0|3|3|39\nj1|2|3|3|3|39");
  // It takes writes as a new store.
  auto st = store->write("node-a", batch(kT0 + 20 * kS, 42, 10, 1000));
  ASSERT_TRUE(st) << st.error();
  EXPECT_EQ(sql("SELECT count(*) FROM functions WHERE tier = 0"), "2");
}

}  // namespace
}  // namespace eacgm::history
