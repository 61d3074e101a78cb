// The PostgreSQL history's maintenance: rollups (sketches merged here), retention and
// the size cap. Each node rolls up and ages out its own rows; tasks of the whole
// database (retention of nodes that stopped writing, the size cap) are claimed by one
// node per period through a row of `meta`.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "history/agents_sql.h"
#include "history/job_functions_rollup.h"
#include "history/job_rollup.h"
#include "history/namespace_rollup.h"
#include "history/pg_rows.h"
#include "history/postgres_store.h"
#include "history/schema_sql.h"
#include "history/standings_sql.h"

namespace eacgm::history {
namespace {

constexpr std::int64_t kMinuteNs = 60'000'000'000;
constexpr std::int64_t kHourNs = 60 * kMinuteNs;
// The days whose tables maintenance makes ahead: today and the next two.
constexpr int kDaysAhead = 3;
// Making or dropping a day table locks its parent table exclusively, and that lock waits
// behind every query reading the table: a reader of a long window would hold up the DDL,
// and with it the writer and every query arriving after it. The DDL gives up after this
// long instead, and is tried again at the next write or maintenance (days are made ahead,
// and dropped at the next sweep).
constexpr int kPartitionLockTimeoutMs = 5000;

std::int64_t floor_to(std::int64_t t, std::int64_t step) { return t - ((t % step) + step) % step; }

// The ids of every node that wrote (the node list is the `written_to:` keys of meta).
constexpr const char* kNodeIds =
    "ARRAY(SELECT n.id FROM meta m JOIN names n ON n.name = substr(m.key, 12) WHERE starts_with(m.key, "
    "'written_to:'))";

// The interval tables (rolled up, aged out by tier).
std::vector<const Table*> tiered_tables() {
  std::vector<const Table*> out;
  for (const Table* t : tables::kAll) {
    if (t->tiered()) out.push_back(t);
  }
  return out;
}

// Sketches merge in C++ (roll_up_sketches); every other table rolls up in SQL.
bool rolls_in_sql(const Table& t) {
  for (const Column& c : t.columns) {
    if (c.combine == Combine::kSketch) return false;
  }
  return true;
}

}  // namespace

Status PostgresStore::make_days(int tier, std::int64_t from_ns, std::int64_t to_ns) {
  if (to_ns <= from_ns) return {};
  bool known = true;
  for (std::int64_t day = floor_to(from_ns, kDayNs); day < to_ns && known; day += kDayNs)
    known = days_made_.contains({tier, day});
  if (known) return {};
  if (auto st = partition_ddl(make_days_sql(), PgParams().i32(tier).i64(from_ns).i64(to_ns)); !st) return st;
  for (std::int64_t day = floor_to(from_ns, kDayNs); day < to_ns; day += kDayNs)
    days_made_.insert({tier, day});
  return {};
}

Status PostgresStore::partition_ddl(const std::string& sql, const PgParams& params) {
  const std::string limit = fmt::format("SET LOCAL lock_timeout = {}", kPartitionLockTimeoutMs);
  if (!conn_.in_transaction()) {
    return in_transaction([&]() -> Status {
      if (auto st = conn_.exec(limit); !st) return st;
      return conn_.exec(sql, params);
    });
  }
  if (auto st = conn_.exec(limit); !st) return st;
  if (auto st = conn_.exec(sql, params); !st) return st;
  return conn_.exec("SET LOCAL lock_timeout = DEFAULT");
}

Status PostgresStore::make_days_ahead(std::int64_t now_ns) {
  const std::int64_t today = floor_to(now_ns, kDayNs);
  for (int tier = 0; tier < kTiers; ++tier) {
    if (auto st = make_days(tier, today, today + kDaysAhead * kDayNs); !st) return st;
  }
  return {};
}

Status PostgresStore::drop_days(std::int64_t now_ns, const Retention& retention) {
  const std::int64_t keep[kTiers] = {retention.raw_ns, retention.minute_ns, retention.hour_ns};
  for (int tier = 0; tier < kTiers; ++tier) {
    if (auto st = partition_ddl(drop_days_sql(), PgParams().i32(tier).i64(now_ns - keep[tier])); !st)
      return st;
  }
  // A day dropped here may be written again (a node back from a long outage): made again.
  days_made_.clear();
  return {};
}

Status PostgresStore::roll_up_sketches(const Table& table, std::int32_t node, int to_tier,
                                       std::int64_t from_ns, std::int64_t to_ns, std::int64_t span_ns) {
  // The totals' rows have no process: read as process 0, written without one.
  const bool per_process = table.column("pid") != nullptr;
  std::map<std::pair<std::int64_t, FunctionKey>, FunctionSums> rolled;
  auto add_rows = [&rolled, span_ns](const PgResult& r) {
    for (int i = 0; i < r.rows(); ++i) {
      const FunctionKey key{static_cast<std::int32_t>(r.i64(i, 1)), r.i64(i, 2),
                            static_cast<std::int32_t>(r.i64(i, 3)), static_cast<std::int32_t>(r.i64(i, 4))};
      rolled[{floor_to(r.i64(i, 0), span_ns), key}].add(read_sums(r, i, 5));
    }
  };
  const std::string columns =
      fmt::format("t_ns, {}, domain, function, {}", per_process ? "pid, start_ns" : "0::int4, 0::int8",
                  column_list(table, "calls"));
  auto rows =
      conn_.query(fmt::format("SELECT {} FROM {} WHERE tier = $1 AND node = $2 AND t_ns >= $3 AND t_ns < $4",
                              columns, table.name),
                  PgParams().i32(to_tier - 1).i32(node).i64(from_ns).i64(to_ns));
  if (!rows) return std::move(rows).take_error();
  if (rows->rows() == 0) return {};
  add_rows(*rows);
  // Rows of the tier made that are already there (a range rolled again) add in.
  auto made = conn_.query(
      fmt::format("DELETE FROM {} WHERE tier = $1 AND node = $2 AND t_ns >= $3 AND t_ns < $4 RETURNING {}",
                  table.name, columns),
      PgParams().i32(to_tier).i32(node).i64(floor_to(from_ns, span_ns)).i64(to_ns));
  if (!made) return std::move(made).take_error();
  add_rows(*made);
  PgCopy copy;
  for (const auto& [at, sums] : rolled) {
    PgCopyOut out(copy, table, names_);
    const RowPlace place{to_tier, node, at.first, span_ns};
    if (per_process) {
      put_row(out, place, at.second, sums);
    } else {
      put_row(out, place, FunctionTotalRecord<std::int32_t>{at.second.domain, at.second.function, sums});
    }
  }
  return conn_.copy_in(copy_sql(table), copy.finish());
}

Status PostgresStore::roll_up(std::int32_t node, int to_tier, std::int64_t from_ns, std::int64_t to_ns,
                              std::int64_t span_ns) {
  if (auto st = make_days(to_tier, floor_to(from_ns, span_ns), to_ns); !st) return st;
  for (const Table* t : tiered_tables()) {
    if (!rolls_in_sql(*t)) {
      if (auto st = roll_up_sketches(*t, node, to_tier, from_ns, to_ns, span_ns); !st) return st;
      continue;
    }
    if (auto st = conn_.exec(
            roll_up_sql(Dialect::kPostgres, *t),
            PgParams().i32(to_tier - 1).i32(node).i64(from_ns).i64(to_ns).i64(span_ns).i32(to_tier));
        !st) {
      return st;
    }
  }
  return {};
}

Status PostgresStore::roll_up_job_hours(std::int32_t node, std::int64_t from_ns, std::int64_t to_ns) {
  const PgParams range = PgParams().i32(node).i64(from_ns).i64(to_ns);
  for (const Table* t : {&tables::kJobGpus, &tables::kJobCalls}) {
    if (auto st = conn_.exec(job_rollup_delete_sql(Dialect::kPostgres, *t), range); !st) return st;
  }
  if (auto st = conn_.exec(job_gpus_roll_sql(Dialect::kPostgres), range); !st) return st;
  if (auto st = conn_.exec(namespace_delete_sql(), range); !st) return st;
  if (auto st = conn_.exec(namespace_roll_node_sql(), range); !st) return st;
  if (auto st = conn_.exec(job_functions_delete_sql(), range); !st) return st;
  if (auto st = conn_.exec(job_functions_roll_node_sql(), range); !st) return st;
  const QuerySql source = job_calls_source_sql(Dialect::kPostgres, node, from_ns, to_ns);
  auto rows = query(source);
  if (!rows) return std::move(rows).take_error();
  if (rows->rows() == 0) return {};
  PgCopy copy;
  for (int i = 0; i < rows->rows(); ++i) {
    PgCopyOut out(copy, tables::kJobCalls, names_);
    put_row(out, RowPlace{2, node, 0, 0}, get_job_call_source(PgRow(*rows, i)));
  }
  return conn_.copy_in(copy_sql(tables::kJobCalls), copy.finish());
}

Status PostgresStore::roll_up_jobs(std::int32_t node, const std::string& name, std::int64_t hours_to) {
  const std::string mark = kJobsRolledKey + name;
  auto rolled = meta_int(mark, -1);
  if (!rolled) return std::move(rolled).take_error();
  std::int64_t at = *rolled;
  if (at < 0) {
    // A node's first rollup (a store older than them): from its first hour row.
    auto first = conn_.query(first_hour_row_sql(Dialect::kPostgres), PgParams().i32(node));
    if (!first) return std::move(first).take_error();
    at = std::min(first->i64(0, 0), hours_to);
  }
  while (at < hours_to) {
    const std::int64_t until = std::min(hours_to, floor_to(at, kJobRollupChunkNs) + kJobRollupChunkNs);
    if (auto st = make_days(2, at, until); !st) return st;
    auto st = in_transaction([&]() -> Status {
      if (auto s = roll_up_job_hours(node, at, until); !s) return s;
      return set_meta(mark, until);
    });
    if (!st) return st;
    at = until;
  }
  if (*rolled < hours_to) return set_meta(mark, hours_to);
  return {};
}

Status PostgresStore::maintain(const std::string& node, std::int64_t now_ns, const Retention& retention) {
  if (auto st = ready(); !st) return st;
  if (auto st = resolve({node}); !st) return st;
  if (auto st = make_days_ahead(now_ns); !st) return st;
  const std::int32_t node_id = id_of(node);
  auto written = meta_int("written_to:" + node, 0);
  if (!written) return std::move(written).take_error();
  // Minutes (then hours) that end at or before the last interval written are complete;
  // each chunk of them rolls up in a transaction with the mark of how far it got.
  const std::int64_t minutes_to = floor_to(*written, kMinuteNs);
  const std::int64_t hours_to = floor_to(minutes_to, kHourNs);
  const struct {
    int tier;
    std::int64_t to, span, chunk;
    const char* mark;
  } steps[] = {{1, minutes_to, kMinuteNs, 10 * kMinuteNs, "rolled_1m:"},
               {2, hours_to, kHourNs, kHourNs, "rolled_1h:"}};
  for (const auto& step : steps) {
    if (*written <= 0) break;
    const std::string mark = step.mark + node;
    auto rolled = meta_int(mark, -1);
    if (!rolled) return std::move(rolled).take_error();
    // Chunk by chunk from the first row not rolled yet, over gaps without rows.
    std::string next_sql = "SELECT LEAST(";
    for (const Table* table : tiered_tables()) {
      next_sql += fmt::format("{}(SELECT min(t_ns) FROM {} WHERE tier = $1 AND node = $2 AND t_ns >= $3)",
                              next_sql.back() == '(' ? "" : ", ", table->name);
    }
    next_sql += ")";
    for (std::int64_t at = std::max<std::int64_t>(*rolled, 0); at < step.to;) {
      auto next = conn_.query(next_sql, PgParams().i32(step.tier - 1).i32(node_id).i64(at));
      if (!next) return std::move(next).take_error();
      if (next->is_null(0, 0) || next->i64(0, 0) >= step.to) break;
      at = floor_to(next->i64(0, 0), step.span);
      const std::int64_t until = std::min(step.to, floor_to(at, step.chunk) + step.chunk);
      auto st = in_transaction([&]() -> Status {
        if (auto s = roll_up(node_id, step.tier, at, until, step.span); !s) return s;
        return set_meta(mark, until);
      });
      if (!st) return st;
      at = until;
    }
    if (*rolled < step.to) {
      if (auto st = set_meta(mark, step.to); !st) return st;
    }
  }
  if (*written > 0) {
    if (auto st = roll_up_jobs(node_id, node, hours_to); !st) return st;
  }
  if (auto st = apply_retention(node_id, now_ns, retention); !st) return st;
  if (retention.max_bytes > 0) return enforce_cap(now_ns, retention.max_bytes);
  return {};
}

Status PostgresStore::apply_retention(std::int32_t node, std::int64_t now_ns, const Retention& retention) {
  // Once an hour one node ages out the rows of every node (those that stopped writing
  // included): the interval tables' days past each tier's window are dropped whole (a
  // tier's rows stay until their day has passed its window, up to a day longer), the
  // rest deleted by time.
  auto sweep = claim("retention_swept", now_ns, kHourNs);
  if (!sweep) return std::move(sweep).take_error();
  // The node filter: this node's id as parameter `at`, or every node's.
  auto nodes = [&sweep](int at) {
    return *sweep ? fmt::format("= ANY({})", kNodeIds) : fmt::format("= ${}", at);
  };
  auto with_node = [&sweep, node](PgParams p) { return *sweep ? p : p.i32(node); };
  // The days past their window go at the sweep, and at once where this node has just
  // made one (a node back after an outage writing intervals older than its window: they
  // go as soon as a store that deletes by row would delete them).
  const std::int64_t keep[kTiers] = {retention.raw_ns, retention.minute_ns, retention.hour_ns};
  bool made_past = false;
  for (const auto& [tier, day] : days_made_) made_past = made_past || day + kDayNs <= now_ns - keep[tier];
  if (*sweep || made_past) {
    if (auto st = drop_days(now_ns, retention); !st) return st;
  }
  return in_transaction([&]() -> Status {
    if (auto st = conn_.exec(fmt::format("DELETE FROM intervals WHERE t_ns < $1 AND node {}", nodes(2)),
                             with_node(PgParams().i64(now_ns - retention.hour_ns)));
        !st) {
      return st;
    }
    if (auto st = exec(expire_standings_sql(Dialect::kPostgres, now_ns - kStandingsKeptNs)); !st) return st;
    if (auto st = exec(expire_agents_sql(Dialect::kPostgres, now_ns - retention.hour_ns)); !st) return st;
    // Events and processes are kept by time (indexed) for every node: the longest window.
    for (const char* sql : {"DELETE FROM anomalies WHERE t_ns < $1", "DELETE FROM leaks WHERE t_ns < $1",
                            "DELETE FROM processes WHERE last_ns < $1"}) {
      if (auto st = conn_.exec(sql, PgParams().i64(now_ns - retention.hour_ns)); !st) return st;
    }
    return {};
  });
}

Status PostgresStore::enforce_cap(std::int64_t now_ns, std::uint64_t max_bytes) {
  // PostgreSQL keeps the space of deleted rows for new ones rather than giving it back,
  // so the cap holds growth: once over it, each time the tables have grown since the last
  // check the oldest rows go (raw intervals an hour at a time, then minutes a day at a
  // time, then hours a week at a time) and the space is made reusable.
  auto mine = claim("cap_checked", now_ns, kMinuteNs);
  if (!mine) return std::move(mine).take_error();
  if (!*mine) return {};
  auto size = size_bytes();
  if (!size) return std::move(size).take_error();
  auto before = meta_int("cap_size", 0);
  if (!before) return std::move(before).take_error();
  if (auto st = set_meta("cap_size", static_cast<std::int64_t>(*size)); !st) return st;
  if (*size <= max_bytes || static_cast<std::int64_t>(*size) <= *before) return {};
  const std::pair<int, std::int64_t> tiers[] = {{0, kHourNs}, {1, kDayNs}, {2, 7 * kDayNs}};
  for (const auto& [tier, chunk] : tiers) {
    auto oldest =
        conn_.query(fmt::format("SELECT min(x.t) FROM unnest({}) AS n(id), LATERAL (SELECT t_ns AS t FROM "
                                "functions WHERE tier = $1 AND node = n.id ORDER BY t_ns LIMIT 1) x",
                                kNodeIds),
                    PgParams().i32(tier));
    if (!oldest) return std::move(oldest).take_error();
    if (oldest->rows() == 0 || oldest->is_null(0, 0)) continue;
    const std::int64_t cut = oldest->i64(0, 0) + chunk;
    const int cut_tier = tier;
    auto st = in_transaction([&]() -> Status {
      for (const Table* table : tiered_tables()) {
        if (auto s = conn_.exec(fmt::format("DELETE FROM {} WHERE tier = $1 AND node = ANY({}) AND t_ns < $2",
                                            table->name, kNodeIds),
                                PgParams().i32(cut_tier).i64(cut));
            !s) {
          return s;
        }
      }
      return {};
    });
    if (!st) return st;
    break;
  }
  // The freed space is reused from now on (autovacuum would get there later). Only the
  // tables' owner may; another writer leaves it to autovacuum.
  for (const Table* table : tiered_tables()) (void)conn_.exec(fmt::format("VACUUM {}", table->name));
  // The size from which growth counts (vacuum adds the tables' free-space maps).
  auto after = size_bytes();
  if (!after) return std::move(after).take_error();
  return set_meta("cap_size", static_cast<std::int64_t>(*after));
}

}  // namespace eacgm::history
