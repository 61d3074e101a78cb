// The `functions` table's rows between PostgreSQL and FunctionSums: the columns a COPY
// writes, and the sums read back from a result.
#pragma once

#include <cstdint>

#include "history/function_sums.h"
#include "history/pg_conn.h"
#include "history/pg_copy.h"

namespace eacgm::history {

// COPY's column list, in the order copy_function writes them.
inline constexpr const char* kCopyFunctions =
    "COPY functions(tier,node,t_ns,span_ns,pid,start_ns,domain,function,calls,errors,bytes,timed,estimated,"
    "calls_variance,latency) FROM STDIN (FORMAT binary)";
// The sums' columns, as a SELECT or RETURNING list names them (read_sums reads them).
inline constexpr const char* kSumColumns = "calls, errors, bytes, timed, estimated, calls_variance, latency";

struct FunctionKey {
  std::int32_t pid = 0;
  std::int64_t start_ns = 0;
  std::int32_t domain = 0;
  std::int32_t function = 0;
  auto operator<=>(const FunctionKey&) const = default;
};

void copy_function(PgCopy& copy, int tier, std::int32_t node, std::int64_t t_ns, std::int64_t span_ns,
                   const FunctionKey& key, const FunctionSums& sums);
// The sums in kSumColumns' order from column `col` on. A damaged sketch loses the row's
// latency, never its counts.
FunctionSums read_sums(const PgResult& r, int row, int col);

}  // namespace eacgm::history
