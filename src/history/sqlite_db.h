// A thin owner of an SQLite connection and its prepared statements: errors as Status
// with SQLite's message, bindings by position, rows read by column.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace eacgm::history {

class SqliteStmt {
 public:
  SqliteStmt() = default;
  SqliteStmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  SqliteStmt(SqliteStmt&& o) noexcept : db_(o.db_), stmt_(o.stmt_) { o.stmt_ = nullptr; }
  SqliteStmt& operator=(SqliteStmt&& o) noexcept;
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;
  ~SqliteStmt();
  bool valid() const { return stmt_ != nullptr; }

  // Positions from 1, as SQLite counts them.
  void bind(int i, std::int64_t v);
  void bind(int i, double v);
  void bind(int i, std::string_view v);
  void bind_blob(int i, std::string_view bytes);
  void bind_null(int i);
  template <class T>
  void bind(int i, const std::optional<T>& v) {
    if (v) {
      bind(i, static_cast<std::conditional_t<std::is_floating_point_v<T>, double, std::int64_t>>(*v));
    } else {
      bind_null(i);
    }
  }

  // True while a row is there; an error ends the loop with `error()` set.
  Result<bool> step();
  // Runs to the end (statements that return no rows), then resets.
  Status run();
  void reset();

  std::int64_t i64(int col) const;
  double f64(int col) const;
  std::string text(int col) const;
  std::span<const std::uint8_t> blob(int col) const;
  bool is_null(int col) const;
  template <class T>
  std::optional<T> opt(int col) const {
    if (is_null(col)) return std::nullopt;
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(f64(col));
    } else {
      return static_cast<T>(i64(col));
    }
  }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteDb {
 public:
  // Opens the file, creating it when `create`; `busy_ms`: how long a locked database is
  // waited for.
  static Result<SqliteDb> open(const std::string& path, bool create = true, int busy_ms = 5000);
  SqliteDb() = default;
  SqliteDb(SqliteDb&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  SqliteDb& operator=(SqliteDb&& o) noexcept;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  ~SqliteDb();

  Status exec(const std::string& sql);
  Result<SqliteStmt> prepare(const std::string& sql);
  // The single integer a query answers (PRAGMA page_count...).
  Result<std::int64_t> scalar(const std::string& sql);
  sqlite3* handle() const { return db_; }
  std::string message() const;

 private:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

}  // namespace eacgm::history
