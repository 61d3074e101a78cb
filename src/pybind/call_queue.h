// CallQueue: the consumer that hands a trace's calls to Python. The reader thread packs
// each call into a fixed-size CallRecord (no Python on that thread) and queues it; the
// Python side takes them out in batches, waiting with the GIL released.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/call_event.h"
#include "core/consumer.h"

namespace eacgm::pybind {

// One traced call as Python receives it (a NumPy structured array's row: the layout is
// python/eacgm/_records.py's dtype, byte for byte).
struct CallRecord {
  std::uint64_t ts_ns = 0;   // entry, ns since the Unix epoch
  std::uint64_t dur_ns = 0;  // 0 without an exit
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::uint32_t probe = 0;  // index into CallQueue::probes()
  std::uint8_t nargs = 0;
  std::uint8_t nested = 0;
  std::uint8_t has_exit = 0;
  std::uint8_t fault_mask = 0;
  std::int64_t ret = 0;
  std::array<std::uint64_t, kMaxArgs> args{};
  std::array<char, 16> comm{};
};
static_assert(sizeof(CallRecord) == 120, "python/eacgm/_records.py's dtype assumes 120 bytes");

// What a CallRecord's `probe` names: the probe's function, domain and argument names.
struct ProbeEntry {
  std::string function;
  std::string domain;
  std::string symbol;
  std::string library;
  std::vector<std::string> arg_names;
  std::vector<bool> arg_signed;  // format = signed
};

class CallQueue final : public Consumer {
 public:
  // At most `capacity` calls wait; the rest are counted as dropped.
  explicit CallQueue(std::size_t capacity) : capacity_(capacity) {}

  void on_calls(std::span<const CallEvent> calls) override;
  void on_end(const CounterValues& counters) override;

  // Up to `max` calls, waiting at most `timeout` for the first; fewer (or none) once the
  // trace has ended and the queue is empty. Call without the GIL.
  std::vector<CallRecord> take(std::size_t max, std::chrono::milliseconds timeout);
  // The probes seen so far (a record's `probe` indexes this list; it only grows).
  std::vector<ProbeEntry> probes() const;
  std::uint64_t dropped() const;
  // No more calls will come (the trace ended) and every queued call was taken.
  bool drained() const;
  // The trace ended: wakes every waiting take().
  void finish();

 private:
  std::uint32_t probe_index(const std::shared_ptr<const ProbeInfo>& probe);

  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable ready_;
  // Queued calls are queue_[head_..]: a batch is taken by copying a range and moving
  // head_, and the front is compacted away once it is half the vector.
  std::vector<CallRecord> queue_;
  std::size_t head_ = 0;
  std::unordered_map<const ProbeInfo*, std::uint32_t> index_;
  std::vector<std::shared_ptr<const ProbeInfo>> held_;  // keeps index_'s keys alive
  std::vector<ProbeEntry> probes_;
  std::uint64_t dropped_ = 0;
  bool ended_ = false;
};

}  // namespace eacgm::pybind
