// The PostgreSQL history's queries: the SQLite store's, answered alike. Function rows
// stream out and add up here (their latency sketches merge in C++).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "history/pg_rows.h"
#include "history/postgres_store.h"
#include "history/schema_sql.h"

namespace eacgm::history {
namespace {

constexpr std::int64_t kMinuteNs = 60'000'000'000;

// SQL with its parameters, numbered as they are added.
struct Sql {
  std::string text;
  PgParams params;
  int count = 0;
  std::string i64(std::int64_t v) {
    params.i64(v);
    return fmt::format("${}", ++count);
  }
  std::string i32(std::int32_t v) {
    params.i32(v);
    return fmt::format("${}", ++count);
  }
  std::string str(const std::string& v) {
    params.text(v);
    return fmt::format("${}", ++count);
  }
  std::string i32s(const std::vector<std::int32_t>& v) {
    params.i32_array(v);
    return fmt::format("${}", ++count);
  }
  std::string i64s(const std::vector<std::int64_t>& v) {
    params.i64_array(v);
    return fmt::format("${}", ++count);
  }
};

// The ids of every node that wrote.
constexpr const char* kNodeIds =
    "ARRAY(SELECT n.id FROM meta m JOIN names n ON n.name = substr(m.key, 12) WHERE starts_with(m.key, "
    "'written_to:'))";

// `table` (alias `t`) read over the ranges (alias `r`): one index range of
// (tier, node, t_ns) each. The subquery is kept whole (OFFSET 0): joined as a table,
// the ranges' bounds are unknown to the planner, which would scan the whole table.
std::string over_ranges(Sql& s, const char* table, const std::vector<TierRange>& ranges) {
  std::vector<std::int32_t> nodes, tiers;
  std::vector<std::int64_t> lo, hi;
  for (const auto& r : ranges) {
    nodes.push_back(r.node);
    tiers.push_back(r.tier);
    lo.push_back(r.lo);
    hi.push_back(r.hi);
  }
  const std::string a = s.i32s(nodes);
  const std::string b = s.i32s(tiers);
  const std::string c = s.i64s(lo);
  const std::string d = s.i64s(hi);
  return fmt::format(
      "unnest({}::int[], {}::int[], {}::int8[], {}::int8[]) AS r(node, tier, lo, hi) CROSS JOIN LATERAL "
      "(SELECT * FROM {} x WHERE x.tier = r.tier AND x.node = r.node AND x.t_ns >= r.lo AND x.t_ns < r.hi "
      "OFFSET 0) t",
      a, b, c, d, table);
}

// The query's filters on a table with node, pid and start_ns columns (alias `t`). A
// table keyed by (tier, node, t_ns) without a node asked for is read node by node.
void add_filters(Sql& s, const HistoryQuery& q, bool tiered) {
  if (q.node) {
    s.text += fmt::format(" AND t.node = (SELECT id FROM names WHERE name = {})", s.str(*q.node));
  } else if (tiered) {
    s.text += fmt::format(" AND t.node = ANY({})", kNodeIds);
  }
  if (q.pid) s.text += fmt::format(" AND t.pid = {}", s.i32(static_cast<std::int32_t>(*q.pid)));
  if (q.comm) {
    s.text += fmt::format(
        " AND EXISTS (SELECT 1 FROM processes p WHERE p.node = t.node AND p.pid = t.pid AND p.start_ns = "
        "t.start_ns "
        "AND p.comm = {})",
        s.str(*q.comm));
  }
}

// The window's parameters, numbered in this order.
struct Window {
  std::string tier, from, to;
  Window(Sql& s, const HistoryQuery& q, std::optional<Tier> t) {
    if (t) tier = s.i32(static_cast<std::int32_t>(*t));
    from = s.i64(q.from_ns);
    to = s.i64(q.to_ns);
  }
};

void node_only(Sql& s, const HistoryQuery& q) {
  HistoryQuery only;
  only.node = q.node;
  add_filters(s, only, true);
}

}  // namespace

Result<std::vector<TierRange>> PostgresStore::ranges(const HistoryQuery& q, Tier tier) {
  Sql s;
  const std::string t = s.i32(static_cast<std::int32_t>(tier));
  const std::string which = q.node ? "n.name = " + s.str(*q.node) : fmt::format("n.id = ANY({})", kNodeIds);
  s.text = fmt::format(
      "SELECT n.id, coalesce((SELECT value FROM meta WHERE key = 'rolled_1m:' || n.name), 0), "
      "coalesce((SELECT value FROM meta WHERE key = 'rolled_1h:' || n.name), 0), "
      "(SELECT min(t_ns) FROM functions WHERE tier = {} AND node = n.id) FROM names n WHERE {}",
      t, which);
  auto r = conn_.query(s.text, s.params);
  if (!r) return std::move(r).take_error();
  std::vector<TierRange> out;
  for (int i = 0; i < r->rows(); ++i) {
    const NodeRollups node{static_cast<std::int32_t>(r->i64(i, 0)), r->i64(i, 1), r->i64(i, 2),
                           r->opt<std::int64_t>(i, 3)};
    auto part = tier_ranges(node, tier, q.from_ns, q.to_ns);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

Result<std::vector<StoredProcess>> PostgresStore::processes(const HistoryQuery& q, Tier tier) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  auto ranges = this->ranges(q, tier);
  if (!ranges) return std::move(ranges).take_error();
  Sql f;
  // The window's calls per process, summed once, then joined to the processes.
  f.text =
      "WITH f AS (SELECT t.node, t.pid, t.start_ns, SUM(t.calls)::bigint AS calls, SUM(t.errors)::bigint AS "
      "errors FROM " +
      over_ranges(f, "functions", *ranges) +
      " WHERE t.domain IS DISTINCT FROM (SELECT id FROM names WHERE name = '" + std::string(kGpuTimeDomain) +
      "')";
  if (q.pid) f.text += fmt::format(" AND t.pid = {}", f.i32(static_cast<std::int32_t>(*q.pid)));
  const Window w(f, q, std::nullopt);
  f.text += fmt::format(
      " GROUP BY 1, 2, 3) SELECT {}, coalesce(f.calls, 0), coalesce(f.errors, 0) FROM processes t LEFT JOIN "
      "f ON "
      "f.node = t.node AND f.pid = t.pid AND f.start_ns = t.start_ns WHERE t.first_ns < {} AND t.last_ns >= "
      "{}",
      read_columns(tables::kProcesses, "t"), w.to, w.from);
  add_filters(f, q, false);
  f.text +=
      fmt::format(" ORDER BY {} DESC, t.node, t.pid LIMIT 10000", tables::kProcesses.columns.size() + 1);
  auto r = conn_.query(f.text, f.params);
  if (!r) return std::move(r).take_error();
  std::vector<StoredProcess> out;
  out.reserve(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) {
    StoredProcess p;
    const PgRow row(*r, i);
    const int col = get_row(row, 0, p);
    p.calls = static_cast<std::uint64_t>(row.i64(col));
    p.errors = static_cast<std::uint64_t>(row.i64(col + 1));
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<StoredFunction>> PostgresStore::functions(const HistoryQuery& q, Tier tier) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  auto ranges = this->ranges(q, tier);
  if (!ranges) return std::move(ranges).take_error();
  Sql s;
  s.text =
      fmt::format("SELECT t.domain, t.function, {} FROM ", column_list(tables::kFunctions, "calls", "t")) +
      over_ranges(s, "functions", *ranges) + " WHERE true";
  HistoryQuery pid_comm;
  pid_comm.pid = q.pid;
  pid_comm.comm = q.comm;
  add_filters(s, pid_comm, false);
  std::map<std::pair<std::int32_t, std::int32_t>, FunctionSums> sums;
  auto st = conn_.each_row(s.text, s.params, [&sums](const PgResult& r) {
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
  auto ranges = this->ranges(q, tier);
  if (!ranges) return std::move(ranges).take_error();
  Sql s;
  s.text = fmt::format("SELECT {} AS c0, {} FROM ", name_by_id("t.kernel"),
                       aggregates(Dialect::kPostgres, tables::kKernels, "launches", "t", 1)) +
           over_ranges(s, "kernels", *ranges);
  s.text = "SELECT a.c0, a.c1 FROM (" + s.text +
           " GROUP BY t.kernel) a ORDER BY a.c1 DESC, a.c0 COLLATE \"C\" LIMIT 1000";
  auto r = conn_.query(s.text, s.params);
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
  Sql s;
  const std::string step = s.i64(q.step_ns > 0 ? q.step_ns : kMinuteNs);
  const Window w(s, q, tier);
  s.text = fmt::format("t.tier = {} AND t.t_ns >= {} AND t.t_ns < {}", w.tier, w.from, w.to);
  node_only(s, q);
  s.text = gpu_points_sql(Dialect::kPostgres, step, s.text);
  auto r = conn_.query(s.text, s.params);
  if (!r) return std::move(r).take_error();
  std::vector<StoredGpuPoint> out;
  out.reserve(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) out.push_back(get_gpu_point(PgRow(*r, i)));
  return out;
}

Result<std::vector<StoredAnomaly>> PostgresStore::anomalies(const HistoryQuery& q) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  Sql s;
  const Window w(s, q, std::nullopt);
  s.text = fmt::format("SELECT {} FROM anomalies t WHERE t.t_ns >= {} AND t.t_ns < {}",
                       read_columns(tables::kAnomalies, "t"), w.from, w.to);
  add_filters(s, q, false);
  s.text += " ORDER BY t.t_ns LIMIT 10000";
  auto r = conn_.query(s.text, s.params);
  if (!r) return std::move(r).take_error();
  std::vector<StoredAnomaly> out(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) get_row(PgRow(*r, i), 0, out[static_cast<std::size_t>(i)]);
  return out;
}

Result<std::vector<StoredLeak>> PostgresStore::leaks(const HistoryQuery& q) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  Sql s;
  const Window w(s, q, std::nullopt);
  s.text = fmt::format(
      "SELECT {}, coalesce((SELECT p.comm FROM processes p WHERE p.node = t.node AND p.pid = t.pid AND "
      "p.start_ns = t.start_ns), '') FROM leaks t WHERE t.t_ns >= {} AND t.t_ns < {}",
      read_columns(tables::kLeaks, "t"), w.from, w.to);
  add_filters(s, q, false);
  s.text += " ORDER BY t.bytes DESC LIMIT 10000";
  auto r = conn_.query(s.text, s.params);
  if (!r) return std::move(r).take_error();
  std::vector<StoredLeak> out(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) {
    const PgRow row(*r, i);
    auto& l = out[static_cast<std::size_t>(i)];
    l.comm = row.text(get_row(row, 0, l));
  }
  return out;
}

}  // namespace eacgm::history
