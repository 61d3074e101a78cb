// The two stores behind one suite (store_test.cpp): a fresh SQLite file, or a fresh
// database of a throwaway PostgreSQL server (pg_cluster.h, started once per test binary
// when the first PostgreSQL test runs), each with what a test needs beside the store: SQL
// run outside it, its schema as the catalogs describe it, the literal SQL that made a
// store of each version before the schema's description (legacy_schema.h).
#pragma once

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "history/postgres_store.h"
#include "history/sqlite_store.h"
#include "legacy_schema.h"
#include "pg_cluster.h"

namespace eacgm::history::test {

class StoreBackend {
 public:
  virtual ~StoreBackend() = default;
  // A fresh, empty store for the next open(); empty on success, else why not.
  virtual std::string fresh() = 0;
  virtual Result<std::unique_ptr<Store>> open() = 0;
  // SQL run on the store's database outside the store (as the store's user); empty on
  // success, else the error.
  virtual std::string exec(const std::string& sql) = 0;
  // The rows a query answers, one per line, columns separated by '|' (NULL as "").
  virtual std::string query(const std::string& sql) = 0;
  // The tables, columns (types, NOT NULL, defaults, keys) and indexes, as the catalogs say.
  virtual std::string schema() = 0;
  // The SQL the build before the schema's description made a store of `version` with.
  virtual std::string legacy_schema(int version) const = 0;
  // A blob as an SQL literal.
  virtual std::string blob_literal(const std::string& bytes) const = 0;
  // PostgreSQL measures each node's clock against the server's (node_clocks); SQLite is on
  // the node's own.
  virtual bool measures_clock() const = 0;
  // SQLite gives the space of deleted rows back at once (incremental vacuum); PostgreSQL
  // keeps it for new rows.
  virtual bool cap_shrinks_file() const = 0;
  // Retention drops an interval table's whole days (PostgreSQL's day tables): a row stays
  // until its day has passed its tier's window.
  virtual bool drops_whole_days() const = 0;
};

inline std::string hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) out += {kDigits[c >> 4], kDigits[c & 15]};
  return out;
}

class SqliteBackend final : public StoreBackend {
 public:
  ~SqliteBackend() override { std::filesystem::remove_all(dir_); }
  std::string fresh() override {
    static int counter = 0;
    std::filesystem::remove_all(dir_);
    dir_ = std::filesystem::temp_directory_path() /
           ("eacgm-store-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    return {};
  }
  std::string path() const { return (dir_ / "eacgm.db").string(); }
  Result<std::unique_ptr<Store>> open() override {
    auto s = SqliteStore::open(path());
    if (!s) return make_error(s.error());
    return std::unique_ptr<Store>(std::move(s).value());
  }
  std::string exec(const std::string& sql) override {
    sqlite3* db = nullptr;
    std::string out;
    if (sqlite3_open(path().c_str(), &db) != SQLITE_OK) out = "cannot open " + path();
    char* err = nullptr;
    if (out.empty() && sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK)
      out = err ? err : "sqlite3_exec failed";
    sqlite3_free(err);
    sqlite3_close(db);
    return out;
  }
  std::string query(const std::string& sql) override {
    sqlite3* db = nullptr;
    sqlite3_stmt* stmt = nullptr;
    std::string out;
    if (sqlite3_open(path().c_str(), &db) != SQLITE_OK ||
        sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      out = std::string("error: ") + sqlite3_errmsg(db);
    }
    while (stmt != nullptr && sqlite3_step(stmt) == SQLITE_ROW) {
      if (!out.empty()) out += '\n';
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
        const auto* v = sqlite3_column_text(stmt, c);
        out += std::string(c > 0 ? "|" : "") + (v ? reinterpret_cast<const char*>(v) : "");
      }
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return out;
  }
  std::string schema() override {
    return query(
               "SELECT m.name, (SELECT l.wr FROM pragma_table_list l WHERE l.schema = 'main' AND l.name = "
               "m.name), "
               "c.cid, c.name, c.type, c.\"notnull\", c.dflt_value, c.pk FROM sqlite_master m, "
               "pragma_table_info(m.name) c WHERE m.type = 'table' ORDER BY m.name, c.cid") +
           "\n" +
           query(
               "SELECT m.name, i.name, i.\"unique\", i.origin, i.partial, x.seqno, x.cid, x.name, "
               "x.\"desc\", "
               "x.coll, x.key FROM sqlite_master m, pragma_index_list(m.name) i, pragma_index_xinfo(i.name) "
               "x "
               "WHERE m.type = 'table' ORDER BY m.name, i.name, x.seqno");
  }
  std::string legacy_schema(int version) const override { return legacy_schema_sql("sqlite", version); }
  std::string blob_literal(const std::string& bytes) const override { return "X'" + hex(bytes) + "'"; }
  bool measures_clock() const override { return false; }
  bool cap_shrinks_file() const override { return true; }
  bool drops_whole_days() const override { return false; }

 private:
  std::filesystem::path dir_;
};

class PostgresBackend final : public StoreBackend {
 public:
  // The server of every PostgreSQL test of this binary, stopped at its exit.
  static PgCluster& cluster() {
    static const std::unique_ptr<PgCluster> c = [] {
      auto made = std::make_unique<PgCluster>();
      error() = made->start();
      return made;
    }();
    return *c;
  }
  static std::string& error() {
    static std::string e;
    return e;
  }
  std::string fresh() override {
    static int databases = 0;
    cluster();
    if (!error().empty()) return "the test server did not start: " + error();
    db_ = "h" + std::to_string(++databases);
    return cluster().create_database(db_);
  }
  const std::string& database() const { return db_; }
  Result<std::unique_ptr<Store>> open() override {
    auto s = PostgresStore::open(cluster().url(db_));
    if (!s) return make_error(s.error());
    return std::unique_ptr<Store>(std::move(s).value());
  }
  std::string exec(const std::string& sql) override {
    return cluster().admin(db_, std::string("SET ROLE ") + PgCluster::kUser + ";" + sql);
  }
  std::string query(const std::string& sql) override {
    auto [rc, rows] = cluster().psql(db_, sql);
    return rc == 0 ? rows : "error: " + rows;
  }
  std::string schema() override {
    return query(
               "SELECT table_name, ordinal_position, column_name, data_type, is_nullable, "
               "coalesce(column_default, ''), is_identity, coalesce(identity_generation, '') FROM "
               "information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2") +
           "\n" +
           query(
               "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY "
               "1, 2") +
           "\n" +
           query(
               "SELECT table_name, constraint_name, constraint_type FROM "
               "information_schema.table_constraints "
               "WHERE table_schema = 'public' AND constraint_type IN ('PRIMARY KEY', 'UNIQUE') ORDER BY 1, "
               "2");
  }
  std::string legacy_schema(int version) const override { return legacy_schema_sql("postgres", version); }
  std::string blob_literal(const std::string& bytes) const override {
    return "'\\x" + hex(bytes) + "'::bytea";
  }
  bool measures_clock() const override { return true; }
  bool cap_shrinks_file() const override { return false; }
  bool drops_whole_days() const override { return true; }

 private:
  std::string db_;
};

// The backend a parameterised test names ("sqlite" or "postgres").
inline std::unique_ptr<StoreBackend> backend_named(const std::string& name) {
  if (name == "sqlite") return std::make_unique<SqliteBackend>();
  return std::make_unique<PostgresBackend>();
}

}  // namespace eacgm::history::test
