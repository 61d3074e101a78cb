// NcclStats: per (communicator, NCCL call) the calls, the bytes they moved and their
// host-side durations, with the rank and communicator size seen; bounded in keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/latency_sketch.h"
#include "core/call_bytes.h"
#include "core/call_event.h"

namespace eacgm::analysis {

struct NcclRow {
  std::uint64_t comm_id = 0;  // 0: the communicator's creation was not seen
  std::string function;       // ncclAllReduce, ncclSend, ...
  std::int32_t rank = -1;     // the last rank seen on it (-1: unknown)
  std::int32_t nranks = -1;
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;
  std::uint64_t bytes = 0;
  std::uint64_t timed = 0;
  double p50_ns = 0.0;
  double p99_ns = 0.0;
  std::uint64_t max_ns = 0;
};

class NcclStats {
 public:
  struct Options {
    std::size_t max_keys = 1024;
  };
  NcclStats() : NcclStats(Options{}) {}
  explicit NcclStats(const Options& options) : options_(options) {}

  // Counts the calls of `nccl` domain probes whose spec has a derived `bytes`
  // (collectives, send and receive); others are ignored.
  void add(const CallEvent& event);

  // Most bytes first, then most calls, then by communicator and function.
  std::vector<NcclRow> rows() const;
  std::size_t key_count() const { return entries_.size(); }
  // Calls past max_keys (only counted).
  std::uint64_t folded_calls() const { return folded_calls_; }

 private:
  struct Entry {
    std::uint64_t comm_id = 0;
    std::string function;
    std::int32_t rank = -1;
    std::int32_t nranks = -1;
    std::uint64_t calls = 0;
    std::uint64_t errors = 0;
    std::uint64_t bytes = 0;
    LatencySketch durations;
  };
  const BytesRule* rule_for(const CallEvent& event);

  Options options_;
  std::vector<Entry> entries_;
  std::unordered_map<std::string, std::size_t> by_key_;  // comm id (8 bytes) + function
  std::unordered_map<const ProbeInfo*, BytesRule> by_probe_;
  std::vector<std::shared_ptr<const ProbeInfo>> pinned_;
  BytesRule scratch_;
  std::uint64_t folded_calls_ = 0;
};

}  // namespace eacgm::analysis
