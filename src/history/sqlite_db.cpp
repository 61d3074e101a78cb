// SQLite's C API behind Status and RAII.
#include "history/sqlite_db.h"

#include <sqlite3.h>

#include <utility>

namespace eacgm::history {

SqliteStmt& SqliteStmt::operator=(SqliteStmt&& o) noexcept {
  if (this != &o) {
    sqlite3_finalize(stmt_);
    db_ = o.db_;
    stmt_ = std::exchange(o.stmt_, nullptr);
  }
  return *this;
}

SqliteStmt::~SqliteStmt() { sqlite3_finalize(stmt_); }

void SqliteStmt::bind(int i, std::int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
void SqliteStmt::bind(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
void SqliteStmt::bind(int i, std::string_view v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}
void SqliteStmt::bind_blob(int i, std::string_view bytes) {
  sqlite3_bind_blob(stmt_, i, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
}
void SqliteStmt::bind_null(int i) { sqlite3_bind_null(stmt_, i); }

Result<bool> SqliteStmt::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  std::string why = sqlite3_errmsg(db_);
  sqlite3_reset(stmt_);
  return make_error(why);
}

Status SqliteStmt::run() {
  for (;;) {
    auto more = step();
    if (!more) return make_error(more.error());
    if (!*more) break;
  }
  reset();
  return {};
}

void SqliteStmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::int64_t SqliteStmt::i64(int col) const { return sqlite3_column_int64(stmt_, col); }
double SqliteStmt::f64(int col) const { return sqlite3_column_double(stmt_, col); }
std::string SqliteStmt::text(int col) const {
  const auto* p = sqlite3_column_text(stmt_, col);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)))
           : std::string();
}
std::span<const std::uint8_t> SqliteStmt::blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  const int n = sqlite3_column_bytes(stmt_, col);
  return p ? std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(p), static_cast<std::size_t>(n))
           : std::span<const std::uint8_t>();
}
bool SqliteStmt::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

Result<SqliteDb> SqliteDb::open(const std::string& path, bool create, int busy_ms) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX,
      nullptr);
  if (rc != SQLITE_OK) {
    std::string why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return make_error(why);
  }
  sqlite3_busy_timeout(db, busy_ms);
  sqlite3_extended_result_codes(db, 1);
  return SqliteDb(db);
}

SqliteDb& SqliteDb::operator=(SqliteDb&& o) noexcept {
  if (this != &o) {
    sqlite3_close(db_);
    db_ = std::exchange(o.db_, nullptr);
  }
  return *this;
}

SqliteDb::~SqliteDb() { sqlite3_close(db_); }

std::string SqliteDb::message() const { return db_ ? sqlite3_errmsg(db_) : "no database"; }

Status SqliteDb::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string why = err ? err : message();
    sqlite3_free(err);
    return make_error(why);
  }
  return {};
}

Result<SqliteStmt> SqliteDb::prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK) {
    return make_error(message());
  }
  return SqliteStmt(db_, stmt);
}

Result<std::int64_t> SqliteDb::scalar(const std::string& sql) {
  auto stmt = prepare(sql);
  if (!stmt) return make_error(stmt.error());
  auto row = stmt->step();
  if (!row) return make_error(row.error());
  if (!*row) return make_error("no row");
  return stmt->i64(0);
}

}  // namespace eacgm::history
