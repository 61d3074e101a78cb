// COPY's binary format.
#include "history/pg_copy.h"

#include <bit>

#include "history/pg_wire.h"

namespace eacgm::history {

using pg_wire::put;

PgCopy::PgCopy() {
  static constexpr char kSignature[] = "PGCOPY\n\377\r\n";  // 11 bytes with its NUL
  buf_.append(kSignature, sizeof(kSignature));
  put<std::int32_t>(buf_, 0);  // flags
  put<std::int32_t>(buf_, 0);  // header extension length
}

PgCopy& PgCopy::row(std::int16_t fields) {
  put(buf_, fields);
  ++rows_;
  return *this;
}

PgCopy& PgCopy::i16(std::int16_t v) {
  put<std::int32_t>(buf_, 2);
  put(buf_, v);
  return *this;
}

PgCopy& PgCopy::i32(std::int32_t v) {
  put<std::int32_t>(buf_, 4);
  put(buf_, v);
  return *this;
}

PgCopy& PgCopy::i64(std::int64_t v) {
  put<std::int32_t>(buf_, 8);
  put(buf_, v);
  return *this;
}

PgCopy& PgCopy::f64(double v) {
  put<std::int32_t>(buf_, 8);
  put(buf_, std::bit_cast<std::int64_t>(v));
  return *this;
}

PgCopy& PgCopy::text(std::string_view v) {
  put(buf_, static_cast<std::int32_t>(v.size()));
  buf_.append(v);
  return *this;
}

PgCopy& PgCopy::null() {
  put<std::int32_t>(buf_, -1);
  return *this;
}

std::string PgCopy::finish() {
  put<std::int16_t>(buf_, -1);
  return std::move(buf_);
}

}  // namespace eacgm::history
