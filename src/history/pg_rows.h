// PostgreSQL's ends of the row mappings (history/schema_rows.h): a COPY row and a
// statement's parameters, each value in its column's type (schema.h; COPY's binary format
// takes no other width), names as the ids the store resolved before; the names a batch
// needs; a function's sums read back.
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <unordered_map>

#include "history/function_sums.h"
#include "history/pg_conn.h"
#include "history/pg_copy.h"
#include "history/schema.h"
#include "history/schema_rows.h"

namespace eacgm::history {

using NameIds = std::unordered_map<std::string, std::int32_t>;

// One row of a COPY into `t`.
class PgCopyOut {
 public:
  PgCopyOut(PgCopy& copy, const Table& t, const NameIds& ids) : copy_(copy), columns_(t.columns), ids_(ids) {
    copy_.row(static_cast<std::int16_t>(columns_.size()));
  }
  void integer(std::int64_t v) {
    switch (next()) {
      case ColumnType::kInt16:
        copy_.i16(static_cast<std::int16_t>(v));
        break;
      case ColumnType::kInt32:
        copy_.i32(static_cast<std::int32_t>(v));
        break;
      default:
        copy_.i64(v);
    }
  }
  void real(double v) {
    next();
    copy_.f64(v);
  }
  void text(std::string_view v) {
    next();
    copy_.text(v);
  }
  void sketch(const StoredSketch& s) {
    if (s.empty()) {
      null();
    } else {
      next();
      copy_.text(encode(s));
    }
  }
  void name(const std::string& n) { integer(ids_.at(n)); }
  void blob(std::string_view bytes) {
    next();
    copy_.text(bytes);
  }
  void null() {
    next();
    copy_.null();
  }

 private:
  ColumnType next() { return columns_[at_++].type; }
  PgCopy& copy_;
  std::span<const Column> columns_;
  const NameIds& ids_;
  std::size_t at_ = 0;
};

// A row of `t` as a statement's parameters ($1 the first column). Smaller integers go as
// int4: PostgreSQL casts them to the column on assignment.
class PgParamsOut {
 public:
  PgParamsOut(PgParams& params, const Table& t, const NameIds& ids)
      : params_(params), columns_(t.columns), ids_(ids) {}
  void integer(std::int64_t v) {
    if (columns_[at_++].type == ColumnType::kInt64) {
      params_.i64(v);
    } else {
      params_.i32(static_cast<std::int32_t>(v));
    }
  }
  void real(double v) {
    ++at_;
    params_.f64(v);
  }
  void text(std::string_view v) {
    ++at_;
    params_.text(v);
  }
  void sketch(const StoredSketch& s) {
    ++at_;
    if (s.empty()) {
      params_.null();
    } else {
      params_.bytes(encode(s));
    }
  }
  void name(const std::string& n) { integer(ids_.at(n)); }
  void blob(std::string_view bytes) {
    ++at_;
    params_.bytes(bytes);
  }
  void null() {
    ++at_;
    params_.null();
  }

 private:
  PgParams& params_;
  std::span<const Column> columns_;
  const NameIds& ids_;
  std::size_t at_ = 0;
};

// The names a batch's rows hold, found by writing them nowhere.
struct NameCollector {
  std::set<std::string> names;
  void integer(std::int64_t) {}
  void real(double) {}
  void text(std::string_view) {}
  void sketch(const StoredSketch&) {}
  void null() {}
  void name(const std::string& n) { names.insert(n); }
};

// A function's sums (schema_rows.h's function_sums) from column `col` of row `row` on.
inline FunctionSums read_sums(const PgResult& r, int row, int col) {
  FunctionSums s;
  const PgRow in(r, row);
  RowReader<PgRow> reader{in, col};
  function_sums(s, reader);
  return s;
}

}  // namespace eacgm::history
