// CallSummary: per (domain, function) call counts, errors and a latency sketch of the
// traced calls, bounded in distinct functions; rows() hands out plain values for export.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/latency_sketch.h"
#include "core/call_bytes.h"
#include "core/call_counts.h"
#include "core/call_event.h"
#include "core/result.h"

namespace eacgm::analysis {

// One function's totals. Durations are in ns; they cover only calls with an exit
// (`timed`), while `calls` also counts entry-only ones. Nested calls (made inside an
// `outer` probe's call, such as the driver's cuLaunchKernel under cudaLaunchKernel) are
// counted only in `nested`: `calls`, `errors` and durations leave them out, so summing
// calls over domains counts each launch once.
// How often one result code came back from a function's failed calls.
struct ErrorCodeCount {
  std::int64_t code = 0;  // int32 result code; 0 for a null pointer returned
  std::uint64_t count = 0;
};

struct CallSummaryRow {
  std::string domain;
  std::string function;
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;
  std::uint64_t entry_only = 0;  // calls seen without an exit: counted, not timed
  std::uint64_t nested = 0;      // calls made inside an outer call: not in `calls`
  std::uint64_t timed = 0;
  std::uint64_t total_ns = 0;
  double mean_ns = 0.0;
  double p50_ns = 0.0;
  double p99_ns = 0.0;
  std::uint64_t max_ns = 0;
  // Bytes the calls asked to move (copies, memsets, NCCL calls: the spec's derived
  // `bytes`; failed calls included, nested ones left out); `has_bytes` is false for
  // functions whose spec has no `bytes`.
  std::uint64_t bytes = 0;
  bool has_bytes = false;
  // `errors` by result code, most frequent first (then by code). At most
  // CallSummary::kMaxErrorCodes codes per function; errors of further codes are in
  // `errors` only, so the counts here may sum to less.
  std::vector<ErrorCodeCount> error_codes;
  // Always-on: of `calls`, those counted at entry in the kernel (no record each); their
  // durations and errors come from the sampled calls (`timed`), and `total_ns` is then
  // the sampled mean times the calls.
  std::uint64_t counted = 0;
  std::uint64_t sampled_errors = 0;  // errors seen among sampled calls (in `errors`)
  // Of `counted`, calls scaled from part of the time (the budget's duty cycle): `calls`
  // is then an estimate, within about `calls_error` (one standard deviation).
  std::uint64_t estimated = 0;
  double calls_error = 0;
  // The full distribution, valid while the summary it came from lives.
  const LatencySketch* sketch = nullptr;
  // Always-on: only some of the calls were timed, so `errors` and the durations are
  // those of the sampled calls.
  bool sampled() const { return counted > 0 && timed < calls; }
};

class CallSummary {
 public:
  struct Options {
    LatencySketch::Options sketch;
    // Distinct (domain, function) keys kept; events of further keys are only counted.
    std::size_t max_keys = 4096;
  };

  CallSummary() : CallSummary(Options{}, LatencySketch{}) {}
  // Rejects invalid sketch options and a key cap of 0.
  static Result<CallSummary> create(const Options& options);

  static constexpr std::size_t kMaxErrorCodes = 16;

  // Hot path: one pointer-keyed lookup for probes seen before, then counter updates.
  void add(const CallEvent& event);
  // Always-on: calls counted in the kernel, and the sampled calls' duration buckets.
  void add(const CallCount& count);
  void add(const CallTimings& timings);

  // Rows sorted by total duration (desc), then calls (desc), then domain and function.
  // `quantiles`: fill p50_ns/p99_ns (a walk of each sketch; exporters that only need
  // counts and the sketches themselves skip it).
  std::vector<CallSummaryRow> rows(bool quantiles = true) const;

  // A copy for readers (a published view): the same rows and sketches, each sketch's
  // window cut to the buckets it holds, without the lookup the hot path keeps by probe
  // (adding to the copy still works: its probes are found by name once).
  CallSummary frozen() const;
  // Bytes this summary holds on the heap, near enough to bound a table by (its rows,
  // names, sketches, error codes and lookups; an allocator's overhead left out).
  std::size_t heap_bytes() const;

  std::size_t key_count() const { return entries_.size(); }
  std::size_t max_keys() const { return max_keys_; }
  // Events dropped because max_keys distinct functions were already tracked.
  std::uint64_t overflow_events() const { return overflow_events_; }
  std::uint64_t total_events() const { return total_events_; }
  // The full distribution of one function, or nullptr if it is not tracked.
  const LatencySketch* sketch(std::string_view domain, std::string_view function) const;

 private:
  // A row's figures but its latency sketch: frozen() copies them whole and the sketch
  // compacted, so a figure added here reaches every published copy.
  struct Figures {
    std::string domain;
    std::string function;
    std::uint64_t calls = 0;
    std::uint64_t errors = 0;
    std::uint64_t entry_only = 0;
    std::uint64_t nested = 0;
    std::uint64_t bytes = 0;
    bool has_bytes = false;
    std::uint64_t counted = 0;
    bool tallied = false;  // calls counted at entry by a per-call probe (ProbeInfo::tallied)
    std::uint64_t sampled_errors = 0;
    std::uint64_t estimated = 0;
    double variance = 0;                      // of the estimated calls
    std::vector<ErrorCodeCount> error_codes;  // unsorted; errors are rare, so a linear scan
  };
  struct Entry : Figures {
    LatencySketch durations;
  };
  static constexpr std::uint32_t kNoEntry = 0xffffffffu;

  CallSummary(const Options& options, LatencySketch prototype);
  // A probe's key and the rule for its bytes.
  struct ProbeSlot {
    std::uint32_t slot = kNoEntry;
    BytesRule bytes;
  };
  ProbeSlot slot_for(const std::shared_ptr<const ProbeInfo>& probe);
  std::uint32_t slot_by_name(std::string_view domain, std::string_view function);

  std::size_t max_keys_;
  LatencySketch prototype_;  // empty sketch carrying the configured accuracy and cap
  std::vector<Entry> entries_;
  std::unordered_map<std::string, std::uint32_t> by_name_;  // "domain\0function"
  // Probes are immutable and shared by every event they produce, so their address
  // identifies the key; holding the shared_ptr keeps the address from being reused.
  std::unordered_map<const ProbeInfo*, ProbeSlot> by_probe_;
  std::vector<std::shared_ptr<const ProbeInfo>> pinned_;
  const ProbeInfo* last_probe_ = nullptr;
  ProbeSlot last_slot_;
  std::uint64_t overflow_events_ = 0;
  std::uint64_t total_events_ = 0;
};

}  // namespace eacgm::analysis
