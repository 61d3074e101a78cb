// Both history stores, SQLite and PostgreSQL (a throwaway server), answer alike: rows
// written in intervals come back summed over any window with their merged latency (GPU
// time kept apart from calls); minutes and hours roll up exactly; retention deletes only
// what is outside each tier's window (simulated clock); a newer schema is refused, older
// ones migrated; a new store has the schema the build before the schema's description
// made, and a store that build wrote reads back whole; a process's workload comes back
// whole; the size cap lets the oldest raw rows go first; GPM's activities roll up like
// utilization and stay unknown without GPM.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "history/job_report_read.h"
#include "store_backends.h"
#include "store_batches.h"

namespace eacgm::history {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace)

// The rows a query answered; none (and the test failed) when it failed.
template <class T>
std::vector<T> rows(Result<std::vector<T>> r) {
  EXPECT_TRUE(r) << r.error();
  return r ? std::move(r).value() : std::vector<T>();
}
template <class T>
std::vector<T> rows(Result<Page<T>> r) {
  EXPECT_TRUE(r) << r.error();
  return r ? std::move(r->rows) : std::vector<T>();
}
std::vector<StoredProcess> rows(Result<ProcessPage> r) {
  EXPECT_TRUE(r) << r.error();
  return r ? std::move(r->rows) : std::vector<StoredProcess>();
}

class HistoryStore : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = backend_named(GetParam());
    ASSERT_EQ(backend_->fresh(), "");
  }
  std::unique_ptr<Store> open() {
    auto s = backend_->open();
    EXPECT_TRUE(s) << s.error();
    return s ? std::move(s).value() : nullptr;
  }
  // Makes the store the build before the schema's description made at `version`, with
  // process 7 of node-a whose columns `columns` hold `values`.
  std::string make_old_store(int version, const std::string& columns = {}, const std::string& values = {}) {
    std::string sql = backend_->legacy_schema(version) +
                      "INSERT INTO meta(key, value) VALUES('schema_version', " + std::to_string(version) +
                      ");";
    if (!columns.empty()) {
      sql +=
          "INSERT INTO names(name) VALUES('node-a');INSERT INTO processes(node, pid, start_ns, first_ns, "
          "last_ns, " +
          columns + ") VALUES((SELECT id FROM names WHERE name = 'node-a'), 7, 100, " + std::to_string(kT0) +
          ", " + std::to_string(kT0 + 10 * kS) + ", " + values + ");";
    }
    return backend_->exec(sql);
  }
  std::unique_ptr<StoreBackend> backend_;
};

TEST_P(HistoryStore, IntervalsSumOverAWindowWithTheirMergedLatency) {
  auto store = open();
  ASSERT_TRUE(store);
  for (int i = 0; i < 6; ++i) {
    auto st = store->write("node-a", batch(kT0 + kS * 10 * i, 42, 100, 1000ULL * (i + 1)));
    ASSERT_TRUE(st) << st.error();
  }
  ASSERT_TRUE(store->write("node-b", batch(kT0, 7, 5, 50)));
  auto all = rows(store->functions(window(kT0, kT0 + 60 * kS), Tier::kRaw));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all.front().calls, 605u);
  EXPECT_EQ(all.front().errors, 7u);
  EXPECT_EQ(all.front().latency.count, 605u);

  HistoryQuery a = window(kT0 + 10 * kS, kT0 + 30 * kS);
  a.node = "node-a";
  auto part = rows(store->functions(a, Tier::kRaw));
  ASSERT_EQ(part.size(), 1u);
  EXPECT_EQ(part.front().calls, 200u);  // intervals 2 and 3
  EXPECT_EQ(part.front().bytes, 200u * 4096);
  // Their calls took 2000..2099 and 3000..3099 ns: the median is near 2100.
  EXPECT_NEAR(part.front().latency.quantile(0.5), 2099, 2099 * 0.02);

  HistoryQuery by_comm = window(kT0, kT0 + 60 * kS);
  by_comm.comm = "train";
  by_comm.pid = 7;
  auto procs = rows(store->processes(by_comm, Tier::kRaw));
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs.front().node, "node-b");
  EXPECT_EQ(procs.front().calls, 5u);
  EXPECT_EQ(procs.front().record.rank, 3);

  auto kernels = rows(store->kernels(window(kT0, kT0 + 60 * kS), Tier::kRaw));
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels.front().launches, 1210u);
}

// GPU time rows (the hook's) are kept per process and kernel and summed like calls; a
// process's calls leave them out.
TEST_P(HistoryStore, GpuTimeRowsAreKeptAndNotCountedAsCalls) {
  auto store = open();
  ASSERT_TRUE(store);
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(store->write("n", batch_with_gpu_time(kT0 + kS * 10 * i, 7, 5, 400)));
  // A process's calls are its API calls: the launches its hook counted are not added.
  auto procs = rows(store->processes(window(kT0, kT0 + 60 * kS), Tier::kRaw));
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs.front().calls, 15u);
  auto functions = rows(store->functions(window(kT0, kT0 + 60 * kS), Tier::kRaw));
  const StoredFunction* gpu = nullptr;
  for (const auto& f : functions) {
    if (f.domain == kGpuTimeDomain) gpu = &f;
  }
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->function, "gemm");
  EXPECT_EQ(gpu->calls, 1200u);
  EXPECT_EQ(gpu->timed, 30u);
  EXPECT_NEAR(gpu->latency.quantile(0.5), 50'000, 50'000 * 0.031);
}

TEST_P(HistoryStore, MinutesAndHoursRollUpExactly) {
  auto store = open();
  ASSERT_TRUE(store);
  // Two hours of 10 s intervals.
  std::uint64_t total = 0;
  StoredSketch merged;  // what the rows of every tier must hold
  for (std::int64_t t = kT0; t < kT0 + kS * 3600 * 2; t += 10 * kS) {
    const auto calls = static_cast<std::uint64_t>(1 + (t / kS) % 5);
    total += calls;
    const IntervalBatch b = batch(t, 1, calls, 100 + (t / kS) % 7000);
    merged.merge(b.functions.front().latency);
    ASSERT_TRUE(store->write("n", b));
  }
  const std::int64_t now = kT0 + kS * 3600 * 2;
  auto st = store->maintain("n", now, Retention{});
  ASSERT_TRUE(st) << st.error();
  const HistoryQuery q = window(kT0, now);
  auto raw = rows(store->functions(q, Tier::kRaw));
  auto minute = rows(store->functions(q, Tier::kMinute));
  auto hour = rows(store->functions(q, Tier::kHour));
  ASSERT_EQ(minute.size(), 1u);
  ASSERT_EQ(hour.size(), 1u);
  ASSERT_FALSE(raw.empty());
  EXPECT_EQ(raw.front().calls, total);
  EXPECT_EQ(minute.front().calls, total);
  EXPECT_EQ(hour.front().calls, total);
  EXPECT_EQ(minute.front().latency.count, total);
  EXPECT_EQ(hour.front().latency.buckets.size(), raw.front().latency.buckets.size());
  EXPECT_DOUBLE_EQ(hour.front().latency.quantile(0.99), raw.front().latency.quantile(0.99));
  EXPECT_EQ(encode(raw.front().latency), encode(merged));
  EXPECT_EQ(encode(minute.front().latency), encode(merged));
  EXPECT_EQ(encode(hour.front().latency), encode(merged));
  // A window of raw intervals that are not whole minutes: the sums of its rows (PostgreSQL
  // reads the edges from the raw rows, the minutes and the hour between from the rollups).
  HistoryQuery edges = window(kT0 + 20 * kS, kT0 + kS * 3600 * 2 - 30 * kS);
  std::uint64_t in_edges = 0;
  for (std::int64_t t = edges.from_ns; t < edges.to_ns; t += 10 * kS) in_edges += 1 + (t / kS) % 5;
  auto part = rows(store->functions(edges, Tier::kRaw));
  ASSERT_FALSE(part.empty());
  EXPECT_EQ(part.front().calls, in_edges);
  EXPECT_EQ(part.front().latency.count, in_edges);
  // Maintenance again rolls nothing twice.
  ASSERT_TRUE(store->maintain("n", now, Retention{}));
  auto again = rows(store->functions(q, Tier::kHour));
  ASSERT_FALSE(again.empty());
  EXPECT_EQ(again.front().calls, total);
  // GPU points of the minute tier: one per minute, the utilization's mean kept.
  HistoryQuery g = q;
  g.step_ns = 60 * kS;
  auto points = rows(store->gpus(g, Tier::kMinute));
  ASSERT_EQ(points.size(), 120u);
  EXPECT_DOUBLE_EQ(*points.front().util_mean, 50.0);
  EXPECT_EQ(*points.front().util_max, 90u);
  auto kernels = rows(store->kernels(q, Tier::kHour));
  ASSERT_FALSE(kernels.empty());
  EXPECT_EQ(kernels.front().launches, 2 * total);
}

TEST_P(HistoryStore, RetentionDeletesOnlyWhatIsOutsideEachTiersWindow) {
  auto store = open();
  ASSERT_TRUE(store);
  Retention r;
  r.raw_ns = 1 * kDay;
  r.minute_ns = 3 * kDay;
  r.hour_ns = 5 * kDay;
  // One interval at the start of each of 6 days, maintained as the days pass.
  for (int d = 0; d < 6; ++d) {
    ASSERT_TRUE(store->write("n", batch(kT0 + d * kDay, 1, 10, 100)));
    auto st = store->maintain("n", kT0 + d * kDay + 10 * kS, r);
    ASSERT_TRUE(st) << st.error();
  }
  const std::int64_t now = kT0 + 6 * kDay;
  ASSERT_TRUE(store->write("n", batch(now, 1, 10, 100)));
  ASSERT_TRUE(store->maintain("n", now + 10 * kS, r));
  const HistoryQuery all = window(kT0 - kDay, now + kDay);
  // Raw: only the interval within the last day. Minutes: days 4 and 5 (3 days back from
  // now + 10 s: day 3's minute at kT0 + 3 days is just outside). Hours: days 2 to 5.
  // Where whole days go, a day's rows stay until the day has passed the window: the day
  // before each of those too (its end is inside the window).
  const std::uint64_t day_more = backend_->drops_whole_days() ? 10 : 0;
  auto raw = rows(store->functions(all, Tier::kRaw));
  auto minute = rows(store->functions(all, Tier::kMinute));
  auto hour = rows(store->functions(all, Tier::kHour));
  ASSERT_FALSE(raw.empty());
  EXPECT_EQ(raw.front().calls, 10u + day_more);
  ASSERT_FALSE(minute.empty());
  EXPECT_EQ(minute.front().calls, 20u + day_more);
  ASSERT_FALSE(hour.empty());
  EXPECT_EQ(hour.front().calls, 40u + day_more);
  // Processes seen within the longest window stay.
  auto procs = rows(store->processes(all, Tier::kHour));
  EXPECT_EQ(procs.size(), 1u);
}

TEST_P(HistoryStore, RefusesAStoreWrittenByANewerSchema) {
  std::string name;
  {
    auto store = open();
    ASSERT_TRUE(store);
    name = store->description();
  }
  ASSERT_EQ(backend_->exec("UPDATE meta SET value = 99 WHERE key = 'schema_version'"), "");
  auto again = backend_->open();
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().find("newer eacgm (schema 99; this agent reads up to " +
                               std::to_string(kSchemaVersion) + ")"),
            std::string::npos)
      << again.error();
  // The store's name leads (a PostgreSQL URL without its password).
  EXPECT_EQ(again.error().rfind("store " + name + ": ", 0), 0u) << again.error();
  EXPECT_EQ(again.error().find(PgCluster::kPassword), std::string::npos) << again.error();
  EXPECT_EQ(again.error().find('\n'), std::string::npos) << "one line";
}

// Every field of a process's workload is written and read back; a later row without it
// (the process gone, the kubelet unreachable) keeps it.
TEST_P(HistoryStore, AProcessWorkloadIsReadBackWithEveryField) {
  auto store = open();
  ASSERT_TRUE(store);
  IntervalBatch b = batch(kT0, 42, 10, 1000);
  set_workload(b.processes[0]);
  ASSERT_TRUE(store->write("node-a", b));
  ASSERT_TRUE(store->write("node-a", batch(kT0 + 10 * kS, 42, 10, 1000)));
  auto procs = rows(store->processes(window(kT0, kT0 + 60 * kS), Tier::kRaw));
  ASSERT_EQ(procs.size(), 1u);
  const ProcessRecord& want = b.processes[0];
  const ProcessRecord& got = procs.front().record;
  for (auto field :
       {&ProcessRecord::container, &ProcessRecord::pod_uid, &ProcessRecord::pod, &ProcessRecord::namespace_,
        &ProcessRecord::container_name, &ProcessRecord::job, &ProcessRecord::job_step}) {
    EXPECT_EQ(got.*field, want.*field);
  }
  EXPECT_EQ(got.comm, "train");
  EXPECT_EQ(got.rank, 3);
  EXPECT_EQ(got.last_ns, kT0 + 20 * kS);
  EXPECT_EQ(procs.front().calls, 20u);
}

// A store of the first schema (version 1, as the build before version 2 left it) opens,
// is migrated to this version, keeps its rows and takes workloads.
TEST_P(HistoryStore, AVersion1StoreIsMigrated) {
  ASSERT_EQ(make_old_store(1, "comm, container", "'old', 'abc'"), "");
  auto store = open();
  ASSERT_TRUE(store);
  auto procs = rows(store->processes(window(kT0, kT0 + 60 * kS), Tier::kRaw));
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs.front().record.comm, "old");
  EXPECT_EQ(procs.front().record.container, "abc");
  EXPECT_EQ(procs.front().record.job, "");

  IntervalBatch b = batch(kT0 + 20 * kS, 42, 10, 1000);
  set_workload(b.processes[0]);
  auto st = store->write("node-a", b);
  ASSERT_TRUE(st) << st.error();
  EXPECT_EQ(backend_->query("SELECT (SELECT value FROM meta WHERE key = 'schema_version'), job, job_step, "
                            "pod_uid, pod, namespace, container_name FROM processes WHERE pid = 42"),
            std::to_string(kSchemaVersion) + "|4242|0|" + b.processes[0].pod_uid + "|trainer-0|ml|pytorch");
}

// Agents starting together on one old store (two nodes' agents on a shared file, or a
// restart beside a running one) each find the schema migrated once: a step that another
// made while this one waited for the lock is not made again ("duplicate column").
TEST_P(HistoryStore, AgentsOpeningAnOldStoreAtOnceAllMigrateIt) {
  ASSERT_EQ(make_old_store(1, "comm", "'old'"), "");
  constexpr int kAgents = 6;
  std::vector<std::string> errors(kAgents);
  std::vector<std::thread> agents;
  agents.reserve(kAgents);
  for (int i = 0; i < kAgents; ++i) {
    agents.emplace_back([this, &errors, i] {
      auto s = backend_->open();
      if (!s) errors[static_cast<std::size_t>(i)] = s.error();
    });
  }
  for (std::thread& t : agents) t.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  EXPECT_EQ(backend_->query("SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(kSchemaVersion));
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_EQ(rows(store->processes(window(kT0, kT0 + 60 * kS), Tier::kRaw)).size(), 1u);
}

// A store of version 2 (the workload columns, no node_clocks) opens, is migrated to this
// version and keeps its rows; its first write records the node's clock where the store
// measures it (PostgreSQL), and node_clocks stays empty where it is the node's own (SQLite).
TEST_P(HistoryStore, AVersion2StoreIsMigratedWithNodeClocks) {
  ASSERT_EQ(make_old_store(2, "comm, job", "'old', 'j1'"), "");
  EXPECT_NE(backend_->query("SELECT count(*) FROM node_clocks").rfind("error", 0), std::string::npos)
      << "no node_clocks before";
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_FALSE(store->clock());  // nothing measured before a write
  auto procs = rows(store->processes(window(kT0, kT0 + 60 * kS), Tier::kRaw));
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs.front().record.job, "j1");
  EXPECT_EQ(backend_->query("SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(kSchemaVersion));
  EXPECT_GE(kSchemaVersion, 3);

  auto st = store->write("node-a", batch(kT0 + 20 * kS, 42, 10, 1000));
  ASSERT_TRUE(st) << st.error();
  EXPECT_EQ(store->clock().has_value(), backend_->measures_clock());
  EXPECT_EQ(backend_->query("SELECT count(*) FROM node_clocks"), backend_->measures_clock() ? "1" : "0");
}

// A new store's tables, columns, keys and indexes are those the build before the schema's
// description made (its literal SQL, legacy_schema.h), and so are a store it made at
// version 1 once migrated.
TEST_P(HistoryStore, ANewStoreHasTheSchemaOfTheLiteralSql) {
  ASSERT_TRUE(open());
  const std::string rendered = backend_->schema();
  EXPECT_NE(rendered.find("node_clocks"), std::string::npos) << rendered;
  ASSERT_EQ(backend_->fresh(), "");
  ASSERT_EQ(make_old_store(kSchemaVersion), "");
  EXPECT_EQ(backend_->schema(), rendered);
  ASSERT_EQ(backend_->fresh(), "");
  ASSERT_EQ(make_old_store(1), "");
  ASSERT_TRUE(open());
  EXPECT_EQ(backend_->schema(), rendered);
}

// A store of this version written by the build before the schema's description (its
// tables made by its literal SQL, a row in each as it wrote them) opens and reads back
// every row, and takes new ones.
TEST_P(HistoryStore, AStoreWrittenByTheLiteralSqlReadsBack) {
  analysis::LatencySketch sketch;
  for (int i = 0; i < 100; ++i) sketch.add(1000 + static_cast<std::uint64_t>(i));
  const std::string latency = encode(stored(sketch));
  const std::string t0 = std::to_string(kT0);
  const std::string t1 = std::to_string(kT0 + 10 * kS);
  const std::string start = std::to_string(kT0 - 100 * kS);
  auto id = [](const char* name) {
    return std::string("(SELECT id FROM names WHERE name = '") + name + "')";
  };
  const std::string n = id("node-a");
  ASSERT_EQ(make_old_store(kSchemaVersion), "");
  // PostgreSQL's interval tables take rows of the days whose tables are made.
  const std::string days =
      backend_->drops_whole_days()
          ? "SELECT eacgm_make_days(ARRAY['functions', 'kernels', 'gpus', 'gpu_processes'], 0, " + t0 + ", " +
                t1 + ");"
          : "";
  ASSERT_EQ(
      backend_->exec(
          days + "INSERT INTO meta(key, value) VALUES('written_to:node-a', " + t1 + ");" +
          "INSERT INTO names(name) VALUES('node-a'), ('cuda'), ('cudaMemcpy'), ('gemm'), ('GPU-1'), "
          "('H100');" +
          "INSERT INTO intervals(node, t_ns, span_ns, mode) VALUES(" + n + ", " + t0 +
          ", 10000000000, 'per-call');" +
          "INSERT INTO processes(node, pid, start_ns, comm, cmdline, rank, first_ns, last_ns, exited, job) "
          "VALUES(" +
          n + ", 42, " + start + ", 'train', 'python train.py', 3, " + t0 + ", " + t1 + ", 1, '4242');" +
          "INSERT INTO functions(tier, node, t_ns, span_ns, pid, start_ns, domain, function, calls, errors, "
          "bytes, "
          "timed, estimated, calls_variance, latency) VALUES(0, " +
          n + ", " + t0 + ", 10000000000, 42, " + start + ", " + id("cuda") + ", " + id("cudaMemcpy") +
          ", 100, 1, 409600, 100, 40, 2.5, " + backend_->blob_literal(latency) + ");" +
          "INSERT INTO kernels(tier, node, t_ns, span_ns, kernel, launches) VALUES(0, " + n + ", " + t0 +
          ", 10000000000, " + id("gemm") + ", 200);" +
          "INSERT INTO gpus(tier, node, t_ns, span_ns, gpu, uuid, name, samples, util_mean, util_max, "
          "memory_used_mean, memory_used_max, memory_total, power_mean_w, power_max_w, temperature_max) "
          "VALUES(0, " +
          n + ", " + t0 + ", 10000000000, 0, " + id("GPU-1") + ", " + id("H100") +
          ", 10, 50.5, 90, NULL, NULL, 85899345920, 300.5, 400, 61);" +
          "INSERT INTO gpu_processes(tier, node, t_ns, span_ns, gpu, pid, start_ns, samples, memory_max, "
          "sm_mean) "
          "VALUES(0, " +
          n + ", " + t0 + ", 10000000000, 0, 42, " + start + ", 5, 1073741824, 42.5);" +
          "INSERT INTO anomalies(node, t_ns, end_ns, pid, start_ns, kind, domain, function, score, value, "
          "median_ns) "
          "VALUES(" +
          n + ", " + std::to_string(kT0 + kS) + ", " + std::to_string(kT0 + 2 * kS) + ", 42, " + start +
          ", 'call', " + id("cuda") + ", " + id("cudaMemcpy") + ", 9.5, 1500000, 200000);" +
          "INSERT INTO leaks(node, t_ns, pid, start_ns, device, allocations, bytes) VALUES(" + n + ", " + t1 +
          ", 42, " + start + ", 0, 3, 3145728);"),
      "");
  auto store = open();
  ASSERT_TRUE(store);
  const HistoryQuery q = window(kT0, kT0 + 60 * kS);
  auto functions = rows(store->functions(q, Tier::kRaw));
  ASSERT_EQ(functions.size(), 1u);
  const StoredFunction& f = functions.front();
  EXPECT_EQ(f.domain + "/" + f.function, "cuda/cudaMemcpy");
  EXPECT_EQ(f.calls, 100u);
  EXPECT_EQ(f.errors, 1u);
  EXPECT_EQ(f.bytes, 409600u);
  EXPECT_EQ(f.timed, 100u);
  EXPECT_EQ(f.estimated, 40u);
  EXPECT_DOUBLE_EQ(f.calls_variance, 2.5);
  EXPECT_EQ(encode(f.latency), latency);
  auto procs = rows(store->processes(q, Tier::kRaw));
  ASSERT_EQ(procs.size(), 1u);
  const StoredProcess& p = procs.front();
  EXPECT_EQ(p.node, "node-a");
  EXPECT_EQ(p.record.key, (ProcessKey{42, kT0 - 100 * kS}));
  EXPECT_EQ(p.record.comm, "train");
  EXPECT_EQ(p.record.cmdline, "python train.py");
  EXPECT_EQ(p.record.rank, 3);
  EXPECT_FALSE(p.record.world_size);
  EXPECT_EQ(p.record.job, "4242");
  EXPECT_EQ(p.record.pod, "");
  EXPECT_EQ(p.record.first_ns, kT0);
  EXPECT_EQ(p.record.last_ns, kT0 + 10 * kS);
  EXPECT_TRUE(p.record.exited);
  EXPECT_EQ(p.calls, 100u);
  EXPECT_EQ(p.errors, 1u);
  auto kernels = rows(store->kernels(q, Tier::kRaw));
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels.front().kernel, "gemm");
  EXPECT_EQ(kernels.front().launches, 200u);
  auto gpus = rows(store->gpus(q, Tier::kRaw));
  ASSERT_EQ(gpus.size(), 1u);
  const StoredGpuPoint& g = gpus.front();
  EXPECT_EQ(g.node + "/" + std::to_string(g.gpu) + "/" + g.uuid + "/" + g.name, "node-a/0/GPU-1/H100");
  EXPECT_EQ(g.t_ns, kT0);
  EXPECT_DOUBLE_EQ(*g.util_mean, 50.5);
  EXPECT_EQ(g.util_max, 90u);
  EXPECT_FALSE(g.memory_used_mean);
  EXPECT_FALSE(g.memory_used_max);
  EXPECT_EQ(g.memory_total, 80ULL << 30);
  EXPECT_DOUBLE_EQ(*g.power_mean_w, 300.5);
  EXPECT_DOUBLE_EQ(*g.power_max_w, 400);
  EXPECT_EQ(g.temperature_max, 61u);
  EXPECT_FALSE(g.sm_active_mean);  // written without GPM's columns
  EXPECT_FALSE(g.tensor_active_max);
  auto anomalies = rows(store->anomalies(q));
  ASSERT_EQ(anomalies.size(), 1u);
  const AnomalyRecord& a = anomalies.front().record;
  EXPECT_EQ(anomalies.front().node, "node-a");
  EXPECT_EQ(a.t_ns, kT0 + kS);
  EXPECT_EQ(a.end_ns, kT0 + 2 * kS);
  EXPECT_EQ(a.process, (ProcessKey{42, kT0 - 100 * kS}));
  EXPECT_EQ(a.kind + "/" + a.domain + "/" + a.function, "call/cuda/cudaMemcpy");
  EXPECT_DOUBLE_EQ(a.score, 9.5);
  EXPECT_DOUBLE_EQ(a.value, 1.5e6);
  EXPECT_DOUBLE_EQ(a.median_ns, 2e5);
  auto leaks = rows(store->leaks(q));
  ASSERT_EQ(leaks.size(), 1u);
  const StoredLeak& l = leaks.front();
  EXPECT_EQ(l.node + "/" + l.comm, "node-a/train");
  EXPECT_EQ(l.t_ns, kT0 + 10 * kS);
  EXPECT_EQ(l.record.process, (ProcessKey{42, kT0 - 100 * kS}));
  EXPECT_EQ(l.record.device, 0);
  EXPECT_EQ(l.record.allocations, 3u);
  EXPECT_EQ(l.record.bytes, 3u << 20);
  // New rows add to the old ones.
  auto st = store->write("node-a", batch(kT0 + 10 * kS, 42, 5, 1000));
  ASSERT_TRUE(st) << st.error();
  auto more = rows(store->functions(q, Tier::kRaw));
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more.front().calls, 105u);
}

// One interval of node `node`'s processes, each with its calls (errors: one each) and,
// where `job` is set, its rank of a job of `world` ranks in pod "ml/trainer-RANK".
struct Proc {
  std::uint32_t pid;
  std::uint64_t calls;
  std::string job;
  long rank = 0;
  long world = 1;
  bool exited = false;
};
IntervalBatch processes_batch(std::int64_t t, const std::vector<Proc>& procs) {
  IntervalBatch out = batch(t, procs.front().pid, procs.front().calls, 1000);
  out.processes.clear();
  out.functions.clear();
  for (const Proc& p : procs) {
    const IntervalBatch one = batch(t, p.pid, p.calls, 1000);
    ProcessRecord r = one.processes.front();
    r.job = p.job;
    if (!p.job.empty()) {
      r.rank = p.rank;
      r.world_size = p.world;
      r.pod = "trainer-" + std::to_string(p.rank);
      r.namespace_ = "ml";
    }
    r.exited = p.exited;
    out.processes.push_back(r);
    out.functions.push_back(one.functions.front());
  }
  return out;
}

TEST_P(HistoryStore, ListsComeAPageAtATimeMostCallsFirstWithTheWindowsTotals) {
  auto store = open();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->write(
      "node-a",
      processes_batch(kT0, {{1, 10, ""}, {2, 20, ""}, {3, 30, ""}, {4, 40, ""}, {5, 50, "", 0, 1, true}})));
  HistoryQuery q = window(kT0, kT0 + 60 * kS);
  q.limit = 2;
  auto first = store->processes(q, Tier::kRaw);
  ASSERT_TRUE(first) << first.error();
  ASSERT_EQ(first->rows.size(), 2u);
  EXPECT_EQ(first->rows[0].record.key.pid, 5u);
  EXPECT_EQ(first->rows[1].record.key.pid, 4u);
  EXPECT_EQ(first->totals.processes, 5u);
  EXPECT_EQ(first->totals.running, 4u);
  EXPECT_EQ(first->totals.calls, 150u);
  EXPECT_EQ(first->totals.errors, 5u);
  q.offset = 4;
  auto last = store->processes(q, Tier::kRaw);
  ASSERT_TRUE(last) << last.error();
  ASSERT_EQ(last->rows.size(), 1u);
  EXPECT_EQ(last->rows[0].record.key.pid, 1u);
  EXPECT_EQ(last->totals.processes, 5u);
  q.offset = 10;  // past the last row: no rows, the window's count all the same
  auto past = store->processes(q, Tier::kRaw);
  ASSERT_TRUE(past) << past.error();
  EXPECT_TRUE(past->rows.empty());
  EXPECT_EQ(past->totals.processes, 5u);
  EXPECT_EQ(past->totals.calls, 150u);
}

TEST_P(HistoryStore, AJobAcrossNodesIsOneRowWithItsRanksAndNodesAreListedToo) {
  auto store = open();
  ASSERT_TRUE(store);
  ASSERT_TRUE(
      store->write("node-a", processes_batch(kT0, {{10, 100, "4711", 0, 4}, {11, 100, "4711", 1, 4, true}})));
  ASSERT_TRUE(
      store->write("node-b", processes_batch(kT0, {{20, 50, "4711", 3, 4}, {21, 500, "run-7", 0, 1}})));
  ASSERT_TRUE(store->write("node-c", processes_batch(kT0, {{30, 900, ""}})));
  HistoryQuery q = window(kT0, kT0 + 60 * kS);
  auto jobs = store->jobs(q, Tier::kRaw);
  ASSERT_TRUE(jobs) << jobs.error();
  EXPECT_EQ(jobs->total, 2u);  // node-c's process has no job
  ASSERT_EQ(jobs->rows.size(), 2u);
  EXPECT_EQ(jobs->rows[0].job, "run-7");  // most calls first
  const StoredJob& j = jobs->rows[1];
  EXPECT_EQ(j.job, "4711");
  EXPECT_EQ(j.nodes, (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_EQ(j.ranks, (std::vector<long>{0, 1, 3}));
  EXPECT_EQ(j.world_size, 4);
  EXPECT_EQ(j.pods, (std::vector<std::string>{"ml/trainer-0", "ml/trainer-1", "ml/trainer-3"}));
  EXPECT_EQ(j.processes, 3u);
  EXPECT_EQ(j.running, 2u);
  EXPECT_EQ(j.calls, 250u);
  EXPECT_EQ(j.errors, 3u);
  EXPECT_EQ(j.first_ns, kT0);
  EXPECT_EQ(j.last_ns, kT0 + 10 * kS);
  q.offset = 1;
  q.limit = 1;
  auto second = store->jobs(q, Tier::kRaw);
  ASSERT_TRUE(second) << second.error();
  ASSERT_EQ(second->rows.size(), 1u);
  EXPECT_EQ(second->rows[0].job, "4711");
  EXPECT_EQ(second->total, 2u);

  auto nodes = store->nodes(window(kT0, kT0 + 60 * kS), Tier::kRaw);
  ASSERT_TRUE(nodes) << nodes.error();
  EXPECT_EQ(nodes->total, 3u);
  ASSERT_EQ(nodes->rows.size(), 3u);
  EXPECT_EQ(nodes->rows[0].node, "node-c");
  EXPECT_EQ(nodes->rows[1].node, "node-b");
  const StoredNode& a = nodes->rows[2];
  EXPECT_EQ(a.node, "node-a");
  EXPECT_EQ(a.processes, 2u);
  EXPECT_EQ(a.running, 1u);
  EXPECT_EQ(a.jobs, 1u);
  EXPECT_EQ(a.calls, 200u);
  EXPECT_EQ(a.errors, 2u);
}

TEST_P(HistoryStore, SizeCapLetsTheOldestRawRowsGoFirst) {
  auto store = open();
  ASSERT_TRUE(store);
  // Many processes per interval make the rows weigh.
  for (int i = 0; i < 720; ++i) {
    IntervalBatch b = batch(kT0 + kS * 10 * i, 1, 50, 100);
    for (std::uint32_t pid = 2; pid < 20; ++pid) {
      FunctionRecord f = b.functions.front();
      f.process.pid = pid;
      b.functions.push_back(f);
    }
    ASSERT_TRUE(store->write("n", b));
  }
  auto before = store->size_bytes();
  ASSERT_TRUE(before) << before.error();
  EXPECT_GT(*before, 1u << 20);
  Retention r;
  // The rollups maintenance adds weigh about a sixth of the raw rows: under this cap,
  // the oldest raw hour must go and the newest can stay.
  r.max_bytes = *before * 3 / 4;
  const std::int64_t now = kT0 + 7200 * kS;
  auto st = store->maintain("n", now, r);
  ASSERT_TRUE(st) << st.error();
  if (backend_->cap_shrinks_file()) {
    auto after = store->size_bytes();
    ASSERT_TRUE(after);
    EXPECT_LE(*after, r.max_bytes);
  }
  // What is left is the newest: the last interval is still there, the first is gone.
  auto last = rows(store->functions(window(now - 10 * kS, now), Tier::kRaw));
  auto first = rows(store->functions(window(kT0, kT0 + 10 * kS), Tier::kRaw));
  auto second_hour = rows(store->functions(window(kT0 + 3600 * kS, kT0 + 3610 * kS), Tier::kRaw));
  EXPECT_EQ(last.size(), 1u);
  EXPECT_TRUE(first.empty()) << "the oldest raw hour goes first";
  EXPECT_EQ(second_hour.size(), 1u);
  // The rollups of what went are still there.
  auto minutes = rows(store->functions(window(kT0, kT0 + 60 * kS), Tier::kMinute));
  EXPECT_EQ(minutes.size(), 1u);
  // Without growth since, the next check deletes nothing more.
  ASSERT_TRUE(store->maintain("n", now + 60 * kS, r));
  second_hour = rows(store->functions(window(kT0 + 3600 * kS, kT0 + 3610 * kS), Tier::kRaw));
  EXPECT_EQ(second_hour.size(), 1u);
}

// A GPU's interval with GPM activities, `busy` or not: 30 and 10 samples.
// Index, UUID, name, samples, utilization mean and max, memory, power and temperature
// (unknown), then SM, tensor and DRAM activity, mean and max of each.
GpuRecord gpm_gpu(bool busy) {
  return busy ? GpuRecord{0,  "GPU-1", "H100", 30,   100.0, 100,  {},  {},  {}, {},
                          {}, {},      0.9,    0.95, 0.8,   0.85, 0.2, 0.3, {}, {}}
              : GpuRecord{0,  "GPU-1", "H100", 10,  20.0, 40,  {},  {},  {}, {},
                          {}, {},      0.5,    0.6, 0.0,  0.1, 0.6, 0.7, {}, {}};
}
// A GPU without GPM: its activities stay unknown.
GpuRecord no_gpm_gpu() {
  return GpuRecord{1, "GPU-2", "T4", 10, 70.0, 80, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
}

// GPM's activities are written, read back and rolled up beside utilization: a mean
// weighted by the samples (as utilization's), the largest max; unknown (NULL) at every
// tier for a GPU without GPM.
TEST_P(HistoryStore, GpmActivitiesRollUpWeightedBySamplesAndStayUnknownWithoutGpm) {
  auto store = open();
  ASSERT_TRUE(store);
  // An hour of 10 s intervals alternating between a quiet and a busy GPU 0.
  for (std::int64_t i = 0; i < 360; ++i) {
    IntervalBatch b = batch(kT0 + 10 * kS * i, 1, 5, 1000);
    b.gpus = {gpm_gpu(i % 2 == 1), no_gpm_gpu()};
    ASSERT_TRUE(store->write("n", b));
  }
  const std::int64_t now = kT0 + 2 * 3600 * kS;
  auto st = store->maintain("n", now, Retention{});
  ASSERT_TRUE(st) << st.error();
  // Per minute: 3 quiet intervals of 10 samples, 3 busy of 30.
  for (auto [tier, step] : {std::pair{Tier::kRaw, 60 * kS}, std::pair{Tier::kMinute, 60 * kS},
                            std::pair{Tier::kHour, 3600 * kS}}) {
    HistoryQuery q = window(kT0, now);
    q.step_ns = step;
    auto points = rows(store->gpus(q, tier));
    ASSERT_EQ(points.size(), step == 3600 * kS ? 2u : 120u) << tier_name(tier);
    for (const StoredGpuPoint& p : points) {
      SCOPED_TRACE(std::string(tier_name(tier)) + " GPU " + std::to_string(p.gpu));
      if (p.gpu == 1) {
        EXPECT_DOUBLE_EQ(*p.util_mean, 70.0);
        EXPECT_FALSE(p.sm_active_mean);
        EXPECT_FALSE(p.sm_active_max);
        EXPECT_FALSE(p.tensor_active_mean);
        EXPECT_FALSE(p.tensor_active_max);
        EXPECT_FALSE(p.dram_active_mean);
        EXPECT_FALSE(p.dram_active_max);
        continue;
      }
      ASSERT_TRUE(p.sm_active_mean && p.tensor_active_mean && p.dram_active_mean);
      EXPECT_NEAR(*p.util_mean, (30 * 20.0 + 90 * 100.0) / 120, 1e-9);
      EXPECT_NEAR(*p.sm_active_mean, (30 * 0.5 + 90 * 0.9) / 120, 1e-9);
      EXPECT_NEAR(*p.tensor_active_mean, (90 * 0.8) / 120, 1e-9);
      EXPECT_NEAR(*p.dram_active_mean, (30 * 0.6 + 90 * 0.2) / 120, 1e-9);
      EXPECT_DOUBLE_EQ(p.sm_active_max.value_or(0), 0.95);
      EXPECT_DOUBLE_EQ(p.tensor_active_max.value_or(0), 0.85);
      EXPECT_DOUBLE_EQ(p.dram_active_max.value_or(0), 0.7);
    }
  }
}

// A store of version 4 gains GPM's columns, its GPU rows unknown in them; new rows carry
// them, and a minute of both kinds rolls up to the new rows' activities.
TEST_P(HistoryStore, AVersion4StoreIsMigratedWithGpmColumns) {
  ASSERT_EQ(make_old_store(4, "comm", "'old'"), "");
  ASSERT_EQ(backend_->exec(
                "INSERT INTO names(name) VALUES('GPU-1'), ('H100');"
                "INSERT INTO gpus(tier, node, t_ns, span_ns, gpu, uuid, name, samples, util_mean, util_max) "
                "VALUES(0, (SELECT id FROM names WHERE name = 'node-a'), " +
                std::to_string(kT0) +
                ", 10000000000, 0, (SELECT id FROM names WHERE name = 'GPU-1'), (SELECT id FROM names WHERE "
                "name = 'H100'), 10, 40, 60);"),
            "");
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_EQ(backend_->query("SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(kSchemaVersion));
  EXPECT_GE(kSchemaVersion, 5);
  HistoryQuery q = window(kT0, kT0 + 60 * kS);
  q.step_ns = 10 * kS;
  auto old = rows(store->gpus(q, Tier::kRaw));
  ASSERT_EQ(old.size(), 1u);
  EXPECT_DOUBLE_EQ(*old.front().util_mean, 40.0);
  EXPECT_FALSE(old.front().sm_active_mean);
  EXPECT_FALSE(old.front().dram_active_max);

  IntervalBatch b = batch(kT0 + 10 * kS, 1, 5, 1000);
  b.gpus = {gpm_gpu(true)};
  auto st = store->write("node-a", b);
  ASSERT_TRUE(st) << st.error();
  auto both = rows(store->gpus(q, Tier::kRaw));
  ASSERT_EQ(both.size(), 2u);
  EXPECT_FALSE(both[0].sm_active_mean);
  EXPECT_DOUBLE_EQ(both[1].sm_active_mean.value_or(0), 0.9);
  EXPECT_DOUBLE_EQ(both[1].tensor_active_max.value_or(0), 0.85);

  // The next minute's interval completes the first one, which then rolls up.
  ASSERT_TRUE(store->write("node-a", batch(kT0 + 60 * kS, 1, 5, 1000)));
  ASSERT_TRUE(store->maintain("node-a", kT0 + 3600 * kS, Retention{}));
  q.step_ns = 60 * kS;
  q.to_ns = kT0 + 60 * kS;
  auto minute = rows(store->gpus(q, Tier::kMinute));
  ASSERT_EQ(minute.size(), 1u);
  EXPECT_NEAR(*minute.front().util_mean, (10 * 40.0 + 30 * 100.0) / 40, 1e-9);
  EXPECT_DOUBLE_EQ(minute.front().sm_active_mean.value_or(0), 0.9);  // the old row has none
  EXPECT_DOUBLE_EQ(minute.front().sm_active_max.value_or(0), 0.95);
}

// A store of version 7 gains the job report's rollups: its next maintenance makes them of
// the hours it already holds, and a report of those hours reads them.
TEST_P(HistoryStore, AVersion7StoreIsMigratedAndItsHoursRolledUpForJobs) {
  ASSERT_EQ(make_old_store(7, "comm, job", "'old', 'j1'"), "");
  const std::string node = "(SELECT id FROM names WHERE name = 'node-a')";
  const std::string hour = std::to_string(kT0);
  const std::string end = std::to_string(kT0 + 3600 * kS);
  ASSERT_EQ(
      backend_->exec(
          "INSERT INTO names(name) VALUES('GPU-1'), ('H100');"
          "INSERT INTO gpus(tier, node, t_ns, span_ns, gpu, uuid, name, samples, util_mean, memory_total, "
          "power_mean_w, energy_mj, energy_counter_ns) VALUES(2, " +
          node + ", " + hour +
          ", 3600000000000, 0, (SELECT id FROM names WHERE name = 'GPU-1'), (SELECT id FROM names WHERE "
          "name = 'H100'), 360, 40, 80, 100, 360000000, 3600000000000);"
          "INSERT INTO gpu_processes(tier, node, t_ns, span_ns, gpu, pid, start_ns, samples, memory_max, "
          "sm_mean, idle_samples, power_sum_w) VALUES(2, " +
          node + ", " + hour + ", 3600000000000, 0, 7, 100, 360, 5, 20, 36, 36000);" +
          "INSERT INTO meta(key, value) VALUES('written_to:node-a', " + end + "), ('rolled_1m:node-a', " +
          end + "), ('rolled_1h:node-a', " + end + ");"),
      "");
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_EQ(backend_->query("SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(kSchemaVersion));
  EXPECT_EQ(backend_->query("SELECT count(*) FROM job_gpus"), "0");
  ASSERT_TRUE(store->maintain("node-a", kT0 + 7200 * kS, Retention{}));
  EXPECT_EQ(backend_->query(
                "SELECT pid, start_ns, samples, gpu_processes, gpu_samples, memory_total FROM job_gpus"),
            "7|100|360|1|360|80");
  auto rows = read_job_report(*store, window(kT0, kT0 + 3600 * kS), {JobSelector::By::kJob, "j1"},
                              Tier::kHour, ReportOptions{});
  ASSERT_TRUE(rows) << rows.error();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_DOUBLE_EQ((*rows)[0].gpu_hours, 1.0);
  EXPECT_NEAR((*rows)[0].idle_gpu_hours, 0.1, 1e-12);
  EXPECT_NEAR((*rows)[0].energy_kwh, 0.1, 1e-12);
  EXPECT_EQ((*rows)[0].memory_peak_bytes, 5u);
}

// A store of version 8 gains nccl_standings, empty, and takes a node's rows.
TEST_P(HistoryStore, AVersion8StoreIsMigratedWithNcclStandings) {
  ASSERT_EQ(make_old_store(8, "comm", "'old'"), "");
  EXPECT_NE(backend_->query("SELECT count(*) FROM nccl_standings").rfind("error", 0), std::string::npos)
      << "no nccl_standings before";
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_EQ(backend_->query("SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(kSchemaVersion));
  EXPECT_EQ(backend_->query("SELECT count(*) FROM nccl_standings"), "0");
  analysis::RankReport r{"", 0xab, 2, {1, 4242, 7, 6, 0, analysis::NcclCollective::kAllReduce, {}}, 0, 0};
  ASSERT_TRUE(store->write_standings("node-a", std::vector{r}, static_cast<std::int64_t>(kT0)));
  EXPECT_EQ(backend_->query("SELECT rank, pid, nranks, entered, finished, collective FROM nccl_standings"),
            "1|4242|2|7|6|ncclAllReduce");
}

// A store of version 9 gains the standings' kept starts and clock bound (version 12): a
// row written before reads back with none and the bound unknown; a rank's starts written
// now come back on the store's clock with the writer's bound.
TEST_P(HistoryStore, AVersion9StoreKeepsTheRanksStartsAfterItsMigration) {
  ASSERT_EQ(make_old_store(9), "");
  ASSERT_EQ(
      backend_->exec("INSERT INTO names(name) VALUES('node-z');INSERT INTO nccl_standings(node, comm_id, "
                     "rank, pid, nranks, entered, finished, waiting_ns, collective, written_ns) VALUES("
                     "(SELECT id FROM names WHERE name = 'node-z'), 5, 0, 1, 2, 3, 3, 0, '', " +
                     std::to_string(kT0) + ");"),
      "");
  auto store = open();
  ASSERT_TRUE(store);
  auto old = store->standings({}, 0, 10);
  ASSERT_TRUE(old) << old.error();
  ASSERT_EQ(old->size(), 1u);
  EXPECT_TRUE((*old)[0].standing.arrivals.empty());
  EXPECT_EQ((*old)[0].clock_uncertainty_ns, -1);

  analysis::RankReport r;
  r.comm_id = 0xab;
  r.nranks = 2;
  r.standing.rank = 1;
  r.standing.pid = 4242;
  r.standing.arrivals = {{analysis::NcclCollective::kAllReduce, 0, kT0 + 7},
                         {analysis::NcclCollective::kAllReduce, 16, kT0 + 9 * kS}};
  ASSERT_TRUE(store->write_standings("node-a", std::vector{r}, static_cast<std::int64_t>(kT0)));
  const std::vector<std::uint64_t> comm{0xab};
  auto back = store->standings(comm, 0, 10);
  ASSERT_TRUE(back) << back.error();
  ASSERT_EQ(back->size(), 1u);
  const auto& a = (*back)[0].standing.arrivals;
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[1].kind, analysis::NcclCollective::kAllReduce);
  EXPECT_EQ(a[1].seq, 16u);
  // SQLite keeps the node's own clock; PostgreSQL moves them by the measured offset (here,
  // one machine: within its bound, under a millisecond).
  const auto bound = (*back)[0].clock_uncertainty_ns;
  ASSERT_GE(bound, 0);
  EXPECT_LT(bound, 1'000'000);
  EXPECT_LE(std::abs(static_cast<std::int64_t>(a[0].ts_ns - (kT0 + 7))), 2 * bound + 1000);
}

// Each node's write replaces its rows (a rank gone loses its row, another node's stay);
// the rows come back per communicator with their node, written since a time, the newest
// first; an id with its top bit set comes back whole; maintain() deletes the rows of
// agents that stopped writing.
constexpr std::uint64_t kComm = 0xfeed0000000000abULL;

TEST_P(HistoryStore, NodesNcclStandingsAreReplacedReadBackAndExpire) {
  auto store = open();
  ASSERT_TRUE(store);
  auto rank = [](std::int32_t r, std::uint64_t entered, std::uint64_t waiting, std::uint64_t comm = kComm) {
    return analysis::RankReport{"",
                                comm,
                                4,
                                {r,
                                 static_cast<std::uint32_t>(100 + r),
                                 entered,
                                 entered - 1,
                                 waiting,
                                 analysis::NcclCollective::kAllReduce,
                                 {}},
                                0,
                                0};
  };
  const auto t1 = static_cast<std::int64_t>(kT0), t2 = t1 + static_cast<std::int64_t>(kS);
  ASSERT_TRUE(store->write_standings("node-a", std::vector{rank(0, 6, 5 * kS), rank(1, 6, 5 * kS)}, t1));
  ASSERT_TRUE(
      store->write_standings("node-b", std::vector{rank(2, 6, 4 * kS), rank(3, 5, 0), rank(0, 1, 0, 7)}, t1));
  const std::uint64_t comm[] = {kComm};
  auto got = store->standings(comm, t1, 100);
  ASSERT_TRUE(got) << got.error();
  ASSERT_EQ(got->size(), 4u);
  std::map<std::int32_t, analysis::RankReport> by_rank;
  for (const auto& r : *got) by_rank[r.standing.rank] = r;
  EXPECT_EQ(by_rank[3].node, "node-b");
  EXPECT_EQ(by_rank[3].comm_id, kComm);
  EXPECT_EQ(by_rank[3].nranks, 4);
  EXPECT_EQ(by_rank[3].standing.pid, 103u);
  EXPECT_EQ(by_rank[3].standing.entered, 5u);
  EXPECT_EQ(by_rank[3].standing.finished, 4u);
  EXPECT_EQ(by_rank[3].standing.last, analysis::NcclCollective::kAllReduce);
  EXPECT_EQ(by_rank[3].written_ns, t1);
  EXPECT_EQ(by_rank[0].node, "node-a");
  EXPECT_EQ(by_rank[0].standing.waiting_ns, static_cast<std::uint64_t>(5 * kS));
  ASSERT_TRUE(store->standings({}, t1, 100));
  EXPECT_EQ(store->standings({}, t1, 100)->size(), 5u) << "every communicator";

  // Node a's rank 1 exited; rank 0 went on.
  ASSERT_TRUE(store->write_standings("node-a", std::vector{rank(0, 7, 0)}, t2));
  got = store->standings(comm, t1, 100);
  ASSERT_TRUE(got) << got.error();
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ(got->front().node, "node-a") << "the newest first";
  EXPECT_EQ(got->front().standing.entered, 7u);
  EXPECT_EQ(got->front().written_ns, t2);
  EXPECT_EQ(store->standings(comm, t2, 100)->size(), 1u) << "written since t2";
  EXPECT_EQ(store->standings(comm, t1, 2)->size(), 2u) << "the limit";

  // Node b's agent stopped writing at t1: its rows go once they are kStandingsKeptNs old.
  ASSERT_TRUE(store->maintain("node-a", t1 + Store::kStandingsKeptNs - 1, Retention{}));
  EXPECT_EQ(store->standings({}, 0, 100)->size(), 4u);
  ASSERT_TRUE(store->maintain("node-a", t1 + Store::kStandingsKeptNs + 1, Retention{}));
  got = store->standings({}, 0, 100);
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ(got->front().node, "node-a");
}

// A store of version 9 gains agents, empty, and takes a node's agent; its standings stay.
TEST_P(HistoryStore, AVersion9StoreIsMigratedWithAgents) {
  ASSERT_EQ(make_old_store(9, "comm", "'old'"), "");
  ASSERT_EQ(
      backend_->exec("INSERT INTO nccl_standings(node, comm_id, rank, pid, nranks, entered, finished, "
                     "waiting_ns, written_ns) VALUES((SELECT id FROM names WHERE name = 'node-a'), 5, 0, "
                     "42, 2, 3, 3, 0, 7);"),
      "");
  EXPECT_NE(backend_->query("SELECT count(*) FROM agents").rfind("error", 0), std::string::npos)
      << "no agents before";
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_EQ(backend_->query("SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(kSchemaVersion));
  EXPECT_GE(kSchemaVersion, 10);
  EXPECT_EQ(backend_->query("SELECT count(*) FROM agents"), "0");
  EXPECT_EQ(backend_->query("SELECT pid FROM nccl_standings"), "42");
  ASSERT_TRUE(store->put_agent({"node-a", "http://a:9977", "1.0", 5, 6, 10 * static_cast<std::int64_t>(kS)}));
  EXPECT_EQ(backend_->query("SELECT url, version, every_ns FROM agents"), "http://a:9977|1.0|10000000000");
}

// Each node's agent has one row, written over by its heartbeat and read back by node with
// the store's clock (PostgreSQL: the server's, and the row's times moved onto it);
// maintain() deletes the rows of agents gone longer than the hour rows are kept.
TEST_P(HistoryStore, AgentsRowsAreWrittenOverReadBackAndExpire) {
  auto store = open();
  ASSERT_TRUE(store);
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const std::int64_t every = 10 * static_cast<std::int64_t>(kS);
  ASSERT_TRUE(
      store->put_agent({"node-b", "http://b:9977", "1.0", now - 100 * every, now - 10 * every, every}));
  ASSERT_TRUE(store->put_agent({"node-a", "http://a:1", "0.9", now - every, now - every, every}));
  ASSERT_TRUE(store->put_agent({"node-a", "http://a:9977", "1.0", now - every, now, every}));
  auto list = store->agents();
  ASSERT_TRUE(list) << list.error();
  ASSERT_EQ(list->rows.size(), 2u);
  const StoredAgent& a = list->rows[0];
  const StoredAgent& b = list->rows[1];
  EXPECT_EQ(a.node, "node-a");
  EXPECT_EQ(a.url, "http://a:9977");
  EXPECT_EQ(a.version, "1.0");
  EXPECT_EQ(a.every_ns, every);
  EXPECT_EQ(b.node, "node-b");
  // The store's clock: this machine's (the throwaway server runs here too, within a second).
  EXPECT_NEAR(static_cast<double>(list->now_ns), static_cast<double>(now), 5e9);
  const std::int64_t offset = store->clock() ? store->clock()->offset_ns : 0;
  EXPECT_EQ(store->clock().has_value(), backend_->measures_clock());
  EXPECT_EQ(a.last_seen_ns, now + offset);
  EXPECT_EQ(a.started_ns - a.last_seen_ns, -every);
  EXPECT_TRUE(agent_up(a, list->now_ns));
  EXPECT_FALSE(agent_up(b, list->now_ns)) << "not seen for ten heartbeats";

  Retention r;
  ASSERT_TRUE(store->maintain("node-a", b.last_seen_ns + r.hour_ns - 1, r));
  EXPECT_EQ(store->agents()->rows.size(), 2u);
  ASSERT_TRUE(store->maintain("node-a", b.last_seen_ns + r.hour_ns + every, r));
  list = store->agents();
  ASSERT_TRUE(list);
  ASSERT_EQ(list->rows.size(), 1u);
  EXPECT_EQ(list->rows[0].node, "node-a");
}

// Each node's clock as its writes measured it: PostgreSQL's node_clocks holds the offset
// of the node's last write (this machine against the throwaway server, well under a
// second, with its bound); a SQLite file, on the node's own clock, holds none.
TEST_P(HistoryStore, NodeClocksAreTheOffsetsOfEachNodesWrites) {
  auto store = open();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->write("node-b", batch(kT0, 7, 5, 50)));
  ASSERT_TRUE(store->write("node-a", batch(kT0, 42, 100, 1000)));
  auto clocks = store->node_clocks();
  ASSERT_TRUE(clocks) << clocks.error();
  if (!backend_->measures_clock()) {
    EXPECT_TRUE(clocks->empty());
    return;
  }
  ASSERT_EQ(clocks->size(), 2u);
  EXPECT_EQ((*clocks)[0].node, "node-a");
  EXPECT_EQ((*clocks)[1].node, "node-b");
  ASSERT_TRUE(store->clock());
  EXPECT_EQ((*clocks)[0].estimate.offset_ns, store->clock()->offset_ns) << "the last write's estimate";
  for (const auto& c : *clocks) {
    EXPECT_LT(std::abs(c.estimate.offset_ns), 1'000'000'000) << c.node;
    EXPECT_GT(c.estimate.uncertainty_ns, 0) << c.node;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, HistoryStore, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace eacgm::history
