// Every SQL query of the history dashboard (deploy/grafana/dashboards/history.json), its
// variables' and its panels', runs against a real PostgreSQL (a throwaway cluster)
// filled by the real PostgresStore, with Grafana's macros and variables substituted as
// Grafana's PostgreSQL data source does, and returns rows: every panel has data, for
// ranges that pick each tier (raw, 1-minute, hourly rows) and for "All" and chosen
// nodes and jobs. Time series also have the time, metric and value columns Grafana's
// time_series format reads; the jobs table has one row per job, a job over two nodes
// with its two ranks; the GPU panel has GPM's activities where the GPU has GPM and
// utilization alone where not.
// The substitution of Grafana's macros and variables: tests/grafana/grafana_sql.h.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "../unit/history/pg_cluster.h"
#include "grafana_sql.h"
#include "history/pg_conn.h"
#include "history/postgres_store.h"

namespace eacgm::history {
namespace {

using json = nlohmann::json;
using test::PgCluster;

constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kMin = 60 * kS;
constexpr std::int64_t kHour = 60 * kMin;
constexpr std::int64_t kDay = 24 * kHour;

std::int64_t floor_to(std::int64_t t, std::int64_t step) { return t - t % step; }

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A process of the test's fleet: job 4242 has rank 0 on node-a and rank 1 on node-b,
// in pods; pid 300 on node-a is in no job.
ProcessRecord process(std::uint32_t pid, std::int64_t t, std::int64_t span) {
  ProcessRecord p;
  p.key = {pid, 1000 * static_cast<std::int64_t>(pid)};
  p.comm = pid == 300 ? "bench" : "train";
  p.first_ns = t;
  p.last_ns = t + span;
  if (pid != 300) {
    p.rank = pid == 100 ? 0 : 1;
    p.world_size = 2;
    p.container = "c0ffee";
    p.pod_uid = "5f0e1d2c-3b4a-4958-8776-a5b4c3d2e1f" + std::to_string(pid / 100);
    p.pod = "trainer-" + std::to_string(pid / 100 - 1);
    p.namespace_ = "ml";
    p.container_name = "pytorch";
    p.job = "4242";
    p.job_step = "0";
  }
  return p;
}

constexpr std::uint64_t kGpuLaunches = 1'000'000'000;

IntervalBatch interval(const std::string& node, std::int64_t t) {
  IntervalBatch b;
  b.t_ns = t;
  b.span_ns = 10 * kS;
  std::vector<std::uint32_t> pids =
      node == "node-a" ? std::vector<std::uint32_t>{100, 300} : std::vector<std::uint32_t>{200};
  for (std::uint32_t pid : pids) {
    b.processes.push_back(process(pid, t, b.span_ns));
    for (const char* fn : {"cudaMemcpy", "cudaLaunchKernel"}) {
      FunctionRecord f;
      f.process = b.processes.back().key;
      f.domain = "cuda";
      f.function = fn;
      f.calls = pid;
      f.timed = pid;
      f.errors = 1;
      b.functions.push_back(f);
    }
    // Its GPU time through the hook: launches that are not calls (kGpuTimeDomain), so
    // many that a panel adding them to the calls would show it.
    FunctionRecord g;
    g.process = b.processes.back().key;
    g.domain = kGpuTimeDomain;
    g.function = "gemm";
    g.calls = kGpuLaunches;
    b.functions.push_back(g);
  }
  b.kernels.push_back({"gemm", 40});
  b.kernels.push_back({"softmax", 4});
  // GPU 0 (with GPM) runs the node's job processes; node-a's GPU 1 (without GPM) pid 300.
  // Index, UUID, name, samples, utilization mean and max, memory, power and temperature
  // (unknown), SM, tensor and DRAM activity mean and max.
  b.gpus.push_back(GpuRecord{
      0, node + "-GPU-0", "H200", 10, 100.0, 100, {}, {}, {}, {}, {}, {}, 0.97, 0.99, 0.94, 0.95, {}, {}, {},
      {}});
  if (node == "node-a") {
    b.gpus.push_back(GpuRecord{
        1, "node-a-GPU-1", "T4", 10, 30.0, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}});
  }
  for (const ProcessRecord& p : b.processes) {
    b.gpu_processes.push_back(GpuProcessRecord{p.key.pid == 300 ? 1u : 0u, p.key, 10, {}, {}, {}, {}});
  }
  b.mode = "always-on";
  return b;
}

using grafana::Choice;
using grafana::grafana_sql;
using grafana::Range;
using grafana::Variable;

class GrafanaHistorySql : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cluster_.start(), "") << "the test server did not start";
    ASSERT_EQ(cluster_.create_database("history"), "");
    auto store = PostgresStore::open(cluster_.url("history"));
    ASSERT_TRUE(store) << store.error();
    now_ = now_ns();
    // Ten and three days ago (rolled up to hours and minutes, the raw rows then past
    // retention) and the last ten minutes (raw rows, the anomalies, a leak).
    std::vector<std::int64_t> starts;
    for (std::int64_t base : {floor_to(now_ - 10 * kDay, kHour), floor_to(now_ - 3 * kDay, kHour)}) {
      for (std::int64_t i = 0; i < 12; ++i) starts.push_back(base + i * 10 * kS);
    }
    const std::int64_t recent = floor_to(now_ - 10 * kMin, 10 * kS);
    for (std::int64_t i = 0; i < 30; ++i) starts.push_back(recent + i * 10 * kS);
    for (const std::string node : {"node-a", "node-b"}) {
      for (std::size_t i = 0; i < starts.size(); ++i) {
        IntervalBatch b = interval(node, starts[i]);
        if (node == "node-a" && i + 1 == starts.size()) add_events(b);
        auto st = (*store)->write(node, b);
        ASSERT_TRUE(st) << st.error();
      }
    }
    for (const std::string node : {"node-a", "node-b"}) {
      auto st = (*store)->maintain(node, now_, Retention{});
      ASSERT_TRUE(st) << st.error();
    }
    // The data as the test means it: raw rows only of the last day, minutes and hours.
    auto [rc, tiers] = cluster_.psql("history", "SELECT string_agg(DISTINCT tier::text, ',') FROM functions");
    ASSERT_EQ(rc, 0) << tiers;
    ASSERT_EQ(tiers, "0,1,2");
    auto conn = PgConn::connect(cluster_.url("history"));
    ASSERT_TRUE(conn) << conn.error();
    conn_ = std::move(conn).value();
  }

  // Pid 100 (job 4242 on node-a): a slow call, a hang and, as it exits, a leak; a slow
  // interval of every process's calls.
  void add_events(IntervalBatch& b) const {
    const std::int64_t t = b.t_ns;
    for (const char* kind : {"call", "interval", "hang"}) {
      AnomalyRecord a;
      a.t_ns = t + kS;
      a.end_ns = t + 3 * kS;
      if (std::string(kind) != "interval") a.process = b.processes[0].key;
      a.kind = kind;
      a.domain = "cuda";
      a.function = std::string(kind) == "hang" ? "ncclAllReduce" : "cudaMemcpy";
      a.score = 9;
      a.value = 5e6;
      a.median_ns = 1e5;
      b.anomalies.push_back(a);
    }
    b.processes[0].exited = true;
    b.leaks.push_back({b.processes[0].key, 0, 3, 3 << 20});
  }

  // Rows of a query; fails the test with the server's message.
  std::int64_t rows(const std::string& where, const std::string& sql) {
    auto r = conn_.query(sql);
    EXPECT_TRUE(r) << where << ": " << r.error() << "\n" << sql;
    return r ? r->rows() : -1;
  }
  std::int64_t count(const std::string& where, const std::string& sql) {
    auto r = conn_.query(sql);
    EXPECT_TRUE(r) << where << ": " << r.error() << "\n" << sql;
    return r && r->rows() == 1 ? r->i64(0, 0) : -1;
  }

  // A job spread over nodes is one row with its ranks; processes outside a job one more.
  void check_jobs(const std::string& where, const std::string& sql) {
    auto r =
        conn_.query("SELECT q.job, q.nodes, q.processes, q.ranks, q.calls FROM (" + sql + ") q ORDER BY 1");
    ASSERT_TRUE(r) << where << ": " << r.error();
    std::map<std::string, std::tuple<std::string, std::int64_t, std::int64_t>> jobs;
    for (int i = 0; i < r->rows(); ++i) {
      jobs[r->text(i, 0)] = {r->text(i, 1), r->i64(i, 2), r->i64(i, 3)};
      EXPECT_LT(r->i64(i, 4), static_cast<std::int64_t>(kGpuLaunches))
          << where << ": GPU launches counted as calls";
    }
    ASSERT_TRUE(jobs.count("4242")) << where;
    EXPECT_EQ(jobs["4242"], std::make_tuple(std::string("node-a, node-b"), std::int64_t{2}, std::int64_t{2}))
        << where;
    if (jobs.size() > 1) {
      ASSERT_TRUE(jobs.count("(no job)")) << where;
      EXPECT_EQ(jobs["(no job)"], std::make_tuple(std::string("node-a"), std::int64_t{1}, std::int64_t{0}))
          << where;
    }
  }

  PgCluster cluster_;
  PgConn conn_;
  std::int64_t now_ = 0;
};

TEST_F(GrafanaHistorySql, EveryQueryRunsAndEveryPanelHasData) {
  std::ifstream in(std::string(EACGM_SOURCE_DIR) + "/deploy/grafana/dashboards/history.json");
  ASSERT_TRUE(in) << "no deploy/grafana/dashboards/history.json";
  const json doc = json::parse(in);

  std::vector<Variable> vars = grafana::dashboard_variables(doc);
  ASSERT_FALSE(vars.empty());

  const std::vector<grafana::PanelQuery> queries = grafana::dashboard_queries(doc);
  ASSERT_GE(queries.size(), 6u);

  const std::vector<std::pair<std::string, Range>> ranges = {
      {"last 15 minutes (raw rows)", {now_ - 15 * kMin, now_}},
      {"last 4 days (1-minute rows)", {now_ - 4 * kDay, now_}},
      {"last 12 days (hourly rows)", {now_ - 12 * kDay, now_}}};
  const std::vector<std::pair<std::string, std::map<std::string, Choice>>> selections = {
      {"All", {}},
      {"node-a, job 4242", {{"node", {false, {"node-a"}}}, {"job", {false, {"4242"}}}}},
      {"both nodes, job 4242", {{"node", {false, {"node-a", "node-b"}}}, {"job", {false, {"4242"}}}}}};
  int ran = 0;
  for (const auto& [range_name, range] : ranges) {
    for (const auto& [choice_name, choice] : selections) {
      // The variables in order, each with the options its query answers.
      for (auto& v : vars) {
        const std::string sql = grafana_sql(v.sql, range, vars, choice);
        ASSERT_EQ(sql.find('$'), std::string::npos) << "$" << v.name << ": left unsubstituted:\n" << sql;
        auto r = conn_.query(sql);
        ASSERT_TRUE(r) << "$" << v.name << ": " << r.error() << "\n" << sql;
        v.options.clear();
        for (int i = 0; i < r->rows(); ++i) v.options.push_back(r->text(i, 0));
        EXPECT_FALSE(v.options.empty()) << "$" << v.name << " has no options, " << range_name;
        if (auto c = choice.find(v.name); c != choice.end()) {
          for (const auto& want : c->second.values) {
            EXPECT_NE(std::find(v.options.begin(), v.options.end(), want), v.options.end())
                << "$" << v.name << " lacks " << want << ", " << range_name;
          }
        }
      }
      for (const auto& q : queries) {
        std::string where = q.where;
        where.append(", ").append(range_name).append(", ").append(choice_name);
        const std::string sql = grafana_sql(q.sql, range, vars, choice);
        ASSERT_EQ(sql.find('$'), std::string::npos) << where << ": left unsubstituted:\n" << sql;
        EXPECT_GT(rows(where, sql), 0) << where << ": no rows\n" << sql;
        if (q.format == "time_series") {
          EXPECT_GT(
              count(where, "SELECT count(*) FROM (" + sql +
                               ") q WHERE q.time IS NOT NULL AND q.metric IS NOT NULL AND q.value IS NOT "
                               "NULL"),
              0)
              << where << ": no time, metric and value";
        }
        const auto node = choice.find("node");
        const bool both_nodes = node == choice.end() || node->second.all || node->second.values.size() == 2;
        if (q.where.rfind("panel 'Jobs'", 0) == 0 && both_nodes) check_jobs(where, sql);
        // GPM's activities beside utilization where the GPU has them; utilization only
        // for a GPU without (node-a's GPU 1, in no job).
        if (q.where.rfind("panel 'GPU utilization, SM and tensor activity'", 0) == 0) {
          const std::string in = "SELECT count(*) FROM (" + sql + ") q WHERE q.metric = ";
          EXPECT_GT(count(where, in + "'node-a GPU 0 tensor active' AND q.value > 0.9"), 0) << where;
          EXPECT_GT(count(where, in + "'node-a GPU 0 utilization' AND q.value = 1"), 0) << where;
          EXPECT_EQ(count(where, in + "'node-a GPU 1 SM active'"), 0) << where;
          EXPECT_EQ(count(where, in + "'node-a GPU 1 utilization'") > 0, choice.find("job") == choice.end())
              << where;
        }
        if (q.where.rfind("panel 'Calls/s by function'", 0) == 0) {
          EXPECT_EQ(count(where, "SELECT count(*) FROM (" + sql + ") q WHERE q.metric = 'gemm'"), 0)
              << where << ": GPU launches shown as calls";
        }
        ++ran;
      }
    }
  }
  EXPECT_EQ(ran, static_cast<int>(queries.size() * ranges.size() * selections.size()));
}

}  // namespace
}  // namespace eacgm::history
