// PythonProfile: the Python sampler's stacks aggregated per process and thread: how
// often each function was the running one (self) or anywhere on the stack (total), the
// hottest lines, and the distinct stacks for flame graphs (folded). These are sample
// counts at a fixed rate: shares of on-CPU time, not exact calls or durations. Bounded:
// at most so many processes, rows and stacks, and (for the daemon) only the samples of
// a recent window, kept in slices that leave as they age.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/python_stack.h"

namespace eacgm::analysis {

struct PythonFunctionRow {
  std::string function;
  std::string file;
  int line = 0;             // the function's first line
  std::uint64_t self = 0;   // samples where it was the innermost frame
  std::uint64_t total = 0;  // samples where it was on the stack (once per sample)
  bool native = false;      // a traced call ("[cuda_driver] cuStreamSynchronize"), no file
};

// The innermost Python frame's line, and the traced call it was in ("" when the line
// itself was running).
struct PythonLineRow {
  std::string function;
  std::string file;
  int line = 0;  // the line running
  std::string call;
  std::uint64_t self = 0;
};

struct PythonThreadRow {
  std::uint32_t tid = 0;
  std::uint64_t samples = 0;                 // of this thread, on CPU
  std::uint64_t python_samples = 0;          // of those, with Python frames (the shares' base)
  std::vector<PythonFunctionRow> functions;  // by self, then total, descending
};

struct PythonProcessRow {
  std::uint32_t pid = 0;
  std::string comm;
  std::uint64_t samples = 0;
  std::uint64_t python_samples = 0;
  std::uint64_t truncated = 0;               // stacks deeper than the sampler walks
  std::vector<PythonFunctionRow> functions;  // the threads merged, by self then total
  std::vector<PythonLineRow> lines;          // innermost lines, by self
  std::vector<PythonThreadRow> threads;      // busiest first
};

// Samples the profile could not keep whole because a limit was reached, since it began.
struct PythonOverCap {
  std::uint64_t processes = 0;  // samples of processes past max_processes: not counted at all
  std::uint64_t rows = 0;       // samples with a thread, function or line row not kept
  std::uint64_t stacks = 0;     // samples whose stack was not kept ("[stacks past the cap]")
};

// What the profile keeps.
struct PythonProfileLimits {
  // 0: every sample since the start (`eacgm run`). Else only about the last `window_ns`
  // of samples (by their time): they go into `slices` slices of window / slices each, and
  // a slice leaves once it began a window ago, so the profile holds between
  // window - window / slices and window of samples.
  std::uint64_t window_ns = 0;
  std::size_t slices = 5;
  std::size_t max_processes = 4096;  // processes with samples kept
  std::size_t max_rows = 100000;     // (thread), (thread, function), (thread, line) keys kept
  std::size_t max_stacks = 20000;    // (process, stack) keys kept
};

// One distinct stack of a process: "comm (pid);outer (file:line);...;inner (file:line)".
struct PythonFoldedStack {
  std::uint32_t pid = 0;
  std::string stack;
  std::uint64_t samples = 0;
};

// The limits [python] sets: `windowed` (the daemon) keeps about the last `window_s`
// seconds, else the whole run; both keep at most `max_rows` and `max_stacks` keys.
PythonProfileLimits python_profile_limits(std::uint32_t window_s, std::uint32_t max_rows,
                                          std::uint32_t max_stacks, bool windowed);

// What readers see: rows and folded stacks, made from the profile at one moment.
struct PythonHotSpots {
  std::uint32_t hz = 0;                     // samples per second on each CPU
  std::uint64_t window_ns = 0;              // PythonProfileLimits::window_ns: 0, since the start
  std::uint64_t samples = 0;                // in the profile now (the window's)
  std::uint64_t changes = 0;                // PythonProfile::changes() when made
  std::vector<PythonProcessRow> processes;  // busiest first
  std::vector<PythonFoldedStack> folded;    // sorted by stack
  std::uint64_t stacks_over_cap = 0;        // samples in the profile whose distinct stack was past the cap
  PythonOverCap over_cap;                   // since the start
};

// One frame in a folded line: "function (file:line)", with ';' (the separator) replaced.
std::string folded_frame(const PythonCode& code);
// Folded stacks as text, one "stack count" line each (flamegraph.pl, speedscope, inferno);
// with `pid`, that process's only.
std::string folded_text(const PythonHotSpots& hot, std::optional<std::uint32_t> pid = std::nullopt);

class PythonProfile {
 public:
  explicit PythonProfile(std::uint32_t hz = 0, PythonProfileLimits limits = PythonProfileLimits{});
  void set_hz(std::uint32_t hz) { hz_ = hz; }
  // Replaces the limits, for the samples from now on (set before the first in general).
  void set_limits(const PythonProfileLimits& limits);
  void add(const PythonStack& stack);
  void add(std::span<const PythonStack> stacks) {
    for (const auto& s : stacks) add(s);
  }
  // A window's slices that began a window before `now_ns` (CLOCK_MONOTONIC, as the
  // samples' times) leave.
  void expire(std::uint64_t now_ns);
  // Bumped by every sample taken and every slice that leaves: whether hot_spots() changed.
  std::uint64_t changes() const { return changes_; }
  const PythonOverCap& over_cap() const { return over_cap_; }
  std::size_t rows() const { return rows_; }
  std::size_t stacks() const { return stacks_; }
  std::size_t processes() const { return process_slices_.size(); }
  // The rows and folded stacks now.
  PythonHotSpots hot_spots() const;

 private:
  using CodePtr = std::shared_ptr<const PythonCode>;
  struct Counts {
    CodePtr code;
    std::uint64_t self = 0, total = 0;
  };
  struct LineCounts {
    CodePtr code, call;  // call: null when the line itself ran
    std::uint64_t self = 0;
  };
  struct Thread {
    std::uint64_t samples = 0, python_samples = 0;
    std::unordered_map<const PythonCode*, Counts> functions;
    std::map<std::tuple<const PythonCode*, int, const PythonCode*>, LineCounts> lines;
  };
  struct Process {
    std::string comm;
    std::uint64_t samples = 0, truncated = 0, stacks_over_cap = 0;
    std::map<std::uint32_t, Thread> threads;
    // Outermost first: the order of a folded line.
    std::map<std::vector<const PythonCode*>, std::uint64_t> stacks;
    std::unordered_map<const PythonCode*, CodePtr> keep;  // owners of the codes the stacks name
  };
  struct Slice {
    std::uint64_t start_ns = 0;
    std::size_t rows = 0, stacks = 0;  // keys it holds
    std::map<std::uint32_t, Process> processes;
  };
  Slice& slice_for(std::uint64_t ts_ns);
  // The thread's counts, or nullptr (counted) when the row cap is reached.
  Thread* thread_of(Slice& slice, Process& p, std::uint32_t tid);
  // Takes room for one more row in `slice`; false at the cap (the caller counts the drop).
  bool take_row(Slice& slice);
  void add_frames(Slice& slice, Process& p, Thread& t, const PythonStack& stack);

  std::uint32_t hz_ = 0;
  PythonProfileLimits limits_;
  std::deque<Slice> slices_;  // oldest first
  std::size_t rows_ = 0, stacks_ = 0;
  std::unordered_map<std::uint32_t, std::size_t> process_slices_;  // pid -> slices holding it
  PythonOverCap over_cap_;
  std::uint64_t changes_ = 0;
  std::vector<const PythonCode*> seen_;  // scratch: codes counted in this sample's total
  std::vector<const PythonCode*> path_;  // scratch: this sample's folded key
};

}  // namespace eacgm::analysis
