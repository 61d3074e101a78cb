// A window's lists in SQL, rendered for either store.
#include "history/window_sql.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace eacgm::history {
namespace {

bool lite(Dialect d) { return d == Dialect::kSqlite; }

// One of a list's values per group, ","-joined.
std::string joined(Dialect d, std::string_view expr) {
  return lite(d) ? fmt::format("group_concat(DISTINCT CAST({} AS TEXT))", expr)
                 : fmt::format("string_agg(DISTINCT CAST({} AS TEXT), ',')", expr);
}

// Text sorted by its bytes (PostgreSQL's collation may differ from SQLite's).
std::string bytewise(Dialect d, std::string_view expr) {
  return lite(d) ? std::string(expr) : fmt::format("{} COLLATE \"C\"", expr);
}

// "c": each process's calls and errors over the ranges, from the totals or from every
// function row but the GPU time's.
std::string process_calls(QuerySql& s, const HistoryQuery& q, const WindowPlan& plan) {
  std::string sql = fmt::format(
      "c AS (SELECT t.node, t.pid, t.start_ns, SUM(t.calls) AS calls, SUM(t.errors) AS errors FROM {} WHERE "
      "true",
      over_ranges(s.dialect, plan.totals ? tables::kProcessTotals.name : tables::kFunctions.name));
  if (!plan.totals) {
    sql += fmt::format(" AND t.domain <> coalesce((SELECT id FROM names WHERE name = {}), -1)",
                       s.arg(std::string(kGpuTimeDomain)));
  }
  if (q.pid) sql += fmt::format(" AND t.pid = {}", s.arg(static_cast<std::int64_t>(*q.pid)));
  return sql + " GROUP BY t.node, t.pid, t.start_ns)";
}

// "p": the processes seen in the window (alive in it), with their calls in it: all their
// columns (`t.*`), or for `narrow` only the key and `exited`, which is what ranking them
// needs (a window of a day holds hundreds of thousands; their text columns are read for
// the page's rows alone).
std::string window_processes(QuerySql& s, const HistoryQuery& q, bool jobs_only, bool narrow) {
  std::string sql = fmt::format(
      "p AS (SELECT {}, coalesce(c.calls, 0) AS w_calls, coalesce(c.errors, 0) AS w_errors FROM processes t "
      "LEFT JOIN c ON c.node = t.node AND c.pid = t.pid AND c.start_ns = t.start_ns WHERE {}",
      narrow ? "t.node, t.pid, t.start_ns, t.exited" : "t.*", alive_in_window(s, q, "t"));
  if (q.pid) sql += fmt::format(" AND t.pid = {}", s.arg(static_cast<std::int64_t>(*q.pid)));
  if (q.comm) sql += fmt::format(" AND t.comm = {}", s.arg(*q.comm));
  if (jobs_only) sql += " AND t.job <> ''";
  return sql + ")";
}

// The page of `list` (alias `l`, ordered by `order`), the window's count as `n_total`.
std::string page(QuerySql& s, const HistoryQuery& q, std::string_view list, std::string_view order) {
  const std::string limit = s.arg(static_cast<std::int64_t>(q.limit));
  const std::string offset = s.arg(static_cast<std::int64_t>(q.offset));
  return fmt::format("(SELECT l.*, COUNT(*) OVER () AS n_total FROM {} l ORDER BY {} LIMIT {} OFFSET {}) q",
                     list, order, limit, offset);
}

// "t.t_ns >= ? AND t.t_ns < ?" and the filters of `q`.
std::string events_where(QuerySql& s, const HistoryQuery& q) {
  const std::string from = s.arg(q.from_ns);
  const std::string to = s.arg(q.to_ns);
  std::string where = fmt::format("t.t_ns >= {} AND t.t_ns < {}", from, to);
  where += row_filters(s, q, true);
  return where;
}

}  // namespace

std::string QuerySql::add(Arg v) {
  args.push_back(std::move(v));
  return lite(dialect) ? std::string("?") : fmt::format("${}", args.size());
}

QuerySql node_marks_sql(Dialect d, const HistoryQuery& q, Tier tier) {
  QuerySql s(d);
  const std::string t = s.arg(static_cast<std::int64_t>(tier));
  s.text = fmt::format(
      "SELECT n.id, coalesce((SELECT value FROM meta WHERE key = 'rolled_1m:' || n.name), 0), "
      "coalesce((SELECT value FROM meta WHERE key = 'rolled_1h:' || n.name), 0), "
      "(SELECT f.t_ns FROM functions f WHERE f.tier = {} AND f.node = n.id ORDER BY f.t_ns LIMIT 1), "
      "w.value, "
      "(SELECT value FROM meta WHERE key = 'totals_from:' || n.name), "
      "coalesce((SELECT value FROM meta WHERE key = 'rolled_jobs:' || n.name), 0), "
      "(SELECT value FROM meta WHERE key = 'shipped_to:' || n.name) FROM meta w JOIN names n "
      "ON n.name = "
      "substr(w.key, 12) WHERE substr(w.key, 1, 11) = 'written_to:'",
      t);
  if (q.node) s.text += fmt::format(" AND n.name = {}", s.arg(*q.node));
  return s;
}

WindowPlan plan_window(const std::vector<NodeMarks>& nodes, Tier tier, const HistoryQuery& q) {
  WindowPlan plan;
  plan.totals = true;
  for (const NodeMarks& n : nodes) {
    auto part = tier_ranges(n.rollups, tier, q.from_ns, q.to_ns);
    plan.ranges.insert(plan.ranges.end(), part.begin(), part.end());
    plan.jobs_rolled_to.emplace_back(n.rollups.node, n.rollups.rolled_jobs);
    // A node whose rows end before the window has none in it.
    if (n.written_to > q.from_ns && (!n.totals_from || *n.totals_from > q.from_ns)) plan.totals = false;
  }
  return plan;
}

std::string ranges_cte(QuerySql& s, const std::vector<TierRange>& ranges) {
  if (!lite(s.dialect)) {
    std::vector<std::int64_t> tier, node, lo, hi;
    for (const auto& r : ranges) {
      tier.push_back(r.tier);
      node.push_back(r.node);
      lo.push_back(r.lo);
      hi.push_back(r.hi);
    }
    const std::string a = s.arg(std::move(tier));
    const std::string b = s.arg(std::move(node));
    const std::string c = s.arg(std::move(lo));
    const std::string e = s.arg(std::move(hi));
    return fmt::format(
        "WITH r(tier, node, lo, hi) AS (SELECT * FROM unnest({}::int8[], {}::int8[], {}::int8[], "
        "{}::int8[]))",
        a, b, c, e);
  }
  std::string values;
  for (const auto& r : ranges) {
    const std::string tier = s.arg(static_cast<std::int64_t>(r.tier));
    const std::string node = s.arg(static_cast<std::int64_t>(r.node));
    const std::string lo = s.arg(r.lo);
    const std::string hi = s.arg(r.hi);
    values += fmt::format("{}({}, {}, {}, {})", values.empty() ? "" : ", ", tier, node, lo, hi);
  }
  // VALUES needs a row: an empty range.
  return fmt::format("WITH r(tier, node, lo, hi) AS (VALUES {})", values.empty() ? "(0, 0, 0, 0)" : values);
}

std::string over_ranges(Dialect d, std::string_view table, std::string_view ranges) {
  // SQLite: the ranges lead (CROSS JOIN keeps them outside), each one range of the key.
  // PostgreSQL: the subquery is kept whole (OFFSET 0): joined as a table, the ranges'
  // bounds would be unknown to the planner, which would scan the whole table.
  if (lite(d)) {
    return fmt::format(
        "{1} r CROSS JOIN {0} t ON t.tier = r.tier AND t.node = r.node AND t.t_ns >= r.lo AND t.t_ns < r.hi",
        table, ranges);
  }
  return fmt::format(
      "{1} r CROSS JOIN LATERAL (SELECT * FROM {0} x WHERE x.tier = r.tier AND x.node = r.node AND x.t_ns >= "
      "r.lo AND x.t_ns < r.hi OFFSET 0) t",
      table, ranges);
}

QuerySql process_list_sql(Dialect d, ProcessList list, const HistoryQuery& q, const WindowPlan& plan) {
  QuerySql s(d);
  const std::string ranges = ranges_cte(s, plan.ranges);
  const std::string calls = process_calls(s, q, plan);
  const std::string processes =
      window_processes(s, q, list == ProcessList::kJobs, list == ProcessList::kProcesses);
  const std::string with = fmt::format("{}, {}, {} ", ranges, calls, processes);
  const std::string running = "SUM(CASE WHEN p.exited = 0 THEN 1 ELSE 0 END)";
  switch (list) {
    case ProcessList::kProcesses: {
      const std::string order = "l.w_calls DESC, l.node, l.pid, l.start_ns";
      s.text =
          with +
          fmt::format(
              "SELECT {}, CAST(q.w_calls AS BIGINT), CAST(q.w_errors AS BIGINT), q.n_total, "
              "CAST(q.n_running AS BIGINT), CAST(q.n_calls AS BIGINT), CAST(q.n_errors AS BIGINT) "
              "FROM {} JOIN processes x ON x.node = q.node AND x.pid = q.pid AND x.start_ns = q.start_ns "
              "ORDER BY q.w_calls DESC, q.node, q.pid, q.start_ns",
              read_columns(tables::kProcesses, "x"),
              page(s, q,
                   fmt::format("(SELECT p.*, {} OVER () AS n_running, SUM(p.w_calls) OVER () AS n_calls, "
                               "SUM(p.w_errors) OVER () AS n_errors FROM p)",
                               running),
                   order));
      break;
    }
    case ProcessList::kJobs: {
      const std::string pod =
          "CASE WHEN p.pod <> '' THEN (CASE WHEN p.namespace <> '' THEN p.namespace || '/' || p.pod ELSE "
          "p.pod "
          "END) END";
      const std::string jobs = fmt::format(
          "(SELECT p.job, COUNT(*) AS processes, {} AS running, SUM(p.w_calls) AS calls, SUM(p.w_errors) AS "
          "errors, MIN(p.first_ns) AS first_ns, MAX(p.last_ns) AS last_ns, MAX(p.world_size) AS world_size, "
          "{} "
          "AS nodes, {} AS ranks, {} AS pods FROM p JOIN names nn ON nn.id = p.node GROUP BY p.job)",
          running, joined(d, "nn.name"), joined(d, "p.rank"), joined(d, pod));
      s.text = with +
               fmt::format(
                   "SELECT q.job, q.processes, CAST(q.running AS BIGINT), CAST(q.calls AS BIGINT), "
                   "CAST(q.errors AS BIGINT), q.first_ns, q.last_ns, q.world_size, q.nodes, q.ranks, q.pods, "
                   "q.n_total FROM {} ORDER BY q.calls DESC, {}",
                   page(s, q, jobs, "l.calls DESC, " + bytewise(d, "l.job")), bytewise(d, "q.job"));
      break;
    }
    case ProcessList::kNodes: {
      const std::string nodes = fmt::format(
          "(SELECT nn.name, COUNT(*) AS processes, {} AS running, COUNT(DISTINCT CASE WHEN p.job <> '' THEN "
          "p.job "
          "END) AS jobs, SUM(p.w_calls) AS calls, SUM(p.w_errors) AS errors, MAX(p.last_ns) AS last_ns FROM "
          "p "
          "JOIN names nn ON nn.id = p.node GROUP BY nn.name)",
          running);
      s.text = with +
               fmt::format(
                   "SELECT q.name, q.processes, CAST(q.running AS BIGINT), q.jobs, CAST(q.calls AS BIGINT), "
                   "CAST(q.errors AS BIGINT), q.last_ns, q.n_total FROM {} ORDER BY q.calls DESC, {}",
                   page(s, q, nodes, "l.calls DESC, " + bytewise(d, "l.name")), bytewise(d, "q.name"));
      break;
    }
  }
  return s;
}

std::vector<std::string> split_list(const std::string& joined) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < joined.size();) {
    std::size_t end = joined.find(',', at);
    if (end == std::string::npos) end = joined.size();
    if (end > at) out.push_back(joined.substr(at, end - at));
    at = end + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<long> split_numbers(const std::string& joined) {
  std::vector<long> out;
  for (const auto& s : split_list(joined)) {
    long v = 0;
    if (std::from_chars(s.data(), s.data() + s.size(), v).ec == std::errc()) out.push_back(v);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string alive_in_window(QuerySql& s, const HistoryQuery& q, std::string_view alias) {
  // Arguments in the order of their places in the text.
  const std::string to = s.arg(q.to_ns);
  const std::string from = s.arg(q.from_ns);
  std::string sql = fmt::format("{0}.first_ns < {1} AND {0}.last_ns >= {2}", alias, to, from);
  if (q.node) {
    sql += fmt::format(" AND {}.node = (SELECT id FROM names WHERE name = {})", alias, s.arg(*q.node));
  }
  return sql;
}

std::string row_filters(QuerySql& s, const HistoryQuery& q, bool node) {
  std::string sql;
  if (node && q.node)
    sql += fmt::format(" AND t.node = (SELECT id FROM names WHERE name = {})", s.arg(*q.node));
  if (q.pid) sql += fmt::format(" AND t.pid = {}", s.arg(static_cast<std::int64_t>(*q.pid)));
  if (q.comm) {
    sql += fmt::format(
        " AND EXISTS (SELECT 1 FROM processes p WHERE p.node = t.node AND p.pid = t.pid AND p.start_ns = "
        "t.start_ns AND p.comm = {})",
        s.arg(*q.comm));
  }
  return sql;
}

QuerySql anomalies_page_sql(Dialect d, const HistoryQuery& q) {
  QuerySql s(d);
  const std::string where = events_where(s, q);
  const std::string limit = s.arg(static_cast<std::int64_t>(q.limit));
  const std::string offset = s.arg(static_cast<std::int64_t>(q.offset));
  // Rows of one instant in a fixed order, so that pages do not overlap.
  s.text = fmt::format(
      "SELECT {}, q.n_total FROM (SELECT t.*, COUNT(*) OVER () AS n_total FROM anomalies t WHERE {} ORDER BY "
      "t.t_ns, t.node, t.pid, t.domain, t.function LIMIT {} OFFSET {}) q ORDER BY q.t_ns, q.node, q.pid, "
      "q.domain, q.function",
      read_columns(tables::kAnomalies, "q"), where, limit, offset);
  return s;
}

QuerySql leaks_page_sql(Dialect d, const HistoryQuery& q) {
  QuerySql s(d);
  const std::string where = events_where(s, q);
  const std::string limit = s.arg(static_cast<std::int64_t>(q.limit));
  const std::string offset = s.arg(static_cast<std::int64_t>(q.offset));
  s.text = fmt::format(
      "SELECT {}, coalesce((SELECT p.comm FROM processes p WHERE p.node = q.node AND p.pid = q.pid AND "
      "p.start_ns = q.start_ns), ''), q.n_total FROM (SELECT t.*, COUNT(*) OVER () AS n_total FROM leaks t "
      "WHERE {} ORDER BY t.bytes DESC, t.t_ns, t.node, t.pid LIMIT {} OFFSET {}) q ORDER BY q.bytes DESC, "
      "q.t_ns, q.node, q.pid",
      read_columns(tables::kLeaks, "q"), where, limit, offset);
  return s;
}

QuerySql kernels_sql(Dialect d, const WindowPlan& plan) {
  QuerySql s(d);
  s.text = ranges_cte(s, plan.ranges);
  s.text += fmt::format(
      " SELECT n.name, q.launches FROM (SELECT t.kernel, CAST(SUM(t.launches) AS BIGINT) AS launches "
      "FROM {} GROUP BY t.kernel) q JOIN names n ON n.id = q.kernel ORDER BY q.launches DESC, {} LIMIT "
      "1000",
      over_ranges(d, tables::kKernels.name), bytewise(d, "n.name"));
  return s;
}

QuerySql mark_totals_sql(Dialect d, const std::string& node, std::int64_t t_ns) {
  QuerySql s(d);
  const std::string key = s.arg("totals_from:" + node);
  const std::string written = s.arg("written_to:" + node);
  const std::string at = s.arg(t_ns);
  s.text = fmt::format(
      "INSERT INTO meta(key, value) VALUES({}, CASE WHEN EXISTS (SELECT 1 FROM meta WHERE key = {}) THEN {} "
      "ELSE "
      "0 END) ON CONFLICT(key) DO NOTHING",
      key, written, at);
  return s;
}

}  // namespace eacgm::history
