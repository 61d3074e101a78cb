// The SQLite history's queries: the lists both stores share (window_sql.h), and the
// functions summed in SQL (their sketches merged by eacgm_merge), each over the ranges of
// tiers its window is read from.
#include <fmt/format.h>

#include <variant>

#include "history/job_report_sql.h"
#include "history/schema_rows.h"
#include "history/sqlite_store.h"

namespace eacgm::history {
namespace {

constexpr std::int64_t kMinuteNs = 60'000'000'000;

void bind(SqliteStmt& stmt, const QuerySql& sql) {
  for (std::size_t i = 0; i < sql.args.size(); ++i) {
    const int at = static_cast<int>(i) + 1;
    if (const auto* n = std::get_if<std::int64_t>(&sql.args[i])) {
      stmt.bind(at, *n);
    } else if (const auto* t = std::get_if<std::string>(&sql.args[i])) {
      stmt.bind(at, std::string_view(*t));
    }
  }
}

}  // namespace

Status SqliteStore::each_row(const QuerySql& sql, const std::function<void(const SqliteStmt&)>& fn) {
  auto s = db_.prepare(sql.text);
  if (!s) return make_error(s.error());
  bind(*s, sql);
  for (;;) {
    auto row = s->step();
    if (!row) return make_error(row.error());
    if (!*row) return {};
    fn(*s);
  }
}

Status SqliteStore::run(const QuerySql& sql) {
  return each_row(sql, [](const SqliteStmt&) {});
}

Result<WindowPlan> SqliteStore::plan(const HistoryQuery& q, Tier tier) {
  std::vector<NodeMarks> nodes;
  auto st = each_row(node_marks_sql(Dialect::kSqlite, q, tier),
                     [&nodes](const SqliteStmt& s) { nodes.push_back(get_node_marks(s)); });
  if (!st) return std::move(st).take_error();
  return plan_window(nodes, tier, q);
}

Result<ProcessPage> SqliteStore::processes(const HistoryQuery& q, Tier tier) {
  auto plan = this->plan(q, tier);
  if (!plan) return std::move(plan).take_error();
  ProcessPage page;
  auto st = each_row(
      process_list_sql(Dialect::kSqlite, ProcessList::kProcesses, q, *plan), [&page](const SqliteStmt& s) {
        StoredProcess p;
        const int col = get_row(s, 0, p);
        p.calls = static_cast<std::uint64_t>(s.i64(col));
        p.errors = static_cast<std::uint64_t>(s.i64(col + 1));
        page.totals = {static_cast<std::uint64_t>(s.i64(col + 2)), static_cast<std::uint64_t>(s.i64(col + 3)),
                       static_cast<std::uint64_t>(s.i64(col + 4)),
                       static_cast<std::uint64_t>(s.i64(col + 5))};
        page.rows.push_back(std::move(p));
      });
  if (!st) return std::move(st).take_error();
  count_from_first_page(q, page.rows.empty(), [&](const HistoryQuery& first) {
    if (auto r = processes(first, tier)) page.totals = r->totals;
  });
  return page;
}

Result<Page<StoredJob>> SqliteStore::jobs(const HistoryQuery& q, Tier tier) {
  auto plan = this->plan(q, tier);
  if (!plan) return std::move(plan).take_error();
  Page<StoredJob> page;
  auto st = each_row(process_list_sql(Dialect::kSqlite, ProcessList::kJobs, q, *plan),
                     [&page](const SqliteStmt& s) { page.rows.push_back(get_job(s, page.total)); });
  if (!st) return std::move(st).take_error();
  count_from_first_page(q, page.rows.empty(), [&](const HistoryQuery& first) {
    if (auto r = jobs(first, tier)) page.total = r->total;
  });
  return page;
}

Result<Page<StoredNode>> SqliteStore::nodes(const HistoryQuery& q, Tier tier) {
  auto plan = this->plan(q, tier);
  if (!plan) return std::move(plan).take_error();
  Page<StoredNode> page;
  auto st = each_row(process_list_sql(Dialect::kSqlite, ProcessList::kNodes, q, *plan),
                     [&page](const SqliteStmt& s) { page.rows.push_back(get_node(s, page.total)); });
  if (!st) return std::move(st).take_error();
  count_from_first_page(q, page.rows.empty(), [&](const HistoryQuery& first) {
    if (auto r = nodes(first, tier)) page.total = r->total;
  });
  return page;
}

Result<std::vector<StoredFunction>> SqliteStore::functions(const HistoryQuery& q, Tier tier) {
  auto plan = this->plan(q, tier);
  if (!plan) return std::move(plan).take_error();
  // A process's functions are in its own rows; every process's together in the totals.
  const Table& table = !q.pid && !q.comm && plan->totals ? tables::kFunctionTotals : tables::kFunctions;
  QuerySql s(Dialect::kSqlite);
  s.text = ranges_cte(s, plan->ranges);
  s.text += fmt::format(" SELECT {}, {}, {} FROM {} WHERE true", name_by_id("t.domain"),
                        name_by_id("t.function"), aggregates(Dialect::kSqlite, table, "calls", "t"),
                        over_ranges(Dialect::kSqlite, table.name));
  s.text += row_filters(s, q, false) + " GROUP BY t.domain, t.function ORDER BY 3 DESC, 1, 2";
  std::vector<StoredFunction> out;
  auto st = each_row(s, [&out](const SqliteStmt& row) {
    StoredFunction f;
    RowReader<SqliteStmt> r{row};
    fields(r, f.domain, f.function);
    function_sums(f, r);
    out.push_back(std::move(f));
  });
  if (!st) return std::move(st).take_error();
  return out;
}

Result<std::vector<StoredKernel>> SqliteStore::kernels(const HistoryQuery& q, Tier tier) {
  auto plan = this->plan(q, tier);
  if (!plan) return std::move(plan).take_error();
  std::vector<StoredKernel> out;
  auto st = each_row(kernels_sql(Dialect::kSqlite, *plan), [&out](const SqliteStmt& s) {
    StoredKernel k;
    RowReader<SqliteStmt> r{s};
    kernel_fields(k, r);
    out.push_back(std::move(k));
  });
  if (!st) return std::move(st).take_error();
  return out;
}

Result<std::vector<StoredGpuPoint>> SqliteStore::gpus(const HistoryQuery& q, Tier tier) {
  // Points of any step, so from the tier asked for (an hour's row is not split in steps).
  const std::int64_t step = q.step_ns > 0 ? q.step_ns : kMinuteNs;
  QuerySql s(Dialect::kSqlite);
  s.args = {step, step, static_cast<std::int64_t>(tier), q.from_ns, q.to_ns};
  std::string where = "t.tier = ? AND t.t_ns >= ? AND t.t_ns < ?";
  if (q.node) {
    where += " AND t.node = (SELECT id FROM names WHERE name = ?)";
    s.args.emplace_back(*q.node);
  }
  s.text = gpu_points_sql(Dialect::kSqlite, "?", where);
  std::vector<StoredGpuPoint> out;
  auto st = each_row(s, [&out](const SqliteStmt& row) { out.push_back(get_gpu_point(row)); });
  if (!st) return std::move(st).take_error();
  return out;
}

Result<std::vector<HeldGpuRow>> SqliteStore::held_gpus(const HistoryQuery& q, const JobSelector& selector,
                                                       Tier tier) {
  auto plan = this->plan(q, tier);
  if (!plan) return std::move(plan).take_error();
  std::vector<HeldGpuRow> out;
  auto st = each_row(held_gpus_sql(Dialect::kSqlite, q, selector, *plan),
                     [&out](const SqliteStmt& s) { out.push_back(get_held_gpu(s)); });
  if (!st) return std::move(st).take_error();
  return out;
}

Result<JobTimeRows> SqliteStore::job_time_rows(const HistoryQuery& q, const JobSelector& selector,
                                               Tier tier) {
  auto plan = this->plan(q, tier);
  if (!plan) return std::move(plan).take_error();
  JobTimeRows out;
  auto st = each_row(job_lives_sql(Dialect::kSqlite, q, selector),
                     [&out](const SqliteStmt& s) { out.processes.push_back(get_job_life(s)); });
  if (st) {
    st = each_row(job_functions_sql(Dialect::kSqlite, q, selector, *plan),
                  [&out](const SqliteStmt& s) { out.functions.push_back(get_job_function(s)); });
  }
  if (st) {
    st = each_row(job_calls_sql(Dialect::kSqlite, q, selector, *plan),
                  [&out](const SqliteStmt& s) { out.functions.push_back(get_job_calls(s)); });
  }
  if (!st) return std::move(st).take_error();
  return out;
}

Result<Page<StoredAnomaly>> SqliteStore::anomalies(const HistoryQuery& q) {
  Page<StoredAnomaly> page;
  auto st = each_row(anomalies_page_sql(Dialect::kSqlite, q), [&page](const SqliteStmt& s) {
    StoredAnomaly a;
    page.total = static_cast<std::uint64_t>(s.i64(get_row(s, 0, a)));
    page.rows.push_back(std::move(a));
  });
  if (!st) return std::move(st).take_error();
  count_from_first_page(q, page.rows.empty(), [&](const HistoryQuery& first) {
    if (auto r = anomalies(first)) page.total = r->total;
  });
  return page;
}

Result<Page<StoredLeak>> SqliteStore::leaks(const HistoryQuery& q) {
  Page<StoredLeak> page;
  auto st = each_row(leaks_page_sql(Dialect::kSqlite, q), [&page](const SqliteStmt& s) {
    StoredLeak l;
    const int col = get_row(s, 0, l);
    l.comm = s.text(col);
    page.total = static_cast<std::uint64_t>(s.i64(col + 1));
    page.rows.push_back(std::move(l));
  });
  if (!st) return std::move(st).take_error();
  count_from_first_page(q, page.rows.empty(), [&](const HistoryQuery& first) {
    if (auto r = leaks(first)) page.total = r->total;
  });
  return page;
}

}  // namespace eacgm::history
