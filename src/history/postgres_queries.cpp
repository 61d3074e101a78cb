// The PostgreSQL history's queries: the SQLite store's, answered alike. Function rows
// stream out and add up here (their latency sketches merge in C++).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "history/function_sums.h"
#include "history/pg_function_rows.h"
#include "history/postgres_store.h"
#include "history/process_columns.h"

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
  std::string text_columns;
  for (const auto& c : kProcessTextColumns) text_columns += fmt::format(", t.{}", c.column);
  f.text += fmt::format(
      " GROUP BY 1, 2, 3) SELECT (SELECT name FROM names WHERE id = t.node), t.pid, t.start_ns, t.rank, "
      "t.local_rank, t.world_size, t.first_ns, t.last_ns, t.exited, coalesce(f.calls, 0), coalesce(f.errors, "
      "0){} FROM processes t LEFT JOIN f ON f.node = t.node AND f.pid = t.pid AND f.start_ns = t.start_ns "
      "WHERE t.first_ns < {} AND t.last_ns >= {}",
      text_columns, w.to, w.from);
  add_filters(f, q, false);
  f.text += " ORDER BY 10 DESC, t.node, t.pid LIMIT 10000";
  auto r = conn_.query(f.text, f.params);
  if (!r) return std::move(r).take_error();
  std::vector<StoredProcess> out;
  out.reserve(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) {
    StoredProcess p;
    p.node = r->text(i, 0);
    p.record.key = {static_cast<std::uint32_t>(r->i64(i, 1)), r->i64(i, 2)};
    p.record.rank = r->opt<long>(i, 3);
    p.record.local_rank = r->opt<long>(i, 4);
    p.record.world_size = r->opt<long>(i, 5);
    p.record.first_ns = r->i64(i, 6);
    p.record.last_ns = r->i64(i, 7);
    p.record.exited = r->i64(i, 8) != 0;
    p.calls = static_cast<std::uint64_t>(r->i64(i, 9));
    p.errors = static_cast<std::uint64_t>(r->i64(i, 10));
    int at = 11;
    for (const auto& c : kProcessTextColumns) p.record.*c.field = r->text(i, at++);
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<StoredFunction>> PostgresStore::functions(const HistoryQuery& q, Tier tier) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  auto ranges = this->ranges(q, tier);
  if (!ranges) return std::move(ranges).take_error();
  Sql s;
  s.text = fmt::format("SELECT t.domain, t.function, {} FROM ", kSumColumns) +
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
  s.text =
      "SELECT (SELECT name FROM names WHERE id = t.kernel) AS kernel, SUM(t.launches)::bigint AS launches "
      "FROM " +
      over_ranges(s, "kernels", *ranges);
  s.text = "SELECT a.kernel, a.launches FROM (" + s.text +
           " GROUP BY t.kernel) a ORDER BY a.launches DESC, a.kernel COLLATE \"C\" LIMIT 1000";
  auto r = conn_.query(s.text, s.params);
  if (!r) return std::move(r).take_error();
  std::vector<StoredKernel> out;
  out.reserve(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i)
    out.push_back({r->text(i, 0), static_cast<std::uint64_t>(r->i64(i, 1))});
  return out;
}

Result<std::vector<StoredGpuPoint>> PostgresStore::gpus(const HistoryQuery& q, Tier tier) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  Sql s;
  const std::string step = s.i64(q.step_ns > 0 ? q.step_ns : kMinuteNs);
  const Window w(s, q, tier);
  s.text = fmt::format(
      "SELECT t.node, t.gpu, max(t.uuid) AS uuid, max(t.name) AS name, (t.t_ns / {0}) * {0} AS t, "
      "SUM(t.util_mean * t.samples) / SUM(CASE WHEN t.util_mean IS NOT NULL THEN t.samples END)::float8 AS "
      "c5, "
      "MAX(t.util_max) AS c6, "
      "SUM(t.memory_used_mean * t.samples) / SUM(CASE WHEN t.memory_used_mean IS NOT NULL THEN t.samples "
      "END)::float8 "
      "AS c7, MAX(t.memory_used_max) AS c8, MAX(t.memory_total) AS c9, "
      "SUM(t.power_mean_w * t.samples) / SUM(CASE WHEN t.power_mean_w IS NOT NULL THEN t.samples "
      "END)::float8 AS c10, "
      "MAX(t.power_max_w) AS c11, MAX(t.temperature_max) AS c12 FROM gpus t WHERE t.tier = {1} AND t.t_ns >= "
      "{2} AND "
      "t.t_ns < {3}",
      step, w.tier, w.from, w.to);
  node_only(s, q);
  s.text =
      "SELECT (SELECT name FROM names WHERE id = a.node), a.gpu, (SELECT name FROM names WHERE id = a.uuid), "
      "(SELECT name FROM names WHERE id = a.name), a.t, a.c5, a.c6, a.c7, a.c8, a.c9, a.c10, a.c11, a.c12 "
      "FROM (" +
      s.text + " GROUP BY t.node, t.gpu, 5 LIMIT 100000) a ORDER BY a.node, a.gpu, a.t";
  auto r = conn_.query(s.text, s.params);
  if (!r) return std::move(r).take_error();
  std::vector<StoredGpuPoint> out;
  out.reserve(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) {
    StoredGpuPoint p;
    p.node = r->text(i, 0);
    p.gpu = static_cast<std::uint32_t>(r->i64(i, 1));
    p.uuid = r->text(i, 2);
    p.name = r->text(i, 3);
    p.t_ns = r->i64(i, 4);
    p.util_mean = r->opt<double>(i, 5);
    p.util_max = r->opt<std::uint32_t>(i, 6);
    p.memory_used_mean = r->opt<double>(i, 7);
    p.memory_used_max = r->opt<std::uint64_t>(i, 8);
    p.memory_total = r->opt<std::uint64_t>(i, 9);
    p.power_mean_w = r->opt<double>(i, 10);
    p.power_max_w = r->opt<double>(i, 11);
    p.temperature_max = r->opt<std::uint32_t>(i, 12);
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<StoredAnomaly>> PostgresStore::anomalies(const HistoryQuery& q) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  Sql s;
  const Window w(s, q, std::nullopt);
  s.text = fmt::format(
      "SELECT (SELECT name FROM names WHERE id = t.node), t.t_ns, t.end_ns, t.pid, t.start_ns, t.kind, "
      "(SELECT name FROM names WHERE id = t.domain), (SELECT name FROM names WHERE id = t.function), "
      "t.score, "
      "t.value, t.median_ns FROM anomalies t WHERE t.t_ns >= {} AND t.t_ns < {}",
      w.from, w.to);
  add_filters(s, q, false);
  s.text += " ORDER BY t.t_ns LIMIT 10000";
  auto r = conn_.query(s.text, s.params);
  if (!r) return std::move(r).take_error();
  std::vector<StoredAnomaly> out;
  out.reserve(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) {
    StoredAnomaly a;
    a.node = r->text(i, 0);
    a.record.t_ns = r->i64(i, 1);
    a.record.end_ns = r->i64(i, 2);
    a.record.process = {static_cast<std::uint32_t>(r->i64(i, 3)), r->i64(i, 4)};
    a.record.kind = r->text(i, 5);
    a.record.domain = r->text(i, 6);
    a.record.function = r->text(i, 7);
    a.record.score = r->f64(i, 8);
    a.record.value = r->f64(i, 9);
    a.record.median_ns = r->f64(i, 10);
    out.push_back(std::move(a));
  }
  return out;
}

Result<std::vector<StoredLeak>> PostgresStore::leaks(const HistoryQuery& q) {
  if (auto st = ready(); !st) return std::move(st).take_error();
  Sql s;
  const Window w(s, q, std::nullopt);
  s.text = fmt::format(
      "SELECT (SELECT name FROM names WHERE id = t.node), t.t_ns, t.pid, t.start_ns, t.device, "
      "t.allocations, "
      "t.bytes, coalesce((SELECT p.comm FROM processes p WHERE p.node = t.node AND p.pid = t.pid AND "
      "p.start_ns = t.start_ns), '') FROM leaks t WHERE t.t_ns >= {} AND t.t_ns < {}",
      w.from, w.to);
  add_filters(s, q, false);
  s.text += " ORDER BY t.bytes DESC LIMIT 10000";
  auto r = conn_.query(s.text, s.params);
  if (!r) return std::move(r).take_error();
  std::vector<StoredLeak> out;
  out.reserve(static_cast<std::size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) {
    StoredLeak l;
    l.node = r->text(i, 0);
    l.t_ns = r->i64(i, 1);
    l.record.process = {static_cast<std::uint32_t>(r->i64(i, 2)), r->i64(i, 3)};
    l.record.device = static_cast<std::int32_t>(r->i64(i, 4));
    l.record.allocations = static_cast<std::uint64_t>(r->i64(i, 5));
    l.record.bytes = static_cast<std::uint64_t>(r->i64(i, 6));
    l.comm = r->text(i, 7);
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace eacgm::history
