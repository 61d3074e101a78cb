// The SQLite history: schema, writes, rollups, retention, the size cap and the queries.
#include "history/sqlite_store.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>
#include <vector>

#include "history/agents_sql.h"
#include "history/interval_totals.h"
#include "history/job_rollup.h"
#include "history/schema_rows.h"
#include "history/schema_sql.h"
#include "history/standings_sql.h"
#include "history/window_sql.h"

namespace eacgm::history {
namespace {

constexpr std::int64_t kMinuteNs = 60'000'000'000;
constexpr std::int64_t kHourNs = 3600 * 1'000'000'000LL;

// eacgm_merge(blob): the merged latency sketch of a group; eacgm_merge2(a, b) of two.
struct MergeState {
  StoredSketch sketch;
  bool bad = false;
};
// What SQLite keeps per group (zeroed at the group's first row): the state, made then.
struct MergeSlot {
  MergeState* state;
};

StoredSketch* merge_into(StoredSketch& into, sqlite3_value* v, bool& bad) {
  if (sqlite3_value_type(v) != SQLITE_BLOB) return &into;
  const auto* p = static_cast<const std::uint8_t*>(sqlite3_value_blob(v));
  const auto n = static_cast<std::size_t>(sqlite3_value_bytes(v));
  auto s = decode(std::span<const std::uint8_t>(p, n));
  if (s) {
    into.merge(*s);
  } else {
    bad = true;  // a damaged row loses its latency, not the group's
  }
  return &into;
}

void result_sketch(sqlite3_context* ctx, const StoredSketch& s) {
  if (s.empty()) {
    sqlite3_result_null(ctx);
    return;
  }
  const std::string blob = encode(s);
  sqlite3_result_blob(ctx, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
}

void merge_step(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  auto* slot = static_cast<MergeSlot*>(sqlite3_aggregate_context(ctx, static_cast<int>(sizeof(MergeSlot))));
  if (slot == nullptr) return;
  if (slot->state == nullptr) slot->state = new MergeState();  // NOLINT(cppcoreguidelines-owning-memory)
  merge_into(slot->state->sketch, argv[0], slot->state->bad);
}

void merge_final(sqlite3_context* ctx) {
  auto* slot = static_cast<MergeSlot*>(sqlite3_aggregate_context(ctx, 0));
  if (slot == nullptr || slot->state == nullptr) {
    sqlite3_result_null(ctx);
    return;
  }
  result_sketch(ctx, slot->state->sketch);
  delete slot->state;  // NOLINT(cppcoreguidelines-owning-memory)
  slot->state = nullptr;
}

void merge_two(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  StoredSketch s;
  bool bad = false;
  merge_into(s, argv[0], bad);
  merge_into(s, argv[1], bad);
  result_sketch(ctx, s);
}

std::int64_t floor_to(std::int64_t t, std::int64_t step) { return t - ((t % step) + step) % step; }

// Binds a row's values (schema_rows.h) to an insert's parameters; names become their ids.
template <class NameIds>
struct SqliteRowOut {
  SqliteRowOut(SqliteStmt& s, NameIds& n) : stmt(s), ids(n) {}
  SqliteStmt& stmt;
  NameIds& ids;
  int at = 0;
  std::string error;  // the first name whose id could not be made

  void integer(std::int64_t v) { stmt.bind(++at, v); }
  void real(double v) { stmt.bind(++at, v); }
  void text(std::string_view v) { stmt.bind(++at, v); }
  void null() { stmt.bind_null(++at); }
  void sketch(const StoredSketch& v) {
    if (v.empty()) {
      null();
    } else {
      stmt.bind_blob(++at, encode(v));
    }
  }
  void name(std::string_view v) {
    auto id = ids(v);
    if (!id) {
      if (error.empty()) error = id.error();
      null();
      return;
    }
    integer(*id);
  }
};

}  // namespace

const char* tier_name(Tier tier) {
  switch (tier) {
    case Tier::kRaw:
      return "raw";
    case Tier::kMinute:
      return "1m";
    case Tier::kHour:
      return "1h";
  }
  return "raw";
}

Tier Store::tier_for(const HistoryQuery& q, std::int64_t now_ns, const Retention& retention) const {
  if (q.from_ns >= now_ns - retention.raw_ns) return Tier::kRaw;
  if (q.from_ns >= now_ns - retention.minute_ns) return Tier::kMinute;
  return Tier::kHour;
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::string& path, StoreAccess access) {
  std::error_code ec;
  const bool write = access == StoreAccess::kWrite;
  if (write) {
    const auto dir = std::filesystem::path(path).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  } else if (!std::filesystem::exists(path, ec)) {
    return make_error(fmt::format("cannot open store sqlite:{} (no such file)", path));
  }
  auto db = SqliteDb::open(path, write);
  if (!db) return make_error(fmt::format("store sqlite:{}: {}", path, db.error()));
  // auto_vacuum must be set before the first table exists (a reader's file has them);
  // WAL survives a kill, and its readers block neither the writer nor each other.
  std::vector<const char*> pragmas = {"PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL",
                                      "PRAGMA foreign_keys = OFF"};
  if (write) pragmas.insert(pragmas.begin(), "PRAGMA auto_vacuum = INCREMENTAL");
  for (const char* pragma : pragmas) {
    if (auto st = db->exec(pragma); !st)
      return make_error(fmt::format("store sqlite:{}: {}", path, st.error()));
  }
  sqlite3* h = db->handle();
  sqlite3_create_function_v2(h, "eacgm_merge", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, nullptr,
                             merge_step, merge_final, nullptr);
  sqlite3_create_function_v2(h, "eacgm_merge2", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, merge_two,
                             nullptr, nullptr, nullptr);
  std::unique_ptr<SqliteStore> store(new SqliteStore(std::move(db).value(), path));
  if (!write) {
    auto has_meta = store->db_.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'meta'");
    if (has_meta && *has_meta == 0) return make_error(fmt::format("store sqlite:{}: holds no history", path));
  }
  if (auto st = store->migrate(); !st)
    return make_error(fmt::format("store sqlite:{}: {}", path, st.error()));
  return store;
}

Status SqliteStore::migrate() {
  if (auto st = db_.exec(create_table(Dialect::kSqlite, tables::kMeta, 0)); !st) return st;
  auto version = meta_int("schema_version", 0);
  if (!version) return make_error(version.error());
  if (*version > kSchemaVersion) {
    return make_error(
        fmt::format("written by a newer eacgm (schema {}; this agent reads up to {}): upgrade the agent or "
                    "use another store",
                    *version, kSchemaVersion));
  }
  if (*version == kSchemaVersion) return {};
  // Each step in its transaction: a file is at one version or the next, never between.
  // The version is read again under the write lock: another agent opening the same file
  // may have made this step while this one waited for the lock.
  for (auto v = *version; v < kSchemaVersion; ++v) {
    if (auto st = db_.exec("BEGIN IMMEDIATE"); !st) return st;
    auto now = meta_int("schema_version", 0);
    if (!now) {
      (void)db_.exec("ROLLBACK");
      return make_error(now.error());
    }
    if (*now > v) {
      if (auto c = db_.exec("COMMIT"); !c) return c;
      v = std::min<std::int64_t>(*now, kSchemaVersion) - 1;
      continue;
    }
    auto st = db_.exec(migration_step(Dialect::kSqlite, v + 1));
    if (st) st = set_meta("schema_version", v + 1);
    if (!st) {
      (void)db_.exec("ROLLBACK");
      return make_error(fmt::format("migrating the schema from version {} to {}: {}", v, v + 1, st.error()));
    }
    if (auto c = db_.exec("COMMIT"); !c) return c;
  }
  return {};
}

Result<std::int64_t> SqliteStore::name_id(std::string_view name) {
  std::string key(name);
  if (auto it = names_.find(key); it != names_.end()) return it->second;
  if (!insert_name_.valid()) {
    auto ins = db_.prepare("INSERT OR IGNORE INTO names(name) VALUES(?)");
    auto sel = db_.prepare("SELECT id FROM names WHERE name = ?");
    if (!ins) return make_error(ins.error());
    if (!sel) return make_error(sel.error());
    insert_name_ = std::move(ins).value();
    select_name_ = std::move(sel).value();
  }
  insert_name_.bind(1, name);
  if (auto st = insert_name_.run(); !st) return make_error(st.error());
  select_name_.bind(1, name);
  auto row = select_name_.step();
  if (!row) return make_error(row.error());
  if (!*row) return make_error("names: no id for a name just written");
  const std::int64_t id = select_name_.i64(0);
  select_name_.reset();
  if (names_.size() >= kMaxCachedNames) names_.clear();
  names_.emplace(std::move(key), id);
  return id;
}

Result<std::int64_t> SqliteStore::meta_int(const std::string& key, std::int64_t fallback) {
  auto stmt = db_.prepare("SELECT value FROM meta WHERE key = ?");
  if (!stmt) return make_error(stmt.error());
  stmt->bind(1, std::string_view(key));
  auto row = stmt->step();
  if (!row) return make_error(row.error());
  return *row ? stmt->i64(0) : fallback;
}

Status SqliteStore::set_meta(const std::string& key, std::int64_t value) {
  auto stmt = db_.prepare(
      "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  if (!stmt) return make_error(stmt.error());
  stmt->bind(1, std::string_view(key));
  stmt->bind(2, value);
  return stmt->run();
}

Result<SqliteStmt*> SqliteStore::insert_statement(const Table& t) {
  auto it = inserts_.find(t.name);
  if (it == inserts_.end()) {
    auto s = db_.prepare(insert_row(Dialect::kSqlite, t));
    if (!s) return make_error(s.error());
    it = inserts_.emplace(t.name, std::move(s).value()).first;
  }
  return &it->second;
}

template <class Rows>
Status SqliteStore::insert_rows(const Table& t, const RowPlace& at, const Rows& rows) {
  if (rows.empty()) return {};
  auto stmt = insert_statement(t);
  if (!stmt) return make_error(stmt.error());
  auto ids = [this](std::string_view name) { return name_id(name); };
  for (const auto& row : rows) {
    SqliteRowOut<decltype(ids)> out{**stmt, ids};
    put_row(out, at, row);
    if (!out.error.empty()) {
      (*stmt)->reset();
      return make_error(out.error);
    }
    if (auto st = (*stmt)->run(); !st) return st;
  }
  return {};
}

Status SqliteStore::write(const std::string& node, const IntervalBatch& b) {
  if (auto st = db_.exec("BEGIN IMMEDIATE"); !st) return st;
  auto fail = [this](const std::string& why) -> Status {
    (void)db_.exec("ROLLBACK");
    names_.clear();  // ids made in the rolled-back transaction are gone
    totals_marked_.clear();
    return make_error(why);
  };
  auto node_id = name_id(node);
  if (!node_id) return fail(node_id.error());
  const RowPlace at{0, *node_id, b.t_ns, b.span_ns};
  Status st = insert_rows(tables::kIntervals, at, std::span(&b, 1));
  auto insert = [&](const Table& t, const auto& rows) {
    if (st) st = insert_rows(t, at, rows);
  };
  for_each_table(b, insert);
  for_each_table(totals_of(b.functions), insert);
  if (st && !totals_marked_.contains(node)) {
    const QuerySql mark = mark_totals_sql(Dialect::kSqlite, node, b.t_ns);
    st = run(mark);
    if (st) totals_marked_.insert(node);
  }
  if (!st) return fail(st.error());
  // The end of what this node has written: minutes and hours before it are complete.
  if (auto m = set_meta("written_to:" + node, b.t_ns + b.span_ns); !m) return fail(m.error());
  if (auto c = db_.exec("COMMIT"); !c) return fail(c.error());
  return {};
}

Status SqliteStore::roll_up(std::int64_t node_id, int to_tier, std::int64_t from_ns, std::int64_t to_ns,
                            std::int64_t span_ns) {
  for (const Table* t : tables::kAll) {
    if (!t->tiered()) continue;
    auto s = db_.prepare(roll_up_sql(Dialect::kSqlite, *t));
    if (!s) return make_error(s.error());
    s->bind(1, static_cast<std::int64_t>(to_tier - 1));
    s->bind(2, node_id);
    s->bind(3, from_ns);
    s->bind(4, to_ns);
    s->bind(5, span_ns);
    s->bind(6, static_cast<std::int64_t>(to_tier));
    if (auto st = s->run(); !st) return st;
  }
  return {};
}

Status SqliteStore::roll_up_jobs(const std::string& node, std::int64_t node_id, std::int64_t hours_to) {
  auto rolled = meta_int(kJobsRolledKey + node, 0);
  if (!rolled) return make_error(rolled.error());
  if (hours_to <= *rolled) return {};
  auto range = [&](const std::string& sql) -> Status {
    auto s = db_.prepare(sql);
    if (!s) return make_error(s.error());
    s->bind(1, node_id);
    s->bind(2, *rolled);
    s->bind(3, hours_to);
    return s->run();
  };
  for (const Table* t : {&tables::kJobGpus, &tables::kJobCalls}) {
    if (auto st = range(job_rollup_delete_sql(Dialect::kSqlite, *t)); !st) return st;
  }
  if (auto st = range(job_gpus_roll_sql(Dialect::kSqlite)); !st) return st;
  std::vector<JobCallRecord> calls;
  auto st = each_row(job_calls_source_sql(Dialect::kSqlite, node_id, *rolled, hours_to),
                     [&calls](const SqliteStmt& s) { calls.push_back(get_job_call_source(s)); });
  if (!st) return st;
  st = insert_rows(tables::kJobCalls, RowPlace{2, node_id, 0, 0}, calls);
  if (!st) return st;
  return set_meta(kJobsRolledKey + node, hours_to);
}

Status SqliteStore::maintain(const std::string& node, std::int64_t now_ns, const Retention& retention) {
  auto written = meta_int("written_to:" + node, 0);
  if (!written) return make_error(written.error());
  if (auto st = db_.exec("BEGIN IMMEDIATE"); !st) return st;
  auto fail = [this](const std::string& why) -> Status {
    (void)db_.exec("ROLLBACK");
    return make_error(why);
  };
  auto node_id_r = name_id(node);
  if (!node_id_r) return fail(node_id_r.error());
  const std::int64_t node_id = *node_id_r;
  if (*written > 0) {
    // Minutes (then hours) that end at or before the last interval written are complete.
    const std::int64_t minutes_to = floor_to(*written, kMinuteNs);
    auto rolled_m = meta_int("rolled_1m:" + node, -1);
    if (!rolled_m) return fail(rolled_m.error());
    const std::int64_t from_m = *rolled_m < 0 ? 0 : *rolled_m;
    if (minutes_to > from_m) {
      if (auto st = roll_up(node_id, 1, from_m, minutes_to, kMinuteNs); !st) return fail(st.error());
      if (auto st = set_meta("rolled_1m:" + node, minutes_to); !st) return fail(st.error());
    }
    const std::int64_t hours_to = floor_to(minutes_to, kHourNs);
    auto rolled_h = meta_int("rolled_1h:" + node, -1);
    if (!rolled_h) return fail(rolled_h.error());
    const std::int64_t from_h = *rolled_h < 0 ? 0 : *rolled_h;
    if (hours_to > from_h) {
      if (auto st = roll_up(node_id, 2, from_h, hours_to, kHourNs); !st) return fail(st.error());
      if (auto st = set_meta("rolled_1h:" + node, hours_to); !st) return fail(st.error());
    }
    if (auto st = roll_up_jobs(node, node_id, hours_to); !st) return fail(st.error());
  }
  // Retention: each tier keeps its window; events and processes the longest one.
  const std::pair<int, std::int64_t> tiers[] = {
      {0, retention.raw_ns}, {1, retention.minute_ns}, {2, retention.hour_ns}};
  for (const Table* table : tables::kAll) {
    if (!table->tiered()) continue;
    for (const auto& [tier, keep] : tiers) {
      auto s = db_.prepare(fmt::format("DELETE FROM {} WHERE tier = ? AND t_ns < ?", table->name));
      if (!s) return fail(s.error());
      s->bind(1, static_cast<std::int64_t>(tier));
      s->bind(2, now_ns - keep);
      if (auto st = s->run(); !st) return fail(st.error());
    }
  }
  if (auto st = run(expire_standings_sql(Dialect::kSqlite, now_ns - kStandingsKeptNs)); !st)
    return fail(st.error());
  if (auto st = run(expire_agents_sql(Dialect::kSqlite, now_ns - retention.hour_ns)); !st)
    return fail(st.error());
  for (const char* sql :
       {"DELETE FROM anomalies WHERE t_ns < ?", "DELETE FROM leaks WHERE t_ns < ?",
        "DELETE FROM processes WHERE last_ns < ?", "DELETE FROM intervals WHERE t_ns < ?"}) {
    auto s = db_.prepare(sql);
    if (!s) return fail(s.error());
    s->bind(1, now_ns - retention.hour_ns);
    if (auto st = s->run(); !st) return fail(st.error());
  }
  if (auto st = db_.exec("COMMIT"); !st) return fail(st.error());
  if (retention.max_bytes > 0) return enforce_cap(node, retention.max_bytes);
  return {};
}

Result<std::uint64_t> SqliteStore::size_bytes() {
  auto pages = db_.scalar("PRAGMA page_count");
  auto free_pages = db_.scalar("PRAGMA freelist_count");
  auto page = db_.scalar("PRAGMA page_size");
  if (!pages || !free_pages || !page) return make_error(db_.message());
  return static_cast<std::uint64_t>((*pages - *free_pages) * *page);
}

Status SqliteStore::enforce_cap(const std::string& node, std::uint64_t max_bytes) {
  // Oldest first: raw intervals an hour at a time, then minute rollups a day at a time,
  // then hour rollups a week at a time; bounded, so one pass never runs away.
  for (int round = 0; round < 256; ++round) {
    auto size = size_bytes();
    if (!size) return make_error(size.error());
    if (*size <= max_bytes) break;
    bool deleted = false;
    const std::pair<int, std::int64_t> tiers[] = {{0, kHourNs}, {1, kHourNs * 24}, {2, kHourNs * 24 * 7}};
    for (const auto& [tier, chunk] : tiers) {
      auto oldest = db_.prepare("SELECT min(t_ns) FROM functions WHERE tier = ?");
      if (!oldest) return make_error(oldest.error());
      oldest->bind(1, static_cast<std::int64_t>(tier));
      auto row = oldest->step();
      if (!row) return make_error(row.error());
      if (!*row || oldest->is_null(0)) continue;
      const std::int64_t cut = oldest->i64(0) + chunk;
      for (const Table* table : tables::kAll) {
        if (!table->tiered()) continue;
        auto s = db_.prepare(fmt::format("DELETE FROM {} WHERE tier = ? AND t_ns < ?", table->name));
        if (!s) return make_error(s.error());
        s->bind(1, static_cast<std::int64_t>(tier));
        s->bind(2, cut);
        if (auto st = s->run(); !st) return st;
      }
      deleted = true;
      break;
    }
    if (!deleted) break;
  }
  (void)node;
  return db_.exec("PRAGMA incremental_vacuum");
}

}  // namespace eacgm::history
