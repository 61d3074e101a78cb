// The SQLite history: rows written in intervals come back summed over any window with
// their merged latency; minutes and hours roll up exactly; retention deletes only what
// is outside each tier's window (simulated clock); a newer schema is refused, an older
// one migrated; a process's workload comes back whole; the size cap deletes the oldest
// rows first.
#include "history/sqlite_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "history/sqlite_schema.h"
#include "store_batches.h"
#include "store_checks.h"

namespace eacgm::history {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace)

class TempDb {
 public:
  TempDb() {
    dir_ = std::filesystem::temp_directory_path() /
           ("eacgm-store-" + std::to_string(getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::remove_all(dir_);
  }
  ~TempDb() { std::filesystem::remove_all(dir_); }
  std::string path() const { return (dir_ / "sub" / "eacgm.db").string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
};

TEST(SqliteStore, IntervalsSumOverAWindowWithTheirMergedLatency) {
  TempDb tmp;
  auto store = SqliteStore::open(tmp.path());
  ASSERT_TRUE(store) << store.error();
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE((*store)->write("node-a", batch(kT0 + kS * 10 * i, 42, 100, 1000ULL * (i + 1))));
  }
  ASSERT_TRUE((*store)->write("node-b", batch(kT0, 7, 5, 50)));
  auto all = (*store)->functions(window(kT0, kT0 + 60 * kS), Tier::kRaw);
  ASSERT_TRUE(all) << all.error();
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(all->front().calls, 605u);
  EXPECT_EQ(all->front().errors, 7u);
  EXPECT_EQ(all->front().latency.count, 605u);

  HistoryQuery a = window(kT0 + 10 * kS, kT0 + 30 * kS);
  a.node = "node-a";
  auto part = (*store)->functions(a, Tier::kRaw);
  ASSERT_TRUE(part);
  ASSERT_EQ(part->size(), 1u);
  EXPECT_EQ(part->front().calls, 200u);  // intervals 2 and 3
  EXPECT_EQ(part->front().bytes, 200u * 4096);
  // Their calls took 2000..2099 and 3000..3099 ns: the median is near 2100.
  EXPECT_NEAR(part->front().latency.quantile(0.5), 2099, 2099 * 0.02);

  HistoryQuery by_comm = window(kT0, kT0 + 60 * kS);
  by_comm.comm = "train";
  by_comm.pid = 7;
  auto procs = (*store)->processes(by_comm, Tier::kRaw);
  ASSERT_TRUE(procs) << procs.error();
  ASSERT_EQ(procs->size(), 1u);
  EXPECT_EQ(procs->front().node, "node-b");
  EXPECT_EQ(procs->front().calls, 5u);
  EXPECT_EQ(procs->front().record.rank, 3);

  auto kernels = (*store)->kernels(window(kT0, kT0 + 60 * kS), Tier::kRaw);
  ASSERT_TRUE(kernels);
  ASSERT_EQ(kernels->size(), 1u);
  EXPECT_EQ(kernels->front().launches, 1210u);
}

// GPU time rows are kept apart from calls (store_checks.h).
TEST(SqliteStore, GpuTimeRowsAreKeptAndNotCountedAsCalls) {
  TempDb tmp;
  auto store = SqliteStore::open(tmp.path());
  ASSERT_TRUE(store) << store.error();
  check_gpu_time_rows_kept_apart(**store);
}

TEST(SqliteStore, MinutesAndHoursRollUpExactly) {
  TempDb tmp;
  auto store = SqliteStore::open(tmp.path());
  ASSERT_TRUE(store);
  // Two hours of 10 s intervals.
  std::uint64_t total = 0;
  for (std::int64_t t = kT0; t < kT0 + kS * 3600 * 2; t += 10 * kS) {
    const auto calls = static_cast<std::uint64_t>(1 + (t / kS) % 5);
    total += calls;
    ASSERT_TRUE((*store)->write("n", batch(t, 1, calls, 100)));
  }
  const std::int64_t now = kT0 + kS * 3600 * 2;
  ASSERT_TRUE((*store)->maintain("n", now, Retention{}));
  const HistoryQuery q = window(kT0, now);
  auto raw = (*store)->functions(q, Tier::kRaw);
  auto minute = (*store)->functions(q, Tier::kMinute);
  auto hour = (*store)->functions(q, Tier::kHour);
  ASSERT_TRUE(raw && minute && hour);
  ASSERT_EQ(minute->size(), 1u);
  ASSERT_EQ(hour->size(), 1u);
  EXPECT_EQ(raw->front().calls, total);
  EXPECT_EQ(minute->front().calls, total);
  EXPECT_EQ(hour->front().calls, total);
  EXPECT_EQ(minute->front().latency.count, total);
  EXPECT_EQ(hour->front().latency.buckets.size(), raw->front().latency.buckets.size());
  EXPECT_DOUBLE_EQ(hour->front().latency.quantile(0.99), raw->front().latency.quantile(0.99));
  // Maintenance again rolls nothing twice.
  ASSERT_TRUE((*store)->maintain("n", now, Retention{}));
  auto again = (*store)->functions(q, Tier::kHour);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->front().calls, total);
  // GPU points of the minute tier: one per minute, the utilization's mean kept.
  HistoryQuery g = q;
  g.step_ns = 60 * kS;
  auto points = (*store)->gpus(g, Tier::kMinute);
  ASSERT_TRUE(points) << points.error();
  EXPECT_EQ(points->size(), 120u);
  EXPECT_DOUBLE_EQ(*points->front().util_mean, 50.0);
  EXPECT_EQ(*points->front().util_max, 90u);
}

TEST(SqliteStore, RetentionDeletesOnlyWhatIsOutsideEachTiersWindow) {
  TempDb tmp;
  auto store = SqliteStore::open(tmp.path());
  ASSERT_TRUE(store);
  Retention r;
  r.raw_ns = 1 * kDay;
  r.minute_ns = 3 * kDay;
  r.hour_ns = 5 * kDay;
  // One interval at the start of each of 6 days, maintained as the days pass.
  for (int d = 0; d < 6; ++d) {
    ASSERT_TRUE((*store)->write("n", batch(kT0 + d * kDay, 1, 10, 100)));
    ASSERT_TRUE((*store)->maintain("n", kT0 + d * kDay + 10 * kS, r));
  }
  const std::int64_t now = kT0 + 6 * kDay;
  ASSERT_TRUE((*store)->write("n", batch(now, 1, 10, 100)));
  ASSERT_TRUE((*store)->maintain("n", now + 10 * kS, r));
  const HistoryQuery all = window(kT0 - kDay, now + kDay);
  // Raw: only the interval within the last day. Minutes: days 4 and 5 (3 days back from
  // now + 10 s: day 3's minute at kT0 + 3 days is just outside). Hours: days 2 to 5.
  auto raw = (*store)->functions(all, Tier::kRaw);
  auto minute = (*store)->functions(all, Tier::kMinute);
  auto hour = (*store)->functions(all, Tier::kHour);
  ASSERT_TRUE(raw && minute && hour);
  EXPECT_EQ(raw->front().calls, 10u);
  EXPECT_EQ(minute->front().calls, 20u);
  EXPECT_EQ(hour->front().calls, 40u);
  // Processes seen within the longest window stay.
  auto procs = (*store)->processes(all, Tier::kHour);
  ASSERT_TRUE(procs);
  EXPECT_EQ(procs->size(), 1u);
}

TEST(SqliteStore, RefusesAStoreWrittenByANewerSchema) {
  TempDb tmp;
  {
    auto store = SqliteStore::open(tmp.path());
    ASSERT_TRUE(store);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(tmp.path().c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "UPDATE meta SET value = 99 WHERE key = 'schema_version'", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  auto again = SqliteStore::open(tmp.path());
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().find("newer eacgm (schema 99; this agent reads up to " +
                               std::to_string(kSchemaVersion) + ")"),
            std::string::npos)
      << again.error();
  EXPECT_NE(again.error().find(tmp.path()), std::string::npos) << again.error();
}

// Every field of a process's workload is written and read back; a later row without it
// (the process gone, the kubelet unreachable) keeps it.
TEST(SqliteStore, AProcessWorkloadIsReadBackWithEveryField) {
  TempDb tmp;
  auto store = SqliteStore::open(tmp.path());
  ASSERT_TRUE(store) << store.error();
  IntervalBatch b = batch(kT0, 42, 10, 1000);
  set_workload(b.processes[0]);
  ASSERT_TRUE((*store)->write("node-a", b));
  ASSERT_TRUE((*store)->write("node-a", batch(kT0 + 10 * kS, 42, 10, 1000)));
  auto procs = (*store)->processes(window(kT0, kT0 + 60 * kS), Tier::kRaw);
  ASSERT_TRUE(procs) << procs.error();
  ASSERT_EQ(procs->size(), 1u);
  ProcessRecord want = b.processes[0];
  const ProcessRecord& got = procs->front().record;
  EXPECT_EQ(got.container, want.container);
  EXPECT_EQ(got.pod_uid, want.pod_uid);
  EXPECT_EQ(got.pod, want.pod);
  EXPECT_EQ(got.namespace_, want.namespace_);
  EXPECT_EQ(got.container_name, want.container_name);
  EXPECT_EQ(got.job, want.job);
  EXPECT_EQ(got.job_step, want.job_step);
  EXPECT_EQ(got.comm, "train");
  EXPECT_EQ(got.rank, 3);
  EXPECT_EQ(got.last_ns, kT0 + 20 * kS);
  EXPECT_EQ(procs->front().calls, 20u);
}

// A file written by the first schema (version 1, as the version before this one left
// it) opens, is migrated to this version, keeps its rows and takes workloads.
TEST(SqliteStore, AVersion1FileIsMigrated) {
  TempDb tmp;
  std::filesystem::create_directories(std::filesystem::path(tmp.path()).parent_path());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(tmp.path().c_str(), &db), SQLITE_OK);
  const std::string old =
      std::string(kSqliteSchemaV1) +
      "INSERT INTO meta(key, value) VALUES('schema_version', 1);"
      "INSERT INTO names(id, name) VALUES(1, 'node-a');"
      "INSERT INTO processes(node, pid, start_ns, comm, container, first_ns, last_ns) VALUES(1, "
      "7, 100, 'old', 'abc', " +
      std::to_string(kT0) + ", " + std::to_string(kT0 + 10 * kS) + ");";
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, old.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_close(db);

  auto store = SqliteStore::open(tmp.path());
  ASSERT_TRUE(store) << store.error();
  auto procs = (*store)->processes(window(kT0, kT0 + 60 * kS), Tier::kRaw);
  ASSERT_TRUE(procs) << procs.error();
  ASSERT_EQ(procs->size(), 1u);
  EXPECT_EQ(procs->front().record.comm, "old");
  EXPECT_EQ(procs->front().record.container, "abc");
  EXPECT_EQ(procs->front().record.job, "");

  IntervalBatch b = batch(kT0 + 20 * kS, 42, 10, 1000);
  set_workload(b.processes[0]);
  ASSERT_TRUE((*store)->write("node-a", b));
  store->reset();

  ASSERT_EQ(sqlite3_open(tmp.path().c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT (SELECT value FROM meta WHERE key = 'schema_version'), job, job_step, "
                               "pod_uid, pod, namespace, container_name FROM processes WHERE pid = 42",
                               -1, &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(stmt, 0), kSchemaVersion);
  auto col = [&](int i) { return std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, i))); };
  EXPECT_EQ(col(1), "4242");
  EXPECT_EQ(col(2), "0");
  EXPECT_EQ(col(3), b.processes[0].pod_uid);
  EXPECT_EQ(col(4), "trainer-0");
  EXPECT_EQ(col(5), "ml");
  EXPECT_EQ(col(6), "pytorch");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

// A file of version 2 is migrated to this version: node_clocks is there (the
// PostgreSQL store's table) and stays empty, and the store measures no clock (it is
// the node's own).
TEST(SqliteStore, AVersion2FileIsMigratedWithAnEmptyNodeClocks) {
  TempDb tmp;
  std::filesystem::create_directories(std::filesystem::path(tmp.path()).parent_path());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(tmp.path().c_str(), &db), SQLITE_OK);
  const std::string old = std::string(kSqliteSchemaV1) + kSqliteSchemaV2 +
                          "INSERT INTO meta(key, value) VALUES('schema_version', 2);";
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, old.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_close(db);

  auto store = SqliteStore::open(tmp.path());
  ASSERT_TRUE(store) << store.error();
  ASSERT_TRUE((*store)->write("node-a", batch(kT0, 42, 10, 1000)));
  EXPECT_FALSE((*store)->clock());
  store->reset();

  ASSERT_EQ(sqlite3_open(tmp.path().c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT (SELECT value FROM meta WHERE key = 'schema_version'), "
                               "(SELECT count(*) FROM node_clocks)",
                               -1, &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(stmt, 0), 3);
  EXPECT_EQ(sqlite3_column_int64(stmt, 1), 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST(SqliteStore, SizeCapDeletesTheOldestRawRowsFirst) {
  TempDb tmp;
  auto store = SqliteStore::open(tmp.path());
  ASSERT_TRUE(store);
  // Many processes per interval make the rows weigh.
  for (int i = 0; i < 720; ++i) {
    IntervalBatch b = batch(kT0 + kS * 10 * i, 1, 50, 100);
    for (std::uint32_t pid = 2; pid < 20; ++pid) {
      FunctionRecord f = b.functions.front();
      f.process.pid = pid;
      b.functions.push_back(f);
    }
    ASSERT_TRUE((*store)->write("n", b));
  }
  auto before = (*store)->size_bytes();
  ASSERT_TRUE(before);
  Retention r;
  // The rollups maintenance adds weigh about a sixth of the raw rows: under this cap,
  // the oldest raw hour must go and the newest can stay.
  r.max_bytes = *before * 3 / 4;
  const std::int64_t now = kT0 + 7200 * kS;
  ASSERT_TRUE((*store)->maintain("n", now, r));
  auto after = (*store)->size_bytes();
  ASSERT_TRUE(after);
  EXPECT_LE(*after, r.max_bytes);
  // What is left is the newest: the last interval is still there, the first is gone.
  auto last = (*store)->functions(window(now - 10 * kS, now), Tier::kRaw);
  auto first = (*store)->functions(window(kT0, kT0 + 10 * kS), Tier::kRaw);
  ASSERT_TRUE(last && first);
  EXPECT_EQ(last->size(), 1u);
  EXPECT_TRUE(first->empty());
}

TEST(SqliteStore, ANamedFileThatCannotBeCreatedIsAnError) {
  auto store = SqliteStore::open("/proc/eacgm-no/such.db");
  ASSERT_FALSE(store);
  EXPECT_NE(store.error().find("store sqlite:/proc/eacgm-no/such.db"), std::string::npos) << store.error();
}

}  // namespace
}  // namespace eacgm::history
