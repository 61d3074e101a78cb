// HostWaits: the time each traced process spends blocked on the host, per (process, wait
// kind): calls, total time and the distribution (a latency sketch). Synchronizing calls,
// blocking copies and NCCL set-up come from the traced calls (core/host_wait_kinds.h:
// per call, or always-on counts with the sampled calls' durations); futex and poll-family
// waits from the host-wait tracer. Bounded in processes; an exited process keeps a summary
// of its rows (no sketches), the oldest summaries going first.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/latency_sketch.h"
#include "core/call_counts.h"
#include "core/call_event.h"
#include "core/host_wait.h"

namespace eacgm::analysis {

struct HostWaitRow {
  std::uint32_t pid = 0;
  std::string comm;
  HostWaitKind kind = HostWaitKind::kFutex;
  std::uint64_t calls = 0;  // waits: calls of the kind's functions, or wait syscalls
  // Of them, timed: all of them, except in always-on mode (the sampled calls) and for
  // calls seen without their return.
  std::uint64_t timed = 0;
  // The time they waited: the timed waits' sum; always-on, each delivery's counted calls
  // times the mean of that delivery's sampled ones (estimated). Never decreases.
  std::uint64_t total_ns = 0;
  bool estimated = false;
  double p50_ns = 0;  // of the timed waits
  double p99_ns = 0;
  std::uint64_t max_ns = 0;
  // The process's wall time while traced (from its start or the trace's, whichever is
  // later, to its exit, or now) and total_ns over it; the share can pass 1 when several
  // threads wait at once.
  double wall_ns = 0;
  double share = 0;
  bool exited = false;
};

struct HostWaitSummary {
  std::vector<HostWaitRow> rows;  // by pid, then kind
  // Per kind, the timed waits and all waits of every process followed (exited ones too):
  // cumulative.
  std::array<LatencySketch, kHostWaitKinds> by_kind;
  std::array<std::uint64_t, kHostWaitKinds> calls_by_kind{};
  std::uint64_t untracked = 0;       // waits of processes past max_processes (counted only)
  std::uint64_t exited_dropped = 0;  // exited processes whose summaries were dropped
};

class HostWaits {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    std::size_t max_processes = 4096;  // live processes followed at once
    std::size_t max_exited = 1024;     // exited processes' summaries kept
  };
  // When a process started, on the steady clock; nullopt when unknown (gone).
  using StartOf = std::function<std::optional<Clock::time_point>(std::uint32_t pid)>;

  HostWaits() : HostWaits(Options{}, Clock::now()) {}
  // `trace_start`: when the trace began (a process's wall time starts no earlier).
  HostWaits(Options options, Clock::time_point trace_start);
  // How a process's start is read (default: /proc/<pid>/stat); for tests.
  void set_start_of(StartOf start_of) { start_of_ = std::move(start_of); }

  // Traced calls of the waiting functions (nested calls are their outer call's).
  void add(const CallEvent& event);
  // Always-on: one delivery of counted calls and the sampled calls' duration buckets; and,
  // in both modes, a private-driver process's driver waits from its hook (every one timed).
  void add(std::span<const CallCount> counts, std::span<const CallTimings> timings);
  // The host-wait tracer's futex and input waits, and what it recorded of their
  // processes (name, start and exit: the kernel's times rather than /proc's and the
  // sweep's).
  void add(const HostWaitTimings& waits);
  void add(const HostWaitProcess& info);

  // Checks up to `max_checks` live processes for their exit (round robin); one found gone
  // for `grace` (its last waits, drained each tick, are in by then) becomes a summary
  // ending at its exit (the kernel's time, else when it was first found gone).
  void sweep(Clock::time_point now, const std::function<bool(std::uint32_t)>& is_alive,
             std::size_t max_checks, Clock::duration grace);
  HostWaitSummary summary(Clock::time_point now) const;
  std::size_t process_count() const { return processes_.size(); }

 private:
  // Where a (process, kind)'s waits come from: the probes, or a private-driver process's
  // hook (ProbeInfo::hook), whose driver waits are the same waits a layer down from the
  // runtime's probes: the first to report one is the kind's source, the other left out.
  enum class Source : std::uint8_t { kNone, kProbes, kHook };
  struct KindState {
    Source source = Source::kNone;
    std::uint64_t calls = 0;
    LatencySketch durations;
    double total_ns = 0;
    bool estimated = false;
    std::uint64_t unpriced = 0;  // counted calls waiting for a first sampled duration
  };
  struct Process {
    std::string comm;
    Clock::time_point start;
    std::optional<Clock::time_point> gone_since;  // first found gone
    std::optional<Clock::time_point> exit_at;     // its exit, as the kernel saw it
    std::array<KindState, kHostWaitKinds> kinds;
  };
  struct Exited {
    std::uint32_t pid = 0;
    std::vector<HostWaitRow> rows;
  };
  // The process's state, made on first sight; nullptr past max_processes.
  Process* process(std::uint32_t pid);
  // The wait kind of a probe (cached by address), or nullopt.
  std::optional<HostWaitKind> kind_of(const std::shared_ptr<const ProbeInfo>& probe);
  // Whether a wait of `kind` from `probe` counts for the process (its kind's source; an
  // untracked process's all count, as untracked).
  bool from_source(std::uint32_t pid, HostWaitKind kind, const ProbeInfo& probe);
  static bool from_source(KindState& state, const ProbeInfo& probe);
  void rows_of(std::uint32_t pid, const Process& p, Clock::time_point end, bool exited,
               std::vector<HostWaitRow>& out) const;

  Options options_;
  Clock::time_point trace_start_;
  StartOf start_of_;
  std::map<std::uint32_t, Process> processes_;
  std::deque<Exited> exited_;  // oldest first
  std::array<LatencySketch, kHostWaitKinds> by_kind_;
  std::array<std::uint64_t, kHostWaitKinds> calls_by_kind_{};
  std::unordered_map<const ProbeInfo*, std::optional<HostWaitKind>> kinds_;
  std::vector<std::shared_ptr<const ProbeInfo>> pinned_;  // keeps kinds_' keys from reuse
  std::uint32_t next_check_ = 0;                          // the sweep's round-robin position
  std::uint64_t untracked_ = 0;
  std::uint64_t exited_dropped_ = 0;
};

// A process's start on the steady clock, from /proc/<pid>/stat; nullopt when gone.
std::optional<std::chrono::steady_clock::time_point> process_start_time(std::uint32_t pid);

}  // namespace eacgm::analysis
