// AnalysisSnapshot: what the live analysis published at one tick, immutable once made,
// for readers on any thread (`eacgm run`'s tables, the server's routes, the history
// writer). Besides its time, sequence and the agent's counters it holds the parts each
// registered analysis published; a reader asks for the part it reads by type
// (`snap.get<MemorySummary>()`) and includes only that part's header.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "analysis/snapshot_parts.h"
#include "core/counter_registry.h"

namespace eacgm::analysis {

struct AnalysisSnapshot {
  std::chrono::system_clock::time_point time;
  std::uint64_t sequence = 0;  // 1 for the first snapshot, then +1 each
  bool final = false;          // made after the trace ended
  CounterValues counters;      // the agent's counters when it was made
  SnapshotParts parts;         // what the analyses published (analysis/registry.cpp)

  // The part of type T; an empty T when no analysis published one.
  template <typename T>
  const T& get() const {
    return parts.get<T>();
  }
  // nullptr when no analysis published a T (yet: the last GPU pass before the first).
  template <typename T>
  const T* find() const {
    return parts.find<T>();
  }
  template <typename T>
  std::shared_ptr<const T> share() const {
    return parts.share<T>();
  }
  // For a snapshot made by hand (tests, replays): the part to fill in.
  template <typename T>
  T& edit() {
    return parts.edit<T>();
  }
};

}  // namespace eacgm::analysis
