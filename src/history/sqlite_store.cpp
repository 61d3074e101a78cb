// The SQLite history: schema, writes, rollups, retention, the size cap and the queries.
#include "history/sqlite_store.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>
#include <variant>

#include "history/process_columns.h"
#include "history/sqlite_schema.h"

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

using Arg = std::variant<std::int64_t, std::string>;

void bind_args(SqliteStmt& stmt, int first, const std::vector<Arg>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const int at = first + static_cast<int>(i);
    if (const auto* n = std::get_if<std::int64_t>(&args[i])) {
      stmt.bind(at, *n);
    } else {
      stmt.bind(at, std::string_view(std::get<std::string>(args[i])));
    }
  }
}

// The query's filters on a table with node, pid and start_ns columns (alias `t`).
std::string filters(const HistoryQuery& q, std::vector<Arg>& args, const char* t = "t") {
  std::string sql;
  if (q.node) {
    sql += fmt::format(" AND {}.node = (SELECT id FROM names WHERE name = ?)", t);
    args.emplace_back(*q.node);
  }
  if (q.pid) {
    sql += fmt::format(" AND {}.pid = ?", t);
    args.emplace_back(static_cast<std::int64_t>(*q.pid));
  }
  if (q.comm) {
    sql += fmt::format(
        " AND EXISTS (SELECT 1 FROM processes p WHERE p.node = {0}.node AND p.pid = {0}.pid AND p.start_ns = "
        "{0}.start_ns AND p.comm = ?)",
        t);
    args.emplace_back(*q.comm);
  }
  return sql;
}

std::int64_t floor_to(std::int64_t t, std::int64_t step) { return t - ((t % step) + step) % step; }

// A process's row, written again each interval it is seen: its span grows, its facts
// stay once known.
std::string process_upsert() {
  std::string columns = "node,pid,start_ns,rank,local_rank,world_size,first_ns,last_ns,exited";
  std::string values = "?,?,?,?,?,?,?,?,?";
  std::string update =
      "rank = coalesce(excluded.rank, rank), local_rank = coalesce(excluded.local_rank, local_rank), "
      "world_size = coalesce(excluded.world_size, world_size), first_ns = min(first_ns, excluded.first_ns), "
      "last_ns = max(last_ns, excluded.last_ns), exited = max(exited, excluded.exited)";
  for (const auto& c : kProcessTextColumns) {
    columns += fmt::format(",{}", c.column);
    values += ",?";
    update += fmt::format(", {0} = CASE WHEN excluded.{0} <> '' THEN excluded.{0} ELSE {0} END", c.column);
  }
  return fmt::format("INSERT INTO processes({}) VALUES({}) ON CONFLICT(node,pid,start_ns) DO UPDATE SET {}",
                     columns, values, update);
}

// The text columns of processes `t`, in kProcessTextColumns' order.
std::string process_text_columns() {
  std::string out;
  for (const auto& c : kProcessTextColumns) out += fmt::format(", t.{}", c.column);
  return out;
}

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

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::string& path) {
  std::error_code ec;
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  auto db = SqliteDb::open(path);
  if (!db) return make_error(fmt::format("store sqlite:{}: {}", path, db.error()));
  // auto_vacuum must be set before the first table exists; WAL survives a kill.
  for (const char* pragma : {"PRAGMA auto_vacuum = INCREMENTAL", "PRAGMA journal_mode = WAL",
                             "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = OFF"}) {
    if (auto st = db->exec(pragma); !st)
      return make_error(fmt::format("store sqlite:{}: {}", path, st.error()));
  }
  sqlite3* h = db->handle();
  sqlite3_create_function_v2(h, "eacgm_merge", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, nullptr,
                             merge_step, merge_final, nullptr);
  sqlite3_create_function_v2(h, "eacgm_merge2", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, merge_two,
                             nullptr, nullptr, nullptr);
  std::unique_ptr<SqliteStore> store(new SqliteStore(std::move(db).value(), path));
  if (auto st = store->migrate(); !st)
    return make_error(fmt::format("store sqlite:{}: {}", path, st.error()));
  return store;
}

Status SqliteStore::migrate() {
  if (auto st = db_.exec("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL)");
      !st) {
    return st;
  }
  auto version = meta_int("schema_version", 0);
  if (!version) return make_error(version.error());
  if (*version > kSchemaVersion) {
    return make_error(
        fmt::format("written by a newer eacgm (schema {}; this agent reads up to {}): upgrade the agent or "
                    "use another store",
                    *version, kSchemaVersion));
  }
  if (*version == kSchemaVersion) return {};
  static_assert(std::size(kSqliteSteps) == kSchemaVersion, "one step per schema version");
  // Each step in its transaction: a file is at one version or the next, never between.
  for (auto v = *version; v < kSchemaVersion; ++v) {
    if (auto st = db_.exec("BEGIN IMMEDIATE"); !st) return st;
    auto st = db_.exec(kSqliteSteps[v]);
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

Status SqliteStore::write(const std::string& node, const IntervalBatch& b) {
  if (auto st = db_.exec("BEGIN IMMEDIATE"); !st) return st;
  auto fail = [this](const std::string& why) -> Status {
    (void)db_.exec("ROLLBACK");
    names_.clear();  // ids made in the rolled-back transaction are gone
    return make_error(why);
  };
  const auto t = b.t_ns;
  const auto span = b.span_ns;
  auto node_id_r = name_id(node);
  if (!node_id_r) return fail(node_id_r.error());
  const std::int64_t node_id = *node_id_r;
  {
    auto s = db_.prepare("INSERT OR REPLACE INTO intervals(node, t_ns, span_ns, mode) VALUES(?,?,?,?)");
    if (!s) return fail(s.error());
    s->bind(1, node_id);
    s->bind(2, t);
    s->bind(3, span);
    s->bind(4, std::string_view(b.mode));
    if (auto st = s->run(); !st) return fail(st.error());
  }
  if (!b.processes.empty()) {
    auto s = db_.prepare(process_upsert());
    if (!s) return fail(s.error());
    for (const auto& p : b.processes) {
      int at = 0;
      s->bind(++at, node_id);
      s->bind(++at, static_cast<std::int64_t>(p.key.pid));
      s->bind(++at, p.key.start_ns);
      s->bind(++at, p.rank);
      s->bind(++at, p.local_rank);
      s->bind(++at, p.world_size);
      s->bind(++at, p.first_ns);
      s->bind(++at, p.last_ns);
      s->bind(++at, std::int64_t{p.exited ? 1 : 0});
      for (const auto& c : kProcessTextColumns) s->bind(++at, std::string_view(p.*c.field));
      if (auto st = s->run(); !st) return fail(st.error());
    }
  }
  if (!b.functions.empty()) {
    auto s = db_.prepare(
        "INSERT INTO functions(tier,node,t_ns,span_ns,pid,start_ns,domain,function,calls,errors,bytes,timed,"
        "estimated,calls_variance,latency) VALUES(0,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
        "ON CONFLICT(tier,t_ns,node,pid,start_ns,domain,function) DO UPDATE SET calls = calls + "
        "excluded.calls, "
        "errors = errors + excluded.errors, bytes = bytes + excluded.bytes, timed = timed + excluded.timed, "
        "estimated = estimated + excluded.estimated, calls_variance = calls_variance + "
        "excluded.calls_variance, "
        "latency = eacgm_merge2(latency, excluded.latency)");
    if (!s) return fail(s.error());
    for (const auto& f : b.functions) {
      auto domain = name_id(f.domain);
      auto function = name_id(f.function);
      if (!domain || !function) return fail(domain ? function.error() : domain.error());
      s->bind(1, node_id);
      s->bind(2, t);
      s->bind(3, span);
      s->bind(4, static_cast<std::int64_t>(f.process.pid));
      s->bind(5, f.process.start_ns);
      s->bind(6, *domain);
      s->bind(7, *function);
      s->bind(8, static_cast<std::int64_t>(f.calls));
      s->bind(9, static_cast<std::int64_t>(f.errors));
      s->bind(10, static_cast<std::int64_t>(f.bytes));
      s->bind(11, static_cast<std::int64_t>(f.timed));
      s->bind(12, static_cast<std::int64_t>(f.estimated));
      s->bind(13, f.calls_variance);
      if (f.latency.empty()) {
        s->bind_null(14);
      } else {
        s->bind_blob(14, encode(f.latency));
      }
      if (auto st = s->run(); !st) return fail(st.error());
    }
  }
  if (!b.kernels.empty()) {
    auto s = db_.prepare(
        "INSERT INTO kernels(tier,node,t_ns,span_ns,kernel,launches) VALUES(0,?,?,?,?,?) "
        "ON CONFLICT(tier,t_ns,node,kernel) DO UPDATE SET launches = launches + excluded.launches");
    if (!s) return fail(s.error());
    for (const auto& k : b.kernels) {
      auto kernel = name_id(k.kernel);
      if (!kernel) return fail(kernel.error());
      s->bind(1, node_id);
      s->bind(2, t);
      s->bind(3, span);
      s->bind(4, *kernel);
      s->bind(5, static_cast<std::int64_t>(k.launches));
      if (auto st = s->run(); !st) return fail(st.error());
    }
  }
  if (!b.gpus.empty()) {
    auto s = db_.prepare(
        "INSERT OR REPLACE INTO gpus(tier,node,t_ns,span_ns,gpu,uuid,name,samples,util_mean,util_max,"
        "memory_used_mean,memory_used_max,memory_total,power_mean_w,power_max_w,temperature_max) "
        "VALUES(0,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!s) return fail(s.error());
    for (const auto& g : b.gpus) {
      auto uuid = name_id(g.uuid);
      auto name = name_id(g.name);
      if (!uuid || !name) return fail(uuid ? name.error() : uuid.error());
      s->bind(1, node_id);
      s->bind(2, t);
      s->bind(3, span);
      s->bind(4, static_cast<std::int64_t>(g.index));
      s->bind(5, *uuid);
      s->bind(6, *name);
      s->bind(7, static_cast<std::int64_t>(g.samples));
      s->bind(8, g.util_mean);
      s->bind(9, g.util_max);
      s->bind(10, g.memory_used_mean);
      s->bind(11, g.memory_used_max);
      s->bind(12, g.memory_total);
      s->bind(13, g.power_mean_w);
      s->bind(14, g.power_max_w);
      s->bind(15, g.temperature_max);
      if (auto st = s->run(); !st) return fail(st.error());
    }
  }
  if (!b.gpu_processes.empty()) {
    auto s = db_.prepare(
        "INSERT OR REPLACE INTO "
        "gpu_processes(tier,node,t_ns,span_ns,gpu,pid,start_ns,samples,memory_max,sm_mean) "
        "VALUES(0,?,?,?,?,?,?,?,?,?)");
    if (!s) return fail(s.error());
    for (const auto& g : b.gpu_processes) {
      s->bind(1, node_id);
      s->bind(2, t);
      s->bind(3, span);
      s->bind(4, static_cast<std::int64_t>(g.gpu));
      s->bind(5, static_cast<std::int64_t>(g.process.pid));
      s->bind(6, g.process.start_ns);
      s->bind(7, static_cast<std::int64_t>(g.samples));
      s->bind(8, g.memory_max);
      s->bind(9, g.sm_mean);
      if (auto st = s->run(); !st) return fail(st.error());
    }
  }
  if (!b.anomalies.empty()) {
    auto s = db_.prepare(
        "INSERT INTO anomalies(node,t_ns,end_ns,pid,start_ns,kind,domain,function,score,value,median_ns) "
        "VALUES(?,?,?,?,?,?,?,?,?,?,?)");
    if (!s) return fail(s.error());
    for (const auto& a : b.anomalies) {
      auto domain = name_id(a.domain);
      auto function = name_id(a.function);
      if (!domain || !function) return fail(domain ? function.error() : domain.error());
      s->bind(1, node_id);
      s->bind(2, a.t_ns);
      s->bind(3, a.end_ns);
      s->bind(4, static_cast<std::int64_t>(a.process.pid));
      s->bind(5, a.process.start_ns);
      s->bind(6, std::string_view(a.kind));
      s->bind(7, *domain);
      s->bind(8, *function);
      s->bind(9, a.score);
      s->bind(10, a.value);
      s->bind(11, a.median_ns);
      if (auto st = s->run(); !st) return fail(st.error());
    }
  }
  if (!b.leaks.empty()) {
    auto s = db_.prepare(
        "INSERT INTO leaks(node,t_ns,pid,start_ns,device,allocations,bytes) VALUES(?,?,?,?,?,?,?)");
    if (!s) return fail(s.error());
    for (const auto& l : b.leaks) {
      s->bind(1, node_id);
      s->bind(2, t + span);
      s->bind(3, static_cast<std::int64_t>(l.process.pid));
      s->bind(4, l.process.start_ns);
      s->bind(5, static_cast<std::int64_t>(l.device));
      s->bind(6, static_cast<std::int64_t>(l.allocations));
      s->bind(7, static_cast<std::int64_t>(l.bytes));
      if (auto st = s->run(); !st) return fail(st.error());
    }
  }
  // The end of what this node has written: minutes and hours before it are complete.
  if (auto st = set_meta("written_to:" + node, t + span); !st) return fail(st.error());
  if (auto st = db_.exec("COMMIT"); !st) return fail(st.error());
  return {};
}

Status SqliteStore::roll_up(std::int64_t node_id, int to_tier, std::int64_t from_ns, std::int64_t to_ns,
                            std::int64_t span_ns) {
  const int from_tier = to_tier - 1;
  const std::string range = "WHERE t.tier = ?1 AND t.node = ?2 AND t.t_ns >= ?3 AND t.t_ns < ?4";
  const std::string bucket = "(t.t_ns / ?5) * ?5";
  const std::string statements[] = {
      fmt::format(
          "INSERT INTO functions(tier,node,t_ns,span_ns,pid,start_ns,domain,function,calls,errors,bytes,"
          "timed,estimated,calls_variance,latency) SELECT ?6, t.node, {0}, ?5, t.pid, t.start_ns, t.domain, "
          "t.function, SUM(t.calls), SUM(t.errors), SUM(t.bytes), SUM(t.timed), SUM(t.estimated), "
          "SUM(t.calls_variance), eacgm_merge(t.latency) FROM functions t {1} GROUP BY 3, t.pid, t.start_ns, "
          "t.domain, t.function ON CONFLICT(tier,t_ns,node,pid,start_ns,domain,function) DO UPDATE SET "
          "calls = calls + excluded.calls, errors = errors + excluded.errors, bytes = bytes + "
          "excluded.bytes, "
          "timed = timed + excluded.timed, estimated = estimated + excluded.estimated, "
          "calls_variance = calls_variance + excluded.calls_variance, "
          "latency = eacgm_merge2(latency, excluded.latency)",
          bucket, range),
      fmt::format(
          "INSERT INTO kernels(tier,node,t_ns,span_ns,kernel,launches) SELECT ?6, t.node, {0}, ?5, t.kernel, "
          "SUM(t.launches) FROM kernels t {1} GROUP BY 3, t.kernel ON CONFLICT(tier,t_ns,node,kernel) DO "
          "UPDATE SET launches = launches + excluded.launches",
          bucket, range),
      fmt::format(
          "INSERT INTO gpus(tier,node,t_ns,span_ns,gpu,uuid,name,samples,util_mean,util_max,memory_used_mean,"
          "memory_used_max,memory_total,power_mean_w,power_max_w,temperature_max) SELECT ?6, t.node, {0}, "
          "?5, t.gpu, "
          "max(t.uuid), max(t.name), SUM(t.samples), "
          "SUM(t.util_mean * t.samples) / SUM(CASE WHEN t.util_mean IS NOT NULL THEN t.samples END), "
          "MAX(t.util_max), "
          "SUM(t.memory_used_mean * t.samples) / SUM(CASE WHEN t.memory_used_mean IS NOT NULL THEN t.samples "
          "END), "
          "MAX(t.memory_used_max), MAX(t.memory_total), "
          "SUM(t.power_mean_w * t.samples) / SUM(CASE WHEN t.power_mean_w IS NOT NULL THEN t.samples END), "
          "MAX(t.power_max_w), MAX(t.temperature_max) FROM gpus t {1} GROUP BY 3, t.gpu "
          "ON CONFLICT(tier,t_ns,node,gpu) DO UPDATE SET samples = samples + excluded.samples, "
          "util_max = max(coalesce(util_max, 0), coalesce(excluded.util_max, 0)), "
          "memory_used_max = max(coalesce(memory_used_max, 0), coalesce(excluded.memory_used_max, 0)), "
          "power_max_w = max(coalesce(power_max_w, 0), coalesce(excluded.power_max_w, 0)), "
          "temperature_max = max(coalesce(temperature_max, 0), coalesce(excluded.temperature_max, 0))",
          bucket, range),
      fmt::format(
          "INSERT INTO gpu_processes(tier,node,t_ns,span_ns,gpu,pid,start_ns,samples,memory_max,sm_mean) "
          "SELECT ?6, t.node, {0}, ?5, t.gpu, t.pid, t.start_ns, SUM(t.samples), MAX(t.memory_max), "
          "SUM(t.sm_mean * t.samples) / SUM(CASE WHEN t.sm_mean IS NOT NULL THEN t.samples END) "
          "FROM gpu_processes t {1} GROUP BY 3, t.gpu, t.pid, t.start_ns "
          "ON CONFLICT(tier,t_ns,node,gpu,pid,start_ns) DO UPDATE SET samples = samples + excluded.samples, "
          "memory_max = max(coalesce(memory_max, 0), coalesce(excluded.memory_max, 0))",
          bucket, range),
  };
  for (const auto& sql : statements) {
    auto s = db_.prepare(sql);
    if (!s) return make_error(s.error());
    s->bind(1, static_cast<std::int64_t>(from_tier));
    s->bind(2, node_id);
    s->bind(3, from_ns);
    s->bind(4, to_ns);
    s->bind(5, span_ns);
    s->bind(6, static_cast<std::int64_t>(to_tier));
    if (auto st = s->run(); !st) return st;
  }
  return {};
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
  }
  // Retention: each tier keeps its window; events and processes the longest one.
  const std::pair<int, std::int64_t> tiers[] = {
      {0, retention.raw_ns}, {1, retention.minute_ns}, {2, retention.hour_ns}};
  for (const char* table : {"functions", "kernels", "gpus", "gpu_processes"}) {
    for (const auto& [tier, keep] : tiers) {
      auto s = db_.prepare(fmt::format("DELETE FROM {} WHERE tier = ? AND t_ns < ?", table));
      if (!s) return fail(s.error());
      s->bind(1, static_cast<std::int64_t>(tier));
      s->bind(2, now_ns - keep);
      if (auto st = s->run(); !st) return fail(st.error());
    }
  }
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
      for (const char* table : {"functions", "kernels", "gpus", "gpu_processes"}) {
        auto s = db_.prepare(fmt::format("DELETE FROM {} WHERE tier = ? AND t_ns < ?", table));
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

Result<std::vector<StoredProcess>> SqliteStore::processes(const HistoryQuery& q, Tier tier) {
  std::vector<Arg> args{static_cast<std::int64_t>(tier), q.from_ns, q.to_ns, q.to_ns, q.from_ns};
  std::string sql =
      "SELECT (SELECT name FROM names WHERE id = t.node), t.pid, t.start_ns, t.rank, t.local_rank, "
      "t.world_size, t.first_ns, t.last_ns, t.exited, coalesce(SUM(f.calls), 0), coalesce(SUM(f.errors), 0)" +
      process_text_columns() +
      " FROM processes t LEFT JOIN functions f ON f.node = t.node AND f.pid = t.pid AND f.start_ns = "
      "t.start_ns AND f.tier = ? AND f.t_ns >= ? AND f.t_ns < ? AND f.domain IS NOT (SELECT id FROM names "
      "WHERE name = '" +
      std::string(kGpuTimeDomain) + "') WHERE t.first_ns < ? AND t.last_ns >= ?";
  sql += filters(q, args);
  sql += " GROUP BY t.node, t.pid, t.start_ns ORDER BY 10 DESC, t.node, t.pid LIMIT 10000";
  auto s = db_.prepare(sql);
  if (!s) return make_error(s.error());
  bind_args(*s, 1, args);
  std::vector<StoredProcess> out;
  for (;;) {
    auto row = s->step();
    if (!row) return make_error(row.error());
    if (!*row) break;
    StoredProcess p;
    p.node = s->text(0);
    p.record.key = {static_cast<std::uint32_t>(s->i64(1)), s->i64(2)};
    p.record.rank = s->opt<long>(3);
    p.record.local_rank = s->opt<long>(4);
    p.record.world_size = s->opt<long>(5);
    p.record.first_ns = s->i64(6);
    p.record.last_ns = s->i64(7);
    p.record.exited = s->i64(8) != 0;
    p.calls = static_cast<std::uint64_t>(s->i64(9));
    p.errors = static_cast<std::uint64_t>(s->i64(10));
    int at = 11;
    for (const auto& c : kProcessTextColumns) p.record.*c.field = s->text(at++);
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<StoredFunction>> SqliteStore::functions(const HistoryQuery& q, Tier tier) {
  std::vector<Arg> args{static_cast<std::int64_t>(tier), q.from_ns, q.to_ns};
  std::string sql =
      "SELECT (SELECT name FROM names WHERE id = t.domain), (SELECT name FROM names WHERE id = t.function), "
      "SUM(t.calls), SUM(t.errors), SUM(t.bytes), SUM(t.timed), SUM(t.estimated), "
      "SUM(t.calls_variance), eacgm_merge(t.latency) FROM functions t WHERE t.tier = ? AND t.t_ns >= ? AND "
      "t.t_ns < ?";
  sql += filters(q, args);
  sql += " GROUP BY t.domain, t.function ORDER BY 3 DESC, 1, 2";
  auto s = db_.prepare(sql);
  if (!s) return make_error(s.error());
  bind_args(*s, 1, args);
  std::vector<StoredFunction> out;
  for (;;) {
    auto row = s->step();
    if (!row) return make_error(row.error());
    if (!*row) break;
    StoredFunction f;
    f.domain = s->text(0);
    f.function = s->text(1);
    f.calls = static_cast<std::uint64_t>(s->i64(2));
    f.errors = static_cast<std::uint64_t>(s->i64(3));
    f.bytes = static_cast<std::uint64_t>(s->i64(4));
    f.timed = static_cast<std::uint64_t>(s->i64(5));
    f.estimated = static_cast<std::uint64_t>(s->i64(6));
    f.calls_variance = s->f64(7);
    if (!s->is_null(8)) {
      if (auto sk = decode(s->blob(8))) f.latency = std::move(sk).value();
    }
    out.push_back(std::move(f));
  }
  return out;
}

Result<std::vector<StoredKernel>> SqliteStore::kernels(const HistoryQuery& q, Tier tier) {
  std::vector<Arg> args{static_cast<std::int64_t>(tier), q.from_ns, q.to_ns};
  std::string sql =
      "SELECT (SELECT name FROM names WHERE id = t.kernel), SUM(t.launches) FROM kernels t WHERE t.tier = ? "
      "AND "
      "t.t_ns >= ? AND t.t_ns < ?";
  if (q.node) {
    sql += " AND t.node = (SELECT id FROM names WHERE name = ?)";
    args.emplace_back(*q.node);
  }
  sql += " GROUP BY t.kernel ORDER BY 2 DESC, 1 LIMIT 1000";
  auto s = db_.prepare(sql);
  if (!s) return make_error(s.error());
  bind_args(*s, 1, args);
  std::vector<StoredKernel> out;
  for (;;) {
    auto row = s->step();
    if (!row) return make_error(row.error());
    if (!*row) break;
    out.push_back({s->text(0), static_cast<std::uint64_t>(s->i64(1))});
  }
  return out;
}

Result<std::vector<StoredGpuPoint>> SqliteStore::gpus(const HistoryQuery& q, Tier tier) {
  const std::int64_t step = q.step_ns > 0 ? q.step_ns : kMinuteNs;
  std::vector<Arg> args{step, step, static_cast<std::int64_t>(tier), q.from_ns, q.to_ns};
  std::string sql =
      "SELECT t.node AS c0, t.gpu AS c1, max(t.uuid) AS c2, max(t.name) AS c3, (t.t_ns / ?) * ? AS c4, "
      "SUM(t.util_mean * t.samples) / SUM(CASE WHEN t.util_mean IS NOT NULL THEN t.samples END) AS c5, "
      "MAX(t.util_max) AS c6, "
      "SUM(t.memory_used_mean * t.samples) / SUM(CASE WHEN t.memory_used_mean IS NOT NULL THEN t.samples "
      "END) AS c7, "
      "MAX(t.memory_used_max) AS c8, MAX(t.memory_total) AS c9, "
      "SUM(t.power_mean_w * t.samples) / SUM(CASE WHEN t.power_mean_w IS NOT NULL THEN t.samples END) AS "
      "c10, "
      "MAX(t.power_max_w) AS c11, MAX(t.temperature_max) AS c12 FROM gpus t WHERE t.tier = ? AND t.t_ns >= ? "
      "AND "
      "t.t_ns < ?";
  if (q.node) {
    sql += " AND t.node = (SELECT id FROM names WHERE name = ?)";
    args.emplace_back(*q.node);
  }
  sql += " GROUP BY t.node, t.gpu, 5 LIMIT 100000";
  // Names by id outside the aggregate (SQLite allows no aggregate inside a subquery).
  sql =
      "SELECT (SELECT name FROM names WHERE id = a.c0), a.c1, (SELECT name FROM names WHERE id = a.c2), "
      "(SELECT name FROM names WHERE id = a.c3), a.c4, a.c5, a.c6, a.c7, a.c8, a.c9, a.c10, a.c11, a.c12 "
      "FROM (" +
      sql + ") a ORDER BY a.c0, a.c1, a.c4";
  auto s = db_.prepare(sql);
  if (!s) return make_error(s.error());
  bind_args(*s, 1, args);
  std::vector<StoredGpuPoint> out;
  for (;;) {
    auto row = s->step();
    if (!row) return make_error(row.error());
    if (!*row) break;
    StoredGpuPoint p;
    p.node = s->text(0);
    p.gpu = static_cast<std::uint32_t>(s->i64(1));
    p.uuid = s->text(2);
    p.name = s->text(3);
    p.t_ns = s->i64(4);
    p.util_mean = s->opt<double>(5);
    p.util_max = s->opt<std::uint32_t>(6);
    p.memory_used_mean = s->opt<double>(7);
    p.memory_used_max = s->opt<std::uint64_t>(8);
    p.memory_total = s->opt<std::uint64_t>(9);
    p.power_mean_w = s->opt<double>(10);
    p.power_max_w = s->opt<double>(11);
    p.temperature_max = s->opt<std::uint32_t>(12);
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<StoredAnomaly>> SqliteStore::anomalies(const HistoryQuery& q) {
  std::vector<Arg> args{q.from_ns, q.to_ns};
  std::string sql =
      "SELECT (SELECT name FROM names WHERE id = t.node), t.t_ns, t.end_ns, t.pid, t.start_ns, t.kind, "
      "(SELECT name FROM names WHERE id = t.domain), (SELECT name FROM names WHERE id = t.function), "
      "t.score, t.value, "
      "t.median_ns FROM anomalies t WHERE t.t_ns >= ? AND t.t_ns < ?";
  sql += filters(q, args);
  sql += " ORDER BY t.t_ns LIMIT 10000";
  auto s = db_.prepare(sql);
  if (!s) return make_error(s.error());
  bind_args(*s, 1, args);
  std::vector<StoredAnomaly> out;
  for (;;) {
    auto row = s->step();
    if (!row) return make_error(row.error());
    if (!*row) break;
    StoredAnomaly a;
    a.node = s->text(0);
    a.record.t_ns = s->i64(1);
    a.record.end_ns = s->i64(2);
    a.record.process = {static_cast<std::uint32_t>(s->i64(3)), s->i64(4)};
    a.record.kind = s->text(5);
    a.record.domain = s->text(6);
    a.record.function = s->text(7);
    a.record.score = s->f64(8);
    a.record.value = s->f64(9);
    a.record.median_ns = s->f64(10);
    out.push_back(std::move(a));
  }
  return out;
}

Result<std::vector<StoredLeak>> SqliteStore::leaks(const HistoryQuery& q) {
  std::vector<Arg> args{q.from_ns, q.to_ns};
  std::string sql =
      "SELECT (SELECT name FROM names WHERE id = t.node), t.t_ns, t.pid, t.start_ns, t.device, "
      "t.allocations, t.bytes, coalesce((SELECT p.comm FROM "
      "processes p WHERE p.node = t.node AND p.pid = t.pid AND p.start_ns = t.start_ns), '') FROM leaks t "
      "WHERE t.t_ns >= ? AND t.t_ns < ?";
  sql += filters(q, args);
  sql += " ORDER BY t.bytes DESC LIMIT 10000";
  auto s = db_.prepare(sql);
  if (!s) return make_error(s.error());
  bind_args(*s, 1, args);
  std::vector<StoredLeak> out;
  for (;;) {
    auto row = s->step();
    if (!row) return make_error(row.error());
    if (!*row) break;
    StoredLeak l;
    l.node = s->text(0);
    l.t_ns = s->i64(1);
    l.record.process = {static_cast<std::uint32_t>(s->i64(2)), s->i64(3)};
    l.record.device = static_cast<std::int32_t>(s->i64(4));
    l.record.allocations = static_cast<std::uint64_t>(s->i64(5));
    l.record.bytes = static_cast<std::uint64_t>(s->i64(6));
    l.comm = s->text(7);
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace eacgm::history
