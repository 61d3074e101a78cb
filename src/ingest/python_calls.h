// Python calls from CPython's USDT probes: function__entry and function__return arrive as
// separate entry-only records; this pairs them per thread into one CallEvent per call,
// reported at its return (a return without a seen entry is a call without duration).
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
  std::uint64_t calls = 0;             // calls passed on (one per function__return)
  std::uint64_t filtered = 0;          // calls whose file failed the file filter
  std::uint64_t unpaired = 0;          // calls passed on without duration: no entry seen
  std::uint64_t unreturned = 0;        // entries skipped over by a later return (lost record)
  std::uint64_t depth_overflows = 0;   // entries past the per-thread depth cap (not timed)
};

class PythonCalls {
 public:
  using Emit = std::function<void(const CallEvent&)>;
  // file_filter: a glob (fnmatch) on the source file path; "" passes every file.
  explicit PythonCalls(std::string file_filter);

  // Whether `e` is a record of the python catalog's USDT probes. Such records are
  // consumed here (never passed on); a return that completes a call emits it.
  bool consume(const CallEvent& e, const Emit& emit);
  PythonCallCounters counters() const;

  // Deeper stacks than this per thread are counted, not timed (recursion limits are
  // ~1000 by default; a raised limit must not grow memory without bound).
  static constexpr std::size_t kMaxDepth = 4096;
  static constexpr std::size_t kMaxThreads = 4096;
  static constexpr std::size_t kMaxFunctions = 65536;

 private:
  enum class Role : std::uint8_t { kOther, kEntry, kReturn };
  struct Frame {
    std::uint64_t ts_ns = 0;
    std::string function;
    std::string file;
    std::int32_t line = 0;
  };
  struct Thread {
    std::vector<Frame> stack;
    std::size_t overflow = 0;  // entries past kMaxDepth still open
  };

  Role role_of(const ProbeInfo* probe);
  bool passes_filter(const std::string& file);
  const std::shared_ptr<const ProbeInfo>& function_info(const Frame& f);
  void complete(const CallEvent& ret, const Frame* entry, const Emit& emit);

  std::string filter_;
  const ProbeInfo* last_probe_ = nullptr;
  Role last_role_ = Role::kOther;
  std::unordered_map<std::uint32_t, Thread> threads_;
  std::unordered_map<std::string, bool> filter_cache_;
  std::unordered_map<std::string, std::shared_ptr<const ProbeInfo>> functions_;
  std::shared_ptr<const ProbeInfo> overflow_info_;  // past kMaxFunctions distinct functions
  CallEvent out_;
  std::atomic<std::uint64_t> calls_{0}, filtered_{0}, unpaired_{0}, unreturned_{0},
      depth_overflows_{0};
};

// The spec every Python call is reported under: domain `python`, args {file, line}
// (line: where the function returned, raised or yielded).
const ProbeSpec& python_call_spec();

}  // namespace eacgm::ingest
