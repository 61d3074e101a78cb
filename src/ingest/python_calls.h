// Python calls from the python catalog's records, paired per thread into one CallEvent
// per call, reported at its return:
// - CPython's USDT probes: function__entry and function__return arrive as separate
//   entry-only records, both naming the function (a return without a seen entry is a
//   call without duration);
// - frame reading (interpreters without USDT): an entry record naming the function and a
//   nameless return record, matched by the stack pointer (a return without a seen entry
//   cannot be named and is only counted).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/call_event.h"

namespace eacgm::ingest {

struct PythonCallCounters {
  std::uint64_t calls = 0;            // calls passed on (one per function__return)
  std::uint64_t filtered = 0;         // calls whose file failed the file filter
  std::uint64_t unpaired = 0;         // calls passed on without duration: no entry seen
  std::uint64_t unreturned = 0;       // entries skipped over by a later return (lost record)
  std::uint64_t depth_overflows = 0;  // entries past the per-thread depth cap (not timed)
  std::uint64_t orphan_returns = 0;   // frame-reading returns without their entry: not reported
};

class PythonCalls {
 public:
  using Emit = std::function<void(const CallEvent&)>;
  // file_filter: a glob (fnmatch) on the source file path; "" passes every file.
  explicit PythonCalls(std::string file_filter);

  // Whether `e` is a record of the python catalog (USDT or frame reading). Such records
  // are consumed here (never passed on); a return that completes a call emits it.
  bool consume(const CallEvent& e, const Emit& emit);
  PythonCallCounters counters() const;
  // Drops the open calls of a process's threads (it exited or exec'd).
  void forget(std::uint32_t pid);
  std::vector<std::uint32_t> pids() const;

  // Deeper stacks than this per thread are counted, not timed (recursion limits are
  // ~1000 by default; a raised limit must not grow memory without bound).
  static constexpr std::size_t kMaxDepth = 4096;
  static constexpr std::size_t kMaxThreads = 4096;
  static constexpr std::size_t kMaxFunctions = 65536;

 private:
  enum class Role : std::uint8_t { kOther, kEntry, kReturn, kFrame };
  struct Frame {
    std::uint64_t ts_ns = 0;
    std::uint64_t sp = 0;  // frame reading: the stack pointer at entry
    std::string function;
    std::string file;
    std::int32_t line = 0;
    std::uint8_t fault_mask = 0;  // as reported: bit 0 the file, bit 1 the line unreadable
    bool file_truncated = false;
  };
  struct Thread {
    std::uint32_t pid = 0;
    std::vector<Frame> stack;
    std::size_t overflow = 0;  // entries past kMaxDepth still open
  };

  Role role_of(const ProbeInfo* probe);
  bool passes_filter(const std::string& file);
  const std::shared_ptr<const ProbeInfo>& function_info(const Frame& f);
  Thread& thread(std::uint32_t tid);
  // An entry past the per-thread depth cap: counted (its return too, later), not kept.
  bool at_depth_cap(Thread& t);
  void consume_usdt(Role role, const CallEvent& e, Thread& t, const Emit& emit);
  void consume_frame(const CallEvent& e, Thread& t, const Emit& emit);
  // Emits the call `what` (function, file, line) ending with `ret`; timed when its entry
  // time is known.
  void complete(const Frame& what, const CallEvent& ret, const std::uint64_t* entry_ts, const Emit& emit);

  std::string filter_;
  const ProbeInfo* last_probe_ = nullptr;
  Role last_role_ = Role::kOther;
  std::unordered_map<std::uint32_t, Thread> threads_;
  std::unordered_map<std::string, bool> filter_cache_;
  std::unordered_map<std::string, std::shared_ptr<const ProbeInfo>> functions_;
  std::shared_ptr<const ProbeInfo> overflow_info_;  // past kMaxFunctions distinct functions
  CallEvent out_;
  std::atomic<std::uint64_t> calls_{0}, filtered_{0}, unpaired_{0}, unreturned_{0}, depth_overflows_{0},
      orphan_returns_{0};
};

// The spec every Python call is reported under: domain `python`, args {file, line}
// (line: through USDT, where the function returned, raised or yielded; through frame
// reading, the first line of its code, co_firstlineno).
const ProbeSpec& python_call_spec();

}  // namespace eacgm::ingest
