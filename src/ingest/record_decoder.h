// Turns raw ring-buffer records into CallEvents (or discovery hints), checking
// each record's size and type against the ABI first.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/call_event.h"
#include "core/clock.h"
#include "probe/probe_table.h"

namespace eacgm::ingest {

enum class RecordKind { kCall, kExecHint, kLibraryHint, kMalformed, kUnknownProbe };

struct DecodeCounters {
  std::uint64_t calls = 0;
  std::uint64_t hints = 0;
  std::uint64_t malformed = 0;      // wrong size or type
  std::uint64_t unknown_probe = 0;  // probe id with no ProbeInfo
};

// Appends the second string area to the first when the probe's second string capture
// continues its first (ArgSpec::continues) and the first was cut: one value, as if read
// whole (`str_truncated` then says whether the join was cut too).
void join_continued_string(CallEvent& event);

class RecordDecoder {
 public:
  explicit RecordDecoder(const probe::ProbeTable& table) : cache_(table) {}

  // On kCall fills `event`; on a hint fills only pid/comm/ts of `event`.
  RecordKind decode(const void* data, std::size_t size, CallEvent& event);
  const DecodeCounters& counters() const { return counters_; }

 private:
  probe::ProbeCache cache_;
  WallClock clock_;
  DecodeCounters counters_;
};

}  // namespace eacgm::ingest
