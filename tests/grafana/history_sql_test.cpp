// Every SQL query of the history dashboard (deploy/grafana/dashboards/history.json), its
// variables' and its panels', runs against a real PostgreSQL (a throwaway cluster)
// filled by the real PostgresStore, with Grafana's macros and variables substituted as
// Grafana's PostgreSQL data source does, and returns rows: every panel has data, for
// ranges that pick each tier (raw, 1-minute, hourly rows) and for "All" and chosen
// nodes and jobs. Time series also have the time, metric and value columns Grafana's
// time_series format reads; the jobs table has one row per job, a job over two nodes
// with its two ranks; the GPU panel has GPM's activities where the GPU has GPM and
// utilization alone where not. The efficiency dashboard (efficiency.json) likewise, and its
// jobs table agrees with the job report's own sums (history/job_report.h) over the raw rows.
// The substitution of Grafana's macros and variables: tests/grafana/grafana_sql.h.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "../unit/history/pg_cluster.h"
#include "grafana_sql.h"
#include "history/job_report.h"
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
// in pods; pid 300 on node-a is in no job; pid 400 on node-b is a pod of namespace
// research in no job.
ProcessRecord process(std::uint32_t pid, std::int64_t t, std::int64_t span) {
  ProcessRecord p;
  p.key = {pid, 1000 * static_cast<std::int64_t>(pid)};
  p.comm = pid == 300 ? "bench" : pid == 400 ? "notebook" : "train";
  p.first_ns = t;
  p.last_ns = t + span;
  if (pid == 400) {
    p.pod_uid = "0c0ffee0-3b4a-4958-8776-a5b4c3d2e1f4";
    p.pod = "notebook-0";
    p.namespace_ = "research";
  } else if (pid != 300) {
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
      node == "node-a" ? std::vector<std::uint32_t>{100, 300} : std::vector<std::uint32_t>{200, 400};
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
  // GPU 0 (with GPM) runs the node's job processes (and on node-b the notebook); node-a's
  // GPU 1 (without GPM) pid 300. Index, UUID, name, samples, utilization mean and max,
  // memory (unknown), power (GPU 0: 300 W mean), temperature (unknown), SM, tensor and DRAM
  // activity mean and max, energy (GPU 0: 1 Wh an interval, by its counter).
  b.gpus.push_back(GpuRecord{
      0,  node + "-GPU-0", "H200", 10, 100.0, 100, {}, {}, {}, 300.0, {}, {}, 0.97, 0.99, 0.94, 0.95, {},
      {}, 3.6e6,           10 * kS});
  if (node == "node-a") {
    b.gpus.push_back(GpuRecord{
        1, "node-a-GPU-1", "T4", 10, 30.0, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}});
  }
  // GPU 0 idle in 4 of its 10 passes; the notebook listed in 5 of them (idle in 4), with
  // a quarter of the SM work beside rank 1 (the energy's share); the passes that listed it
  // drew 1,200 of the GPU's 3,000 W summed over all ten (its energy part: 0.4, not 0.5).
  for (const ProcessRecord& p : b.processes) {
    const std::uint32_t pid = p.key.pid;
    if (pid == 300) {
      b.gpu_processes.push_back(GpuProcessRecord{1, p.key, 10, {}, {}, {}, {}, {}});
    } else {
      const std::optional<double> sm = pid == 400 ? 20.0 : pid == 200 ? 60.0 : std::optional<double>{};
      b.gpu_processes.push_back(
          GpuProcessRecord{0, p.key, pid == 400 ? 5u : 10u, {}, sm, 4, pid == 400 ? 1200.0 : 3000.0, {}});
    }
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
    // Each node rolls up what it wrote before the next writes: a node's maintenance ages
    // out every node's expired raw rows once an hour, rolled up or not.
    for (const std::string node : {"node-a", "node-b"}) {
      for (std::size_t i = 0; i < starts.size(); ++i) {
        IntervalBatch b = interval(node, starts[i]);
        if (node == "node-a" && i + 1 == starts.size()) add_events(b);
        auto st = (*store)->write(node, b);
        ASSERT_TRUE(st) << st.error();
      }
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
  // The rows of a query of `columns` columns as text, a line each, the columns separated by '|'.
  std::string text(const std::string& where, const std::string& sql, int columns) {
    auto r = conn_.query(sql);
    EXPECT_TRUE(r) << where << ": " << r.error() << "\n" << sql;
    std::string out;
    for (int i = 0; r && i < r->rows(); ++i) {
      for (int c = 0; c < columns; ++c) out += (c == 0 ? "" : "|") + (r->is_null(i, c) ? "" : r->text(i, c));
      out += "\n";
    }
    return out;
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
      EXPECT_EQ(jobs["(no job)"],
                std::make_tuple(std::string("node-a, node-b"), std::int64_t{2}, std::int64_t{0}))
          << where;
    }
  }

  static json dashboard(const std::string& file) {
    std::ifstream in(std::string(EACGM_SOURCE_DIR) + "/deploy/grafana/dashboards/" + file);
    EXPECT_TRUE(in) << "no deploy/grafana/dashboards/" << file;
    return in ? json::parse(in) : json::object();
  }

  // Ranges that pick each tier (raw, 1-minute, hourly rows).
  std::vector<std::pair<std::string, Range>> ranges() const {
    return {{"last 15 minutes (raw rows)", {now_ - 15 * kMin, now_}},
            {"last 4 days (1-minute rows)", {now_ - 4 * kDay, now_}},
            {"last 12 days (hourly rows)", {now_ - 12 * kDay, now_}}};
  }

  // The variables in order, each with the options its query answers, which hold the
  // values chosen.
  void run_variables(std::vector<Variable>& vars, const Range& range, const std::string& range_name,
                     const std::map<std::string, Choice>& choice) {
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
  }

  // A panel's query as Grafana sends it (`sql`): it runs and has rows; a time series has
  // the time, metric and value columns Grafana's time_series format reads.
  std::string run_panel(const grafana::PanelQuery& q, const std::string& sql, const std::string& where) {
    EXPECT_EQ(sql.find('$'), std::string::npos) << where << ": left unsubstituted:\n" << sql;
    EXPECT_GT(rows(where, sql), 0) << where << ": no rows\n" << sql;
    if (q.format == "time_series") {
      EXPECT_GT(
          count(where, "SELECT count(*) FROM (" + sql +
                           ") q WHERE q.time IS NOT NULL AND q.metric IS NOT NULL AND q.value IS NOT NULL"),
          0)
          << where << ": no time, metric and value";
    }
    return sql;
  }

  // The efficiency dashboard's jobs against the report's rows: the same jobs, nodes,
  // GPUs, hours, energy and costs.
  void check_efficiency_jobs(const std::string& where, const std::string& sql,
                             std::vector<JobReportRow> want) {
    auto r = conn_.query(
        "SELECT q.job, q.nodes, q.\"GPUs\", q.\"GPU-hours\", q.\"active GPU-hours\", q.\"idle GPU-hours\", "
        "q.\"energy kWh\", q.cost, q.\"idle cost\", q.currency FROM (" +
        sql + ") q ORDER BY 1");
    ASSERT_TRUE(r) << where << ": " << r.error();
    std::sort(want.begin(), want.end(), [](const auto& a, const auto& b) { return a.job < b.job; });
    ASSERT_EQ(r->rows(), static_cast<int>(want.size())) << where;
    ASSERT_FALSE(want.empty()) << where;
    auto near = [&](int i, int col, double v, const std::string& what) {
      ASSERT_FALSE(r->is_null(i, col)) << where << ": " << what << " is NULL (want " << v << ")";
      EXPECT_NEAR(r->f64(i, col), v, 1e-9 + std::abs(v) * 1e-9) << where << ": " << what;
    };
    for (int i = 0; i < r->rows(); ++i) {
      const JobReportRow& w = want[static_cast<std::size_t>(i)];
      ASSERT_EQ(r->text(i, 0), w.job) << where;
      std::string nodes;
      for (const auto& n : w.nodes) nodes += (nodes.empty() ? "" : ", ") + n;
      EXPECT_EQ(r->text(i, 1), nodes) << where << ": " << w.job;
      EXPECT_EQ(r->i64(i, 2), static_cast<std::int64_t>(w.gpus)) << where << ": " << w.job;
      near(i, 3, w.gpu_hours, w.job + " GPU-hours");
      near(i, 4, w.active_gpu_hours, w.job + " active GPU-hours");
      near(i, 5, w.idle_gpu_hours, w.job + " idle GPU-hours");
      near(i, 6, w.energy_kwh, w.job + " energy");
      near(i, 7, w.cost, w.job + " cost");
      near(i, 8, w.idle_cost, w.job + " idle cost");
      EXPECT_EQ(r->text(i, 9), "EUR") << where;
      // The data as the test means it: idle in 4 of 10 passes; the notebook's energy a
      // quarter (its SM share) of the 0.4 of its GPU's intervals its passes drew (held half
      // of each: 0.8 of its held time's share).
      EXPECT_GT(w.idle_gpu_hours, 0) << where << ": " << w.job;
      if (w.job == "research/notebook-0") {
        EXPECT_EQ(w.share_basis, "sm") << where;
        EXPECT_NEAR(w.energy_kwh, w.gpu_hours * 0.8 * 0.25 * 0.36, 1e-12) << where;
      }
    }
  }

  PgCluster cluster_;
  PgConn conn_;
  std::int64_t now_ = 0;
};

TEST_F(GrafanaHistorySql, EveryQueryRunsAndEveryPanelHasData) {
  const json doc = dashboard("history.json");
  std::vector<Variable> vars = grafana::dashboard_variables(doc);
  ASSERT_FALSE(vars.empty());

  const std::vector<grafana::PanelQuery> queries = grafana::dashboard_queries(doc);
  ASSERT_GE(queries.size(), 6u);

  const std::vector<std::pair<std::string, std::map<std::string, Choice>>> selections = {
      {"All", {}},
      {"node-a, job 4242", {{"node", {false, {"node-a"}}}, {"job", {false, {"4242"}}}}},
      {"both nodes, job 4242", {{"node", {false, {"node-a", "node-b"}}}, {"job", {false, {"4242"}}}}}};
  int ran = 0;
  const auto all_ranges = ranges();
  for (std::size_t tier = 0; tier < all_ranges.size(); ++tier) {
    const auto& [range_name, range] = all_ranges[tier];
    for (const auto& [choice_name, choice] : selections) {
      ASSERT_NO_FATAL_FAILURE(run_variables(vars, range, range_name, choice));
      for (const auto& q : queries) {
        std::string where = q.where;
        where.append(", ").append(range_name).append(", ").append(choice_name);
        std::string sql;
        ASSERT_NO_FATAL_FAILURE(sql = run_panel(q, grafana_sql(q.sql, range, vars, choice), where));
        const auto node = choice.find("node");
        const bool both_nodes = node == choice.end() || node->second.all || node->second.values.size() == 2;
        if (q.where.rfind("panel 'Jobs'", 0) == 0 && both_nodes) {
          check_jobs(where, sql);
          // Each job's calls and errors are its processes' rows of the window's tier (the
          // hour tier's through the calls per job, job_functions), GPU time's aside.
          EXPECT_EQ(text(where, "SELECT q.job, q.calls, q.errors FROM (" + sql + ") q ORDER BY 1", 3),
                    text(where,
                         fmt::format("SELECT CASE WHEN p.job <> '' THEN p.job ELSE '(no job)' END, "
                                     "sum(t.calls), sum(t.errors) FROM functions t JOIN processes p ON "
                                     "p.node = t.node AND p.pid = t.pid AND p.start_ns = t.start_ns "
                                     "WHERE t.tier = {} AND t.t_ns >= {} AND t.t_ns < {} AND t.domain <> "
                                     "(SELECT id FROM names WHERE name = 'gpu_time') {} GROUP BY 1 "
                                     "ORDER BY 1",
                                     tier, range.from_ns, range.to_ns,
                                     choice.count("job") != 0 ? "AND p.job = '4242'" : ""),
                         3))
              << where;
        }
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
  EXPECT_EQ(ran, static_cast<int>(queries.size() * all_ranges.size() * selections.size()));
}

// The efficiency dashboard: every query runs and has rows for each tier and selection,
// and over the raw rows its jobs table says what the job report says, job by job.
TEST_F(GrafanaHistorySql, EfficiencyQueriesRunAndAgreeWithTheJobReport) {
  const json doc = dashboard("efficiency.json");
  std::vector<Variable> vars = grafana::dashboard_variables(doc);
  ASSERT_EQ(vars.size(), 2u);
  std::map<std::string, std::string> texts = grafana::dashboard_texts(doc);
  ASSERT_EQ(texts.count("price"), 1u);
  ASSERT_EQ(texts.count("currency"), 1u);
  texts["price"] = "2.5";
  texts["currency"] = "EUR";
  const std::vector<grafana::PanelQuery> queries = grafana::dashboard_queries(doc);
  ASSERT_EQ(queries.size(), 4u);

  auto store = PostgresStore::open(cluster_.url("history"));
  ASSERT_TRUE(store) << store.error();
  const ReportOptions options{0.05, 2.5, "EUR"};
  struct Selection {
    std::string name;
    std::map<std::string, Choice> choice;
    std::optional<std::string> node;
    JobSelector report;
  };
  const std::vector<Selection> selections = {{"All", {}, {}, {}},
                                             {"node-b", {{"node", {false, {"node-b"}}}}, "node-b", {}},
                                             {"namespace research",
                                              {{"namespace", {false, {"research"}}}},
                                              {},
                                              {JobSelector::By::kNamespace, "research"}}};
  int compared = 0;
  for (const auto& [range_name, range] : ranges()) {
    for (const auto& s : selections) {
      ASSERT_NO_FATAL_FAILURE(run_variables(vars, range, range_name, s.choice));
      for (const auto& q : queries) {
        const std::string where = q.where + ", " + range_name + ", " + s.name;
        std::string sql;
        ASSERT_NO_FATAL_FAILURE(
            sql =
                run_panel(q, grafana_sql(grafana::grafana_text(q.sql, texts), range, vars, s.choice), where));
        if (q.where.rfind("panel 'Jobs by idle cost'", 0) != 0 || range.from_ns < now_ - kDay) continue;
        HistoryQuery hq;
        hq.from_ns = range.from_ns;
        hq.to_ns = range.to_ns;
        hq.node = s.node;
        auto held = (*store)->held_gpus(hq, s.report, Tier::kRaw);
        ASSERT_TRUE(held) << held.error();
        const std::vector<JobReportRow> want = job_report_rows(std::move(held).value(), options);
        ASSERT_NO_FATAL_FAILURE(check_efficiency_jobs(where, sql, want));
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 3);
}

}  // namespace
}  // namespace eacgm::history
