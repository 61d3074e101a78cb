// The PostgreSQL history's queries: the lists both stores share (window_sql.h), answered
// alike. Function rows stream out and add up here (their latency sketches merge in C++).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <variant>

#include "history/job_report_sql.h"
#include "history/pg_rows.h"
#include "history/postgres_store.h"
#include "history/schema_sql.h"

namespace eacgm::history {
namespace {

constexpr std::int64_t kMinuteNs = 60'000'000'000;

PgParams params_of(const QuerySql& sql) {
  PgParams p;
  for (const auto& a : sql.args) {
    if (const auto* n = std::get_if<std::int64_t>(&a)) {
      p.i64(*n);
    } else if (const auto* t = std::get_if<std::string>(&a)) {
      p.text(*t);
    } else {
      p.i64_array(std::get<std::vector<std::int64_t>>(a));
    }
  }
  return p;
}

}  // namespace

Result<PgResult> PostgresStore::query(const QuerySql& sql) { return conn_.query(sql.text, params_of(sql)); }

Status PostgresStore::exec(const QuerySql& sql) { return conn_.exec(sql.text, params_of(sql)); }

Result<WindowPlan> PostgresStore::plan(const HistoryQuery& q, Tier tier) {
  auto r = query(node_marks_sql(Dialect::kPostgres, q, tier));
  if (!r) return std::move(r).take_error();
  std::vector<NodeMarks> nodes;
  nodes.reserve(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) nodes.push_back(get_node_marks(PgRow(*r, i)));
  return plan_window(nodes, tier, q);
}

Result<ProcessPage> PostgresStore::processes(const HistoryQuery& q, Tier tier) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  auto plan = this->plan(q, tier);
  if (!plan) return std::move(plan).take_error();
  auto r = query(process_list_sql(Dialect::kPostgres, ProcessList::kProcesses, q, *plan));
  if (!r) return std::move(r).take_error();
  ProcessPage page;
  page.rows.reserve(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) {
    StoredProcess p;
    const PgRow row(*r, i);
    const int col = get_row(row, 0, p);
    p.calls = static_cast<std::uint64_t>(row.i64(col));
    p.errors = static_cast<std::uint64_t>(row.i64(col + 1));
    page.totals = {static_cast<std::uint64_t>(row.i64(col + 2)), static_cast<std::uint64_t>(row.i64(col + 3)),
                   static_cast<std::uint64_t>(row.i64(col + 4)),
                   static_cast<std::uint64_t>(row.i64(col + 5))};
    page.rows.push_back(std::move(p));
  }
  count_from_first_page(q, page.rows.empty(), [&](const HistoryQuery& first) {
    if (auto f = processes(first, tier)) page.totals = f->totals;
  });
  return page;
}

Result<Page<StoredJob>> PostgresStore::jobs(const HistoryQuery& q, Tier tier) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  auto plan = this->plan(q, tier);
  if (!plan) return std::move(plan).take_error();
  auto r = query(process_list_sql(Dialect::kPostgres, ProcessList::kJobs, q, *plan));
  if (!r) return std::move(r).take_error();
  Page<StoredJob> page;
  for (int i = 0; i < r->rows(); ++i) page.rows.push_back(get_job(PgRow(*r, i), page.total));
  count_from_first_page(q, page.rows.empty(), [&](const HistoryQuery& first) {
    if (auto f = jobs(first, tier)) page.total = f->total;
  });
  return page;
}

Result<Page<StoredNode>> PostgresStore::nodes(const HistoryQuery& q, Tier tier) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  auto plan = this->plan(q, tier);
  if (!plan) return std::move(plan).take_error();
  auto r = query(process_list_sql(Dialect::kPostgres, ProcessList::kNodes, q, *plan));
  if (!r) return std::move(r).take_error();
  Page<StoredNode> page;
  for (int i = 0; i < r->rows(); ++i) page.rows.push_back(get_node(PgRow(*r, i), page.total));
  count_from_first_page(q, page.rows.empty(), [&](const HistoryQuery& first) {
    if (auto f = nodes(first, tier)) page.total = f->total;
  });
  return page;
}

Result<std::vector<StoredFunction>> PostgresStore::functions(const HistoryQuery& q, Tier tier) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  auto plan = this->plan(q, tier);
  if (!plan) return std::move(plan).take_error();
  // A process's functions are in its own rows; every process's together in the totals.
  const Table& table = !q.pid && !q.comm && plan->totals ? tables::kFunctionTotals : tables::kFunctions;
  QuerySql s(Dialect::kPostgres);
  s.text = ranges_cte(s, plan->ranges);
  s.text += fmt::format(" SELECT t.domain, t.function, {} FROM {} WHERE true",
                        column_list(table, "calls", "t"), over_ranges(Dialect::kPostgres, table.name));
  s.text += row_filters(s, q, false);
  std::map<std::pair<std::int32_t, std::int32_t>, FunctionSums> sums;
  auto st = conn_.each_row(s.text, params_of(s), [&sums](const PgResult& r) {
    sums[{static_cast<std::int32_t>(r.i64(0, 0)), static_cast<std::int32_t>(r.i64(0, 1))}].add(
        read_sums(r, 0, 2));
  });
  if (!st) return std::move(st).take_error();
  std::vector<std::int32_t> ids;
  for (const auto& [key, _] : sums) ids.insert(ids.end(), {key.first, key.second});
  std::map<std::int32_t, std::string> names;
  if (!ids.empty()) {
    auto r = conn_.query("SELECT id, name FROM names WHERE id = ANY($1)", PgParams().i32_array(ids));
    if (!r) return std::move(r).take_error();
    for (int i = 0; i < r->rows(); ++i) names[static_cast<std::int32_t>(r->i64(i, 0))] = r->text(i, 1);
  }
  std::vector<StoredFunction> out;
  out.reserve(sums.size());
  for (auto& [key, v] : sums) {
    StoredFunction f;
    f.domain = names[key.first];
    f.function = names[key.second];
    f.calls = v.calls;
    f.errors = v.errors;
    f.bytes = v.bytes;
    f.timed = v.timed;
    f.estimated = v.estimated;
    f.calls_variance = v.calls_variance;
    f.latency = std::move(v.latency);
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), [](const StoredFunction& a, const StoredFunction& b) {
    if (a.calls != b.calls) return a.calls > b.calls;
    if (a.domain != b.domain) return a.domain < b.domain;
    return a.function < b.function;
  });
  return out;
}

Result<std::vector<StoredKernel>> PostgresStore::kernels(const HistoryQuery& q, Tier tier) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  auto plan = this->plan(q, tier);
  if (!plan) return std::move(plan).take_error();
  auto r = query(kernels_sql(Dialect::kPostgres, *plan));
  if (!r) return std::move(r).take_error();
  std::vector<StoredKernel> out;
  out.reserve(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) {
    StoredKernel k;
    const PgRow row(*r, i);
    RowReader<PgRow> reader{row};
    kernel_fields(k, reader);
    out.push_back(std::move(k));
  }
  return out;
}

Result<std::vector<StoredGpuPoint>> PostgresStore::gpus(const HistoryQuery& q, Tier tier) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  // Points of any step, so from the tier asked for (an hour's row is not split in steps).
  QuerySql s(Dialect::kPostgres);
  const std::string step = s.arg(q.step_ns > 0 ? q.step_ns : kMinuteNs);
  const std::string at_tier = s.arg(static_cast<std::int64_t>(tier));
  const std::string from = s.arg(q.from_ns);
  const std::string to = s.arg(q.to_ns);
  std::string where = fmt::format("t.tier = {} AND t.t_ns >= {} AND t.t_ns < {}", at_tier, from, to);
  if (q.node) where += fmt::format(" AND t.node = (SELECT id FROM names WHERE name = {})", s.arg(*q.node));
  s.text = gpu_points_sql(Dialect::kPostgres, step, where);
  auto r = query(s);
  if (!r) return std::move(r).take_error();
  std::vector<StoredGpuPoint> out;
  out.reserve(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) out.push_back(get_gpu_point(PgRow(*r, i)));
  return out;
}

Result<std::vector<HeldGpuRow>> PostgresStore::held_gpus(const HistoryQuery& q, const JobSelector& selector,
                                                         Tier tier) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  auto plan = this->plan(q, tier);
  if (!plan) return std::move(plan).take_error();
  // A namespace's rolled hours from its own rollup (namespace_rollup.h).
  const bool combined = selector.by == JobSelector::By::kNamespace;
  auto r = query(held_gpus_sql(Dialect::kPostgres, q, selector, *plan, combined));
  if (!r) return std::move(r).take_error();
  std::vector<HeldGpuRow> out;
  out.reserve(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) {
    const PgRow row(*r, i);
    out.push_back(get_held_gpu(row));
    if (combined) out.back().together = get_held_together(row);
  }
  return out;
}

Result<JobTimeRows> PostgresStore::job_time_rows(const HistoryQuery& q, const JobSelector& selector,
                                                 Tier tier) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  auto plan = this->plan(q, tier);
  if (!plan) return std::move(plan).take_error();
  JobTimeRows out;
  auto lives = query(job_lives_sql(Dialect::kPostgres, q, selector));
  if (!lives) return std::move(lives).take_error();
  for (int i = 0; i < lives->rows(); ++i) out.processes.push_back(get_job_life(PgRow(*lives, i)));
  const QuerySql rows = job_functions_sql(Dialect::kPostgres, q, selector, *plan);
  auto st = conn_.each_row(rows.text, params_of(rows), [&out](const PgResult& r) {
    out.functions.push_back(get_job_function(PgRow(r, 0)));
  });
  if (!st) return std::move(st).take_error();
  auto rolled = query(job_calls_sql(Dialect::kPostgres, q, selector, *plan));
  if (!rolled) return std::move(rolled).take_error();
  for (int i = 0; i < rolled->rows(); ++i) out.functions.push_back(get_job_calls(PgRow(*rolled, i)));
  return out;
}

Result<Page<StoredAnomaly>> PostgresStore::anomalies(const HistoryQuery& q) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  auto r = query(anomalies_page_sql(Dialect::kPostgres, q));
  if (!r) return std::move(r).take_error();
  Page<StoredAnomaly> page;
  page.rows.resize(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) {
    const PgRow row(*r, i);
    page.total = static_cast<std::uint64_t>(row.i64(get_row(row, 0, page.rows[static_cast<std::size_t>(i)])));
  }
  count_from_first_page(q, page.rows.empty(), [&](const HistoryQuery& first) {
    if (auto f = anomalies(first)) page.total = f->total;
  });
  return page;
}

Result<Page<StoredLeak>> PostgresStore::leaks(const HistoryQuery& q) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  auto r = query(leaks_page_sql(Dialect::kPostgres, q));
  if (!r) return std::move(r).take_error();
  Page<StoredLeak> page;
  page.rows.resize(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) {
    const PgRow row(*r, i);
    auto& l = page.rows[static_cast<std::size_t>(i)];
    const int col = get_row(row, 0, l);
    l.comm = row.text(col);
    page.total = static_cast<std::uint64_t>(row.i64(col + 1));
  }
  count_from_first_page(q, page.rows.empty(), [&](const HistoryQuery& first) {
    if (auto f = leaks(first)) page.total = f->total;
  });
  return page;
}

}  // namespace eacgm::history
