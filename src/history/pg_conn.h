// A thin owner of a libpq connection: parameters and results in binary form, COPY in,
// rows streamed one at a time, and errors as Status with libpq's message made one line
// and scrubbed of the password (libpq can echo parts of a connection string).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

struct pg_conn;
struct pg_result;

namespace eacgm::history {

// Query parameters, sent in binary.
class PgParams {
 public:
  PgParams& i64(std::int64_t v);
  PgParams& i32(std::int32_t v);
  PgParams& f64(double v);
  PgParams& text(std::string_view v);
  PgParams& bytes(std::string_view v);
  PgParams& null();
  PgParams& text_array(const std::vector<std::string>& v);
  PgParams& i32_array(const std::vector<std::int32_t>& v);
  PgParams& i64_array(const std::vector<std::int64_t>& v);
  template <class T>
  PgParams& opt(const std::optional<T>& v) {
    if (!v) return null();
    if constexpr (std::is_floating_point_v<T>) {
      return f64(static_cast<double>(*v));
    } else {
      return i64(static_cast<std::int64_t>(*v));
    }
  }
  std::size_t size() const { return values_.size(); }

 private:
  friend class PgConn;
  PgParams& add(unsigned type, std::string value, bool is_null = false);
  std::vector<unsigned> types_;
  std::vector<std::string> values_;
  std::vector<bool> nulls_;
};

// A result in binary form: integers of any width, doubles, text and bytea.
class PgResult {
 public:
  PgResult() = default;
  explicit PgResult(pg_result* r) : r_(r) {}
  int rows() const;
  bool is_null(int row, int col) const;
  std::int64_t i64(int row, int col) const;
  double f64(int row, int col) const;
  std::string text(int row, int col) const;
  std::span<const std::uint8_t> bytes(int row, int col) const;
  template <class T>
  std::optional<T> opt(int row, int col) const {
    if (is_null(row, col)) return std::nullopt;
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(f64(row, col));
    } else {
      return static_cast<T>(i64(row, col));
    }
  }

 private:
  struct Clear {
    void operator()(pg_result* r) const;
  };
  std::unique_ptr<pg_result, Clear> r_;
};

// One row of a result, read by column (the reading end of history/schema_rows.h).
class PgRow {
 public:
  PgRow(const PgResult& r, int row) : r_(r), row_(row) {}
  bool is_null(int col) const { return r_.is_null(row_, col); }
  std::int64_t i64(int col) const { return r_.i64(row_, col); }
  double f64(int col) const { return r_.f64(row_, col); }
  std::string text(int col) const { return r_.text(row_, col); }
  std::span<const std::uint8_t> blob(int col) const { return r_.bytes(row_, col); }

 private:
  const PgResult& r_;
  int row_;
};

class PgConn {
 public:
  // `conninfo`: a postgresql:// URL or key=value string. Connection-level defaults
  // (a 10 s connect timeout, TCP keep-alives) apply unless it sets them.
  static Result<PgConn> connect(const std::string& conninfo);
  PgConn() = default;
  PgConn(PgConn&& o) noexcept;
  PgConn& operator=(PgConn&& o) noexcept;
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;
  ~PgConn();

  // False once the server went away; reset() connects again.
  bool ok() const;
  // Inside a transaction block (BEGIN without its end yet).
  bool in_transaction() const;
  Status reset();

  Status exec(const std::string& sql, const PgParams& params = {});
  // Several statements in one string (no parameters).
  Status script(const std::string& sql);
  Result<PgResult> query(const std::string& sql, const PgParams& params = {});
  // Each row of a result too large to hold at once, as a one-row result.
  Status each_row(const std::string& sql, const PgParams& params,
                  const std::function<void(const PgResult&)>& fn);
  // `copy_sql`: COPY ... FROM STDIN (FORMAT binary); `data`: a PgCopy's buffer.
  Status copy_in(const std::string& copy_sql, const std::string& data);

  // The bytes of statements, parameters and COPY data handed to the server so far (the
  // protocol's framing aside), over every connection this object made.
  std::uint64_t sent_bytes() const { return sent_; }

  // `text` without the connection's password, on one line.
  std::string scrub(std::string text) const;

 private:
  PgConn(pg_conn* c, std::vector<std::string> secrets) : c_(c), secrets_(std::move(secrets)) {}
  Status send(const std::string& sql, const PgParams& params);
  std::string message() const;

  pg_conn* c_ = nullptr;
  std::vector<std::string> secrets_;  // the password, as written and decoded
  std::uint64_t sent_ = 0;
};

// The password of a connection string, in every form it was written (empty when none):
// what an error message must never show.
std::vector<std::string> conninfo_secrets(const std::string& conninfo);

}  // namespace eacgm::history
