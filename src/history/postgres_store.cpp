// The PostgreSQL history: connection, schema, names and writes.
#include "history/postgres_store.h"

#include <fmt/format.h>

#include "history/job_functions_rollup.h"
#include "history/namespace_rollup.h"
#include "history/schema_sql.h"
#include "history/store_url.h"

namespace eacgm::history {
namespace {

// Held while an agent creates or migrates the schema, so that two agents starting
// together do not both make it.
constexpr std::int64_t kSchemaLock = 0x6561636d73636831;  // "eacmsch1"

}  // namespace

Result<std::unique_ptr<PostgresStore>> PostgresStore::open(const std::string& conninfo, StoreAccess access) {
  const std::string description = redact_store_url(conninfo);
  auto conn = PgConn::connect(conninfo);
  if (!conn) return make_error(conn.error_kind(), fmt::format("store {}: {}", description, conn.error()));
  std::unique_ptr<PostgresStore> store(new PostgresStore(std::move(conn).value(), description, access));
  if (auto st = store->migrate(); !st)
    return make_error(fmt::format("store {}: {}", description, st.error()));
  return store;
}

Status PostgresStore::ready() {
  if (conn_.ok()) return {};
  if (auto st = conn_.reset(); !st) return st;
  return migrate();
}

Status PostgresStore::in_transaction(const std::function<Status()>& body) {
  if (auto st = conn_.exec("BEGIN"); !st) return st;
  Status st = body();
  if (!st) {
    if (conn_.ok()) (void)conn_.exec("ROLLBACK");
    return st;
  }
  return conn_.exec("COMMIT");
}

Status PostgresStore::migrate() {
  return in_transaction([this]() -> Status {
    if (auto st = conn_.exec("SELECT pg_advisory_xact_lock($1)", PgParams().i64(kSchemaLock)); !st) return st;
    // A reader without the right to create tables reads a made schema.
    auto has_meta = conn_.query("SELECT to_regclass('meta') IS NOT NULL");
    if (!has_meta) return std::move(has_meta).take_error();
    if (has_meta->i64(0, 0) == 0) {
      if (access_ == StoreAccess::kRead) return make_error("holds no history");
      if (auto st = conn_.script(create_table(Dialect::kPostgres, tables::kMeta, 0)); !st) return st;
    }
    auto version = meta_int("schema_version", 0);
    if (!version) return std::move(version).take_error();
    if (*version > kSchemaVersion) {
      return make_error(
          fmt::format("written by a newer eacgm (schema {}; this agent reads up to {}): upgrade the agent or "
                      "use another store",
                      *version, kSchemaVersion));
    }
    if (*version == kSchemaVersion) return {};
    // All steps in this one transaction: a database is at its version or the newest.
    for (auto v = *version; v < kSchemaVersion; ++v) {
      const std::string step = migration_step(Dialect::kPostgres, v + 1);
      if (step.empty()) continue;  // a version of the other store alone
      if (auto st = conn_.script(step); !st) {
        return make_error(
            fmt::format("migrating the schema from version {} to {}: {}", v, v + 1, st.error()));
      }
    }
    // The namespace rollup of the hours already in the job rollups.
    if (*version < tables::kNamespaceGpus.since) {
      auto st = conn_.exec(fmt::format("SELECT {}(ARRAY['{}'], 2, min(t_ns), max(t_ns) + 1) FROM job_gpus",
                                       kMakeDaysFunction, tables::kNamespaceGpus.name));
      if (st) st = conn_.exec(namespace_roll_sql("true"));
      if (!st) return make_error(fmt::format("migrating the schema: the namespace rollup: {}", st.error()));
    }
    // The fleet's calls per job of the hours already rolled up.
    if (*version < tables::kJobFunctions.since) {
      auto st =
          conn_.exec(fmt::format("SELECT {}(ARRAY['{}'], 2, min(t_ns), max(t_ns) + 1) FROM functions "
                                 "WHERE tier = 2",
                                 kMakeDaysFunction, tables::kJobFunctions.name));
      if (st) st = conn_.exec(job_functions_roll_sql("true"));
      if (!st) return make_error(fmt::format("migrating the schema: the calls per job: {}", st.error()));
    }
    return set_meta("schema_version", kSchemaVersion);
  });
}

Result<std::int64_t> PostgresStore::meta_int(const std::string& key, std::int64_t fallback) {
  auto r = conn_.query("SELECT value FROM meta WHERE key = $1", PgParams().text(key));
  if (!r) return std::move(r).take_error();
  return r->rows() > 0 ? r->i64(0, 0) : fallback;
}

Status PostgresStore::set_meta(const std::string& key, std::int64_t value) {
  return conn_.exec(
      "INSERT INTO meta(key, value) VALUES($1, $2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      PgParams().text(key).i64(value));
}

Result<bool> PostgresStore::claim(const std::string& key, std::int64_t now_ns, std::int64_t period_ns) {
  auto r = conn_.query(
      "INSERT INTO meta(key, value) VALUES($1, $2) ON CONFLICT(key) DO UPDATE SET value = excluded.value "
      "WHERE meta.value <= $2 - $3 RETURNING 1",
      PgParams().text(key).i64(now_ns).i64(period_ns));
  if (!r) return std::move(r).take_error();
  return r->rows() > 0;
}

Status PostgresStore::resolve(const std::set<std::string>& wanted) {
  std::vector<std::string> missing;
  for (const auto& n : wanted) {
    if (!names_.contains(n)) missing.push_back(n);
  }
  if (missing.empty()) return {};
  if (names_.size() + missing.size() > kMaxCachedNames) {
    names_.clear();
    missing.assign(wanted.begin(), wanted.end());
  }
  // Sorted, so that two writers making the same new names never wait on each other in
  // opposite orders.
  if (auto st = conn_.exec("INSERT INTO names(name) SELECT n FROM unnest($1::text[]) AS n WHERE NOT EXISTS "
                           "(SELECT 1 FROM names WHERE name = n) ORDER BY n ON CONFLICT(name) DO NOTHING",
                           PgParams().text_array(missing));
      !st) {
    return st;
  }
  auto r = conn_.query("SELECT id, name FROM names WHERE name = ANY($1)", PgParams().text_array(missing));
  if (!r) return std::move(r).take_error();
  for (int i = 0; i < r->rows(); ++i) names_[r->text(i, 1)] = static_cast<std::int32_t>(r->i64(i, 0));
  for (const auto& n : missing) {
    if (!names_.contains(n)) return make_error("names: no id for a name just written");
  }
  return {};
}

Result<std::uint64_t> PostgresStore::size_bytes() {
  if (auto st = ready(); !st) return std::move(st).take_error();
  // A partitioned table's size is its partitions' (pg_partition_tree: a plain table alone).
  std::string sql = "SELECT (0";
  for (const Table* table : tables::kAll) {
    sql += fmt::format(
        " + coalesce((SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree(to_regclass('{}'))), "
        "0)",
        table->name);
  }
  sql += ")::bigint";
  auto r = conn_.query(sql);
  if (!r) return std::move(r).take_error();
  return static_cast<std::uint64_t>(r->i64(0, 0));
}

}  // namespace eacgm::history
