// ProcessCalls: the call summary of each traced process (calls, errors, bytes and the
// latency sketch per (domain, function)), for what keeps history per process. Bounded in
// processes; a process found gone is kept for kKeepExited (so that a reader polling
// snapshots sees its last calls) and then let go, or earlier, once gone for
// kMinKeepExited, when a new process needs its place at the cap (churn). Published
// copy-on-write: a view shares the summaries of processes that made no call since the
// last one (finding a process gone copies nothing), and the published copies are frozen
// (CallSummary::frozen: sketches cut to what they hold). Once an exited process's last
// calls are published, the table keeps only that copy, the one every view shares.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "analysis/call_summary.h"

namespace eacgm::analysis {

struct ProcessCallsView {
  struct Process {
    std::shared_ptr<const CallSummary> calls;
    bool exited = false;
  };
  std::map<std::uint32_t, Process> processes;
  std::uint64_t overflow_events = 0;  // calls of processes past the cap: counted nowhere here
  // Heap bytes of the summaries the table held when this view was made: the live ones
  // and the published ones (each counted once, however many views share it).
  std::size_t bytes = 0;
};

class ProcessCalls {
 public:
  struct Options {
    CallSummary::Options summary{};
    std::size_t max_processes = 1024;
  };
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kKeepExited{120};
  // Longer than the history's default interval (10 s) and the view's refresh (5 s).
  static constexpr std::chrono::seconds kMinKeepExited{20};

  ProcessCalls() : ProcessCalls(Options{}) {}
  explicit ProcessCalls(Options options);

  void add(const CallEvent& event);
  void add(const CallCount& count);
  void add(const CallTimings& timings);

  // Checks up to `max_checks` live processes for their exit (round robin) and lets go of
  // those gone for longer than kKeepExited.
  void sweep(Clock::time_point now, const std::function<bool(std::uint32_t)>& is_alive,
             std::size_t max_checks);

  // The summaries as they are now; only those that changed since the last view are copied.
  std::shared_ptr<const ProcessCallsView> view();
  std::size_t process_count() const { return processes_.size(); }
  // Exited processes let go before kKeepExited to make room for new ones.
  std::uint64_t evicted() const { return evicted_; }
  // Processes whose summary is open to calls: all but those gone whose last calls the
  // last view published (the table keeps only that copy of theirs).
  std::size_t live_count() const;

 private:
  struct Slot {
    // What calls add to; empty once the process is gone and its last calls published
    // (a late call makes it again from `published`).
    std::optional<CallSummary> calls;
    std::shared_ptr<const CallSummary> published;
    bool dirty = true;
    std::optional<Clock::time_point> gone_since;
  };
  CallSummary new_summary() const;
  Slot* slot_for(std::uint32_t pid);
  bool evict_exited();
  // Whether `exit` still names its process's exit (not let go, not back since).
  bool current(const std::pair<Clock::time_point, std::uint32_t>& exit) const;
  void drop_stale_exits();

  Options options_;
  std::map<std::uint32_t, Slot> processes_;
  // The exits found, oldest first (sweeps run in time order): eviction takes the front,
  // so a new process at the cap costs no walk over the table (at hundreds of exits a
  // second, each call of a process refused a place walked all of it).
  std::deque<std::pair<Clock::time_point, std::uint32_t>> exits_;
  std::uint32_t last_pid_ = 0;
  Slot* last_slot_ = nullptr;
  std::uint32_t sweep_cursor_ = 0;
  std::uint64_t overflow_events_ = 0;
  std::uint64_t evicted_ = 0;
  Clock::time_point last_seen_now_{};  // the last sweep's time: eviction ages against it
};

}  // namespace eacgm::analysis
