// `functions` rows in COPY and out of results.
#include "history/pg_function_rows.h"

namespace eacgm::history {

void copy_function(PgCopy& copy, int tier, std::int32_t node, std::int64_t t_ns, std::int64_t span_ns,
                   const FunctionKey& key, const FunctionSums& s) {
  copy.row(15)
      .i16(static_cast<std::int16_t>(tier))
      .i32(node)
      .i64(t_ns)
      .i64(span_ns)
      .i32(key.pid)
      .i64(key.start_ns)
      .i32(key.domain)
      .i32(key.function)
      .i64(static_cast<std::int64_t>(s.calls))
      .i64(static_cast<std::int64_t>(s.errors))
      .i64(static_cast<std::int64_t>(s.bytes))
      .i64(static_cast<std::int64_t>(s.timed))
      .i64(static_cast<std::int64_t>(s.estimated))
      .f64(s.calls_variance);
  if (s.latency.empty()) {
    copy.null();
  } else {
    copy.text(encode(s.latency));
  }
}

FunctionSums read_sums(const PgResult& r, int row, int col) {
  FunctionSums s;
  s.calls = static_cast<std::uint64_t>(r.i64(row, col));
  s.errors = static_cast<std::uint64_t>(r.i64(row, col + 1));
  s.bytes = static_cast<std::uint64_t>(r.i64(row, col + 2));
  s.timed = static_cast<std::uint64_t>(r.i64(row, col + 3));
  s.estimated = static_cast<std::uint64_t>(r.i64(row, col + 4));
  s.calls_variance = r.f64(row, col + 5);
  if (!r.is_null(row, col + 6)) {
    if (auto sk = decode(r.bytes(row, col + 6))) s.latency = std::move(sk).value();
  }
  return s;
}

}  // namespace eacgm::history
