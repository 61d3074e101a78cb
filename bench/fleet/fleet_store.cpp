// The fleet simulation's store side: a fleet's history in one PostgreSQL database.
//   eacgm_bench_fleet_store --url URL [--writers 8] [--write-seconds 60] [--fleet-nodes 8]
//                           [--days 30] [--repeat 5] [--dashboard PATH]...
// 1. Writes: `writers` nodes (a thread and a PostgresStore connection each, as agents
//    have) write back to back, with a compressed clock, the 10 s intervals of the busy
//    50-pod node (fleet_node.h: 1,946 rows each), starting 20 simulated minutes before
//    an hour boundary an hour ago, with the writer's maintenance every 6 intervals (rolls
//    to minutes and hours), for `write-seconds` and at least past that boundary: rows/s.
// 2. The fleet's month: the hour rows the real rollup made for node 0's hour (every
//    (process, function), kernel, GPU, GPU process) and its process rows, copied by SQL
//    to every hour of the last `days` days for `fleet-nodes` nodes (jobs spread over 4
//    nodes each), day by day across the nodes, as a fleet writes them; VACUUM ANALYZE;
//    then each node's maintenance makes the job report's rollups of those hours (and
//    the fleet's calls per job).
//    Bytes per node-day of the hour tier.
// 3. Each dashboard's SQL (deploy/grafana/dashboards/history.json, or each --dashboard: its
//    variables' and panels', Grafana's macros substituted as tests/grafana/grafana_sql.h does) over
//    the last `days` days, `repeat` times each: p50/p95 for All nodes and for one node;
//    All at 1,000 nodes, linear in the rows read.
// bench/fleet/run.sh starts a throwaway server and runs it.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "../../tests/grafana/grafana_sql.h"
#include "fleet_node.h"
#include "history/pg_conn.h"
#include "history/postgres_store.h"
#include "history/schema.h"
#include "history/schema_sql.h"

namespace {

using namespace eacgm;
using namespace eacgm::history;
using Clock = std::chrono::steady_clock;
constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kHour = 3600 * kS;
constexpr std::int64_t kDay = 24 * kHour;

std::int64_t floor_to(std::int64_t t, std::int64_t step) { return t - t % step; }
std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
std::string node_name(int n) { return fmt::format("gpu-node-{:04}", n); }

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

struct Options {
  std::string url;
  int writers = 8;
  double write_seconds = 60;
  int fleet_nodes = 8;
  int days = 30;
  int repeat = 5;
  std::vector<std::string> dashboards;  // --dashboard, each; history.json when none
};

struct WriteRun {
  double seconds = 0;
  std::uint64_t rows = 0, batches = 0;
  std::vector<double> write_ms, maintain_ms;
  int failures = 0;
  std::int64_t last_end_ns = 0;
};

// Step 1: the writers, each one node.
WriteRun write_fleet(const Options& o, std::int64_t t0_ns, std::int64_t must_pass_ns, std::int64_t now) {
  const fleet::IntervalShapes shapes;
  std::vector<WriteRun> per(static_cast<std::size_t>(o.writers));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(o.writers));
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(o.write_seconds);
  for (int n = 0; n < o.writers; ++n) {
    threads.emplace_back([&, n] {
      WriteRun& mine = per[static_cast<std::size_t>(n)];
      auto store = PostgresStore::open(o.url);
      if (!store) {
        std::fprintf(stderr, "fleet: %s\n", store.error().c_str());
        ++mine.failures;
        return;
      }
      const std::string node = node_name(n);
      for (std::int64_t i = 0;; ++i) {
        const std::int64_t t = t0_ns + i * 10 * kS;
        if (t + 10 * kS > now) break;
        if (t >= must_pass_ns && Clock::now() >= deadline) break;
        const IntervalBatch b = shapes.interval(static_cast<unsigned>(n), t, i);
        auto w0 = Clock::now();
        if (auto st = (*store)->write(node, b); !st) {
          std::fprintf(stderr, "fleet: write: %s\n", st.error().c_str());
          ++mine.failures;
          return;
        }
        mine.write_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - w0).count());
        mine.rows += fleet::rows_of(b);
        ++mine.batches;
        mine.last_end_ns = t + b.span_ns;
        if ((i + 1) % 6 == 0) {
          w0 = Clock::now();
          Retention r;
          r.max_bytes = 0;
          if (auto st = (*store)->maintain(node, mine.last_end_ns, r); !st) {
            std::fprintf(stderr, "fleet: maintain: %s\n", st.error().c_str());
            ++mine.failures;
            return;
          }
          mine.maintain_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - w0).count());
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  WriteRun run;
  run.seconds = seconds_since(start);
  for (auto& p : per) {
    run.rows += p.rows;
    run.batches += p.batches;
    run.failures += p.failures;
    run.write_ms.insert(run.write_ms.end(), p.write_ms.begin(), p.write_ms.end());
    run.maintain_ms.insert(run.maintain_ms.end(), p.maintain_ms.begin(), p.maintain_ms.end());
  }
  run.last_end_ns = per.empty() ? 0 : per[0].last_end_ns;
  return run;
}

Result<std::int64_t> scalar(PgConn& conn, const std::string& sql) {
  auto r = conn.query(sql);
  if (!r) return std::move(r).take_error();
  if (r->rows() != 1 || r->is_null(0, 0)) return make_error("fleet: no value from " + sql);
  return r->i64(0, 0);
}

Status run_sql(PgConn& conn, const std::string& sql) {
  auto st = conn.script(sql);
  if (!st) return make_error("fleet: " + st.error() + "\n" + sql);
  return {};
}

// Step 2: node 0's rolled-up hour `hour_ns`, copied to every hour of the last `days`
// days for `nodes` nodes (the writers' rows cleared first). Returns the rows made.
Result<std::int64_t> fill_fleet(PgConn& conn, const Options& o, std::int64_t hour_ns, std::int64_t now) {
  auto id = scalar(conn, fmt::format("SELECT id FROM names WHERE name = '{}'", node_name(0)));
  if (!id) return std::move(id).take_error();
  std::string sql;
  for (const char* t : {"functions", "kernels", "gpus", "gpu_processes"}) {
    sql += fmt::format(
        "CREATE TEMP TABLE tpl_{0} AS SELECT * FROM {0} WHERE tier = 2 AND node = {1} AND t_ns = {2};", t,
        *id, hour_ns);
  }
  sql += fmt::format("CREATE TEMP TABLE tpl_processes AS SELECT * FROM processes WHERE node = {};", *id);
  sql +=
      "TRUNCATE functions, kernels, gpus, gpu_processes, processes, intervals, anomalies, leaks, job_gpus, "
      "job_calls, namespace_gpus, job_functions;"
      "DELETE FROM meta WHERE key LIKE 'written_to:%' OR key LIKE 'rolled_%';";
  sql += fmt::format(
      "INSERT INTO names(name) SELECT format('gpu-node-%s', lpad(n::text, 4, '0')) FROM generate_series(0, "
      "{0}) n "
      "ON CONFLICT (name) DO NOTHING;"
      "CREATE TEMP TABLE fleet_nodes AS SELECT n, (SELECT id FROM names WHERE name = format('gpu-node-%s', "
      "lpad(n::text, 4, '0'))) AS id FROM generate_series(0, {0}) n;",
      o.fleet_nodes - 1);
  if (auto st = run_sql(conn, sql); !st) return std::move(st).take_error();
  auto template_rows = scalar(conn,
                              "SELECT (SELECT count(*) FROM tpl_functions) + (SELECT count(*) FROM "
                              "tpl_kernels) + (SELECT count(*) FROM tpl_gpus) + (SELECT count(*) FROM "
                              "tpl_gpu_processes)");
  if (!template_rows) return std::move(template_rows).take_error();
  if (*template_rows == 0) return make_error("fleet: node 0's hour was not rolled up (no hour rows to copy)");
  const std::int64_t first_hour = floor_to(now - o.days * kDay, kHour) + kHour;
  const std::int64_t last_hour = floor_to(now, kHour) - kHour;
  // Processes: each node's 100, alive the whole month; a job spans 4 nodes.
  if (auto st = run_sql(
          conn,
          fmt::format("INSERT INTO processes(node, pid, start_ns, comm, cmdline, rank, local_rank, "
                      "world_size, container, "
                      "pod, first_ns, last_ns, exited, pod_uid, namespace, container_name, job, job_step) "
                      "SELECT f.id, p.pid, p.start_ns, p.comm, p.cmdline, p.rank, p.local_rank, "
                      "p.world_size, p.container, "
                      "p.pod, {0}, {1}, 0, p.pod_uid, p.namespace, p.container_name, CASE WHEN p.job <> '' "
                      "THEN 'train-' "
                      "|| ((f.n / 4) * 6 + substr(p.job, 7)::int) ELSE '' END, p.job_step FROM tpl_processes "
                      "p, fleet_nodes f;"
                      "INSERT INTO meta(key, value) SELECT 'written_to:' || format('gpu-node-%s', "
                      "lpad(n::text, 4, '0')), "
                      "{1} FROM fleet_nodes ON CONFLICT(key) DO UPDATE SET value = excluded.value;",
                      first_hour, now));
      !st) {
    return std::move(st).take_error();
  }
  // The month's day tables of the hour tier (the store makes those it writes itself).
  if (auto st = conn.exec(make_days_sql(), PgParams().i32(2).i64(first_hour).i64(last_hour + kHour)); !st)
    return std::move(st).take_error();
  std::int64_t rows = 0;
  const auto t0 = Clock::now();
  for (std::int64_t day = first_hour; day <= last_hour; day += kDay) {
    const std::int64_t to = std::min(last_hour, day + kDay - kHour);
    const std::string hours =
        fmt::format("generate_series({}::bigint, {}::bigint, {}::bigint) h(t)", day, to, kHour);
    std::string day_sql;
    day_sql += fmt::format(
        "INSERT INTO functions SELECT 2, f.id, h.t, x.span_ns, x.pid, x.start_ns, x.domain, x.function, "
        "x.calls, "
        "x.errors, x.bytes, x.timed, x.estimated, x.calls_variance, x.latency FROM {} , fleet_nodes f, "
        "tpl_functions x;",
        hours);
    day_sql += fmt::format(
        "INSERT INTO kernels SELECT 2, f.id, h.t, x.span_ns, x.kernel, x.launches FROM {}, fleet_nodes f, "
        "tpl_kernels "
        "x;",
        hours);
    day_sql += fmt::format(
        "INSERT INTO gpus SELECT 2, f.id, h.t, x.span_ns, x.gpu, x.uuid, x.name, x.samples, x.util_mean, "
        "x.util_max, "
        "x.memory_used_mean, x.memory_used_max, x.memory_total, x.power_mean_w, x.power_max_w, "
        "x.temperature_max "
        "FROM {}, fleet_nodes f, tpl_gpus x;",
        hours);
    day_sql += fmt::format(
        "INSERT INTO gpu_processes SELECT 2, f.id, h.t, x.span_ns, x.gpu, x.pid, x.start_ns, x.samples, "
        "x.memory_max, x.sm_mean FROM {}, fleet_nodes f, tpl_gpu_processes x;",
        hours);
    if (auto st = run_sql(conn, day_sql); !st) return std::move(st).take_error();
    rows += *template_rows * o.fleet_nodes * ((to - day) / kHour + 1);
  }
  const double fill_s = seconds_since(t0);
  std::printf("filled: %lld hour rows (%d nodes x %d days) in %.0f s (%.0f rows/s, INSERT .. SELECT)",
              static_cast<long long>(rows), o.fleet_nodes, o.days, fill_s,
              static_cast<double>(rows) / fill_s);
  std::fflush(stdout);
  const auto v0 = Clock::now();
  if (auto st = run_sql(conn, "VACUUM ANALYZE"); !st) return std::move(st).take_error();
  std::printf(", VACUUM ANALYZE %.0f s\n", seconds_since(v0));
  return rows;
}

struct Timed {
  std::vector<double> ms;
  int rows = 0;
};

// One query `repeat` times.
Result<Timed> time_query(PgConn& conn, const std::string& sql, int repeat) {
  Timed t;
  for (int k = 0; k < repeat; ++k) {
    const auto t0 = Clock::now();
    auto r = conn.query(sql);
    if (!r) return make_error("fleet: " + r.error() + "\n" + sql);
    t.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    t.rows = r->rows();
  }
  return t;
}

int run(const Options& o) {
  const std::int64_t now = now_ns();
  const std::int64_t hour_end = floor_to(now, kHour) - kHour;  // node 0's rolled hour ends here
  const std::int64_t t0 = hour_end - 20LL * 60 * kS;
  {
    auto conn = PgConn::connect(o.url);
    if (!conn) {
      std::fprintf(stderr, "fleet: %s\n", conn.error().c_str());
      return 1;
    }
    std::string drop = "SET client_min_messages = warning;";
    for (const Table* t : tables::kAll) drop += "DROP TABLE IF EXISTS " + std::string(t->name) + ";";
    if (auto st = conn->script(drop); !st) {
      std::fprintf(stderr, "fleet: %s\n", st.error().c_str());
      return 1;
    }
  }
  // 1. Writes.
  const WriteRun w = write_fleet(o, t0, hour_end + 10 * kS, now);
  if (w.failures > 0) return 1;
  auto store = PostgresStore::open(o.url);
  auto conn = PgConn::connect(o.url);
  if (!store || !conn) return 1;
  Retention r;
  r.max_bytes = 0;
  if (auto st = (*store)->maintain(node_name(0), w.last_end_ns, r); !st) {
    std::fprintf(stderr, "fleet: %s\n", st.error().c_str());
    return 1;
  }
  auto written_bytes = (*store)->size_bytes();
  if (!written_bytes) return 1;
  const double rows_s = static_cast<double>(w.rows) / w.seconds;
  const double batches_s = static_cast<double>(w.batches) / w.seconds;
  const double node_days = static_cast<double>(w.batches) * 10 / 86400;
  std::printf(
      "writes: %d writers, %.0f s, %llu intervals (%llu rows): %.0f rows/s, %.1f intervals/s = %.0f nodes at "
      "one "
      "interval per 10 s; write ms p50 %.1f p95 %.1f; maintain ms p50 %.1f p95 %.1f; %.0f MiB = %.2f GiB per "
      "node-day (raw rows and their minute rollups)\n",
      o.writers, w.seconds, static_cast<unsigned long long>(w.batches),
      static_cast<unsigned long long>(w.rows), rows_s, batches_s, batches_s * 10, pct(w.write_ms, 0.5),
      pct(w.write_ms, 0.95), pct(w.maintain_ms, 0.5), pct(w.maintain_ms, 0.95),
      static_cast<double>(*written_bytes) / 1048576,
      static_cast<double>(*written_bytes) / node_days / 1073741824);
  std::fflush(stdout);

  // 2. The month.
  auto rows = fill_fleet(*conn, o, hour_end - kHour, now);
  if (!rows) {
    std::fprintf(stderr, "%s\n", rows.error().c_str());
    return 1;
  }
  // Each node's maintenance then makes the job report's rollups of the month's hours
  // (job_rollup.h), as a store made before them gets them once.
  const auto j0 = Clock::now();
  for (int n = 0; n < o.fleet_nodes; ++n) {
    if (auto st = (*store)->maintain(node_name(n), now, r); !st) {
      std::fprintf(stderr, "fleet: maintain: %s\n", st.error().c_str());
      return 1;
    }
  }
  const double rollup_s = seconds_since(j0);
  if (auto st = run_sql(*conn, "VACUUM ANALYZE job_gpus, job_calls, namespace_gpus, job_functions"); !st) {
    std::fprintf(stderr, "%s\n", st.error().c_str());
    return 1;
  }
  auto rolled = scalar(*conn, "SELECT (SELECT count(*) FROM job_gpus) + (SELECT count(*) FROM job_calls)");
  auto per_job = scalar(*conn, "SELECT count(*) FROM job_functions");
  if (!rolled || !per_job) return 1;
  std::printf(
      "job rollups: %lld rows (job_gpus, job_calls) and %lld of calls per job (job_functions) made by the "
      "nodes' maintenance in %.1f s\n",
      static_cast<long long>(*rolled), static_cast<long long>(*per_job), rollup_s);
  auto month_bytes = (*store)->size_bytes();
  if (!month_bytes) return 1;
  std::printf(
      "the month: %lld rows, %.0f MiB: %.1f MiB per node-day of hour rows (%.2f GiB per node for %d days)\n",
      static_cast<long long>(*rows), static_cast<double>(*month_bytes) / 1048576,
      static_cast<double>(*month_bytes) / (o.fleet_nodes * o.days) / 1048576,
      static_cast<double>(*month_bytes) / o.fleet_nodes / 1073741824, o.days);
  std::fflush(stdout);

  // 3. The dashboards.
  std::vector<std::string> dashboards = o.dashboards;
  if (dashboards.empty()) dashboards.emplace_back("deploy/grafana/dashboards/history.json");
  std::vector<std::string> names;
  std::map<std::string, std::map<std::string, Timed>> times;
  struct Selection {
    std::string name;
    std::map<std::string, grafana::Choice> choice;
  };
  const std::vector<Selection> selections = {
      {"All", {}},
      {"one node", {{"node", {false, {node_name(0)}}}}},
  };
  for (const std::string& path : dashboards) {
    std::ifstream in(path);
    if (!in) {
      std::fprintf(stderr, "fleet: cannot read %s\n", path.c_str());
      return 1;
    }
    const auto doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded()) {
      std::fprintf(stderr, "fleet: %s is not JSON\n", path.c_str());
      return 1;
    }
    const std::string file = std::filesystem::path(path).filename().string();
    auto vars = grafana::dashboard_variables(doc);
    const auto texts = grafana::dashboard_texts(doc);  // the textboxes at their defaults
    const auto panels = grafana::dashboard_queries(doc);
    const grafana::Range range{now_ns() - o.days * kDay, now_ns()};
    // Per query (variables first, then panels), per selection: the times.
    for (const auto& v : vars) names.push_back(file + " $" + v.name + " (variable)");
    for (const auto& p : panels) names.push_back(file + " " + p.where);
    for (const auto& s : selections) {
      for (auto& v : vars) {
        const std::string sql = grafana::grafana_sql(v.sql, range, vars, s.choice);
        auto t = time_query(*conn, sql, o.repeat);
        if (!t) {
          std::fprintf(stderr, "%s\n", t.error().c_str());
          return 1;
        }
        times[file + " $" + v.name + " (variable)"][s.name] = *t;
        auto opts = conn->query(sql);
        if (!opts) return 1;
        v.options.clear();
        for (int i = 0; i < opts->rows(); ++i) v.options.push_back(opts->text(i, 0));
      }
      for (const auto& p : panels) {
        auto t = time_query(*conn,
                            grafana::grafana_text(grafana::grafana_sql(p.sql, range, vars, s.choice), texts),
                            o.repeat);
        if (!t) {
          std::fprintf(stderr, "%s: %s\n", p.where.c_str(), t.error().c_str());
          return 1;
        }
        times[file + " " + p.where][s.name] = *t;
      }
    }
  }
  std::printf("\nthe dashboards, last %d days (hour rows), %d nodes, %d runs each: p50 / p95 ms (rows)\n",
              o.days, o.fleet_nodes, o.repeat);
  std::printf("| query |");
  for (const auto& s : selections) std::printf(" %s |", s.name.c_str());
  std::printf("\n|---|");
  for (std::size_t i = 0; i < selections.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (const auto& n : names) {
    std::printf("| %s |", n.c_str());
    for (const auto& s : selections) {
      const Timed& t = times[n][s.name];
      std::printf(" %.0f / %.0f (%d) |", pct(t.ms, 0.5), pct(t.ms, 0.95), t.rows);
    }
    std::printf("\n");
  }

  // The fleet at 1,000 nodes: "All" reads every node's rows of the window (the time
  // grows with the rows: x 1000 / fleet-nodes, in memory as here; more from disk).
  std::printf("\n| query | All, %d nodes, p50 | 1,000 nodes (extrapolated: x %.0f) |\n|---|---|---|\n",
              o.fleet_nodes, 1000.0 / o.fleet_nodes);
  for (const auto& n : names) {
    const double all = pct(times[n]["All"].ms, 0.5);
    std::printf("| %s | %.0f ms | %.0f s |\n", n.c_str(), all, all * 1000 / o.fleet_nodes / 1000);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  Options o;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "fleet: %s needs a value\n", a.c_str());
      return 2;
    }
    const char* v = argv[i + 1];
    if (a == "--url") {
      o.url = v;
    } else if (a == "--writers") {
      o.writers = std::atoi(v);
    } else if (a == "--write-seconds") {
      o.write_seconds = std::atof(v);
    } else if (a == "--fleet-nodes") {
      o.fleet_nodes = std::atoi(v);
    } else if (a == "--days") {
      o.days = std::atoi(v);
    } else if (a == "--repeat") {
      o.repeat = std::atoi(v);
    } else if (a == "--dashboard") {
      o.dashboards.emplace_back(v);
    } else {
      std::fprintf(stderr, "fleet: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (o.url.empty() || o.writers < 1 || o.fleet_nodes < 1 || o.days < 1 || o.repeat < 1) {
    std::fprintf(
        stderr,
        "usage: %s --url URL [--writers 8] [--write-seconds 60] [--fleet-nodes 8] [--days 30] [--repeat 5] "
        "[--dashboard deploy/grafana/dashboards/history.json]\n",
        argv[0]);
    return 2;
  }
  return run(o);
} catch (const std::exception& e) {
  std::fprintf(stderr, "fleet: %s\n", e.what());
  return 1;
}
