// FunctionSums: a function's counts and latency over some rows, added row by row: what
// the PostgreSQL store adds up in C++ (rollups, function queries, a batch's repeated
// keys), where SQL cannot merge the sketches.
#pragma once

#include <compare>
#include <cstdint>

#include "history/history_batch.h"
#include "history/sketch_codec.h"

namespace eacgm::history {

// A function's row key with its names as ids into `names` (what PostgreSQL's rows hold).
struct FunctionKey {
  std::int32_t pid = 0;
  std::int64_t start_ns = 0;
  std::int32_t domain = 0;
  std::int32_t function = 0;
  auto operator<=>(const FunctionKey&) const = default;
};

struct FunctionSums {
  std::uint64_t calls = 0, errors = 0, bytes = 0, timed = 0, estimated = 0;
  double calls_variance = 0;
  StoredSketch latency;

  void add(const FunctionSums& o) {
    calls += o.calls;
    errors += o.errors;
    bytes += o.bytes;
    timed += o.timed;
    estimated += o.estimated;
    calls_variance += o.calls_variance;
    latency.merge(o.latency);
  }
  static FunctionSums of(const FunctionRecord& f) {
    return {f.calls, f.errors, f.bytes, f.timed, f.estimated, f.calls_variance, f.latency};
  }
};

}  // namespace eacgm::history
