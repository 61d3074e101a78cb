// PgCopy: rows in COPY's binary format (a header, then per row its field count and
// each field's length and big-endian bytes), the fastest way rows reach PostgreSQL.
// Each field must be written in its column's exact type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace eacgm::history {

class PgCopy {
 public:
  PgCopy();
  PgCopy& row(std::int16_t fields);
  PgCopy& i16(std::int16_t v);
  PgCopy& i32(std::int32_t v);
  PgCopy& i64(std::int64_t v);
  PgCopy& f64(double v);
  PgCopy& text(std::string_view v);  // text and bytea alike
  PgCopy& null();
  PgCopy& opt_i64(const std::optional<std::int64_t>& v) { return v ? i64(*v) : null(); }
  PgCopy& opt_f64(const std::optional<double>& v) { return v ? f64(*v) : null(); }
  std::size_t rows() const { return rows_; }
  // The buffer with its trailer; the object is spent.
  std::string finish();

 private:
  std::string buf_;
  std::size_t rows_ = 0;
};

}  // namespace eacgm::history
