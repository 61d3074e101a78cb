// BudgetController: keeps each traced process's probe cost within a budget. It sits in
// front of the consumers on the output thread, counts the traps each process takes
// (counted entries, timed returns, per-call records), turns them into time with the
// calibrated cost of one hit, compares that with the process's CPU time, and when a
// process is over budget times the hottest counted probes less often (counts stay
// exact; only fewer calls are timed). Each tick it hands the consumers an
// OverheadReport.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>
#include <vector>

#include "agent/duty_cycle.h"
#include "agent/pace.h"
#include "agent/scaled_counts.h"
#include "core/consumer.h"
#include "core/probe_cost.h"
#include "core/proc_stat.h"
#include "core/result.h"

namespace eacgm::agent {

struct BudgetOptions {
  double budget = 0.01;  // estimated probe time / the process's own CPU time
  bool adapt = true;     // change sample rates (false: estimate and report only)
  std::uint8_t base_shift = 4;
  std::uint8_t max_shift = 16;  // 1 call in 65,536 timed at most
  std::size_t window_ticks = 5;
  std::size_t max_processes = 4096;  // processes followed at once; others are not estimated
  // Probes whose sample rate is never changed (the user's `[trace] pinned`, and those
  // timed at every call); null: none.
  std::function<bool(const ProbeInfo&)> is_pinned;
};

class BudgetController final : public ForwardingConsumer {
 public:
  // Sets the sample shift of one counted probe; `pid_cpu` reads a process's CPU time so
  // far and its start (nullopt once it has exited). A process that started after
  // `since_ns` (same clock as ProcessCpu::start_ns) is charged all its CPU time; one
  // found running is estimated from its second interval on.
  using SetShift = std::function<Status(std::uint32_t probe_id, std::uint8_t shift)>;
  using CpuOf = std::function<std::optional<ProcessCpu>(std::uint32_t pid)>;

  BudgetController(std::shared_ptr<Consumer> inner, TrapCosts costs, BudgetOptions options, CpuOf pid_cpu,
                   double since_ns);
  // The probe control, set once the trace has started (calls before it only estimate).
  void set_actuator(SetShift set_shift);
  // The duty cycle of the cycled probes (null: none; counts stay exact and a process
  // over budget on its entries stays over). Set once, before the first tick.
  // `exit_of`: when a process ended, if known (the counts of the interval it ended in
  // are scaled over the part it lived). `log` ([trace] duty_log; null: none) gets a line
  // per process and interval released (log_release).
  using ExitOf = std::function<std::optional<std::chrono::steady_clock::time_point>(std::uint32_t pid)>;
  void set_duty_cycle(std::shared_ptr<DutyControl> duty, ExitOf exit_of = {},
                      std::shared_ptr<std::FILE> log = nullptr);

  void on_calls(std::span<const CallEvent> calls) override;
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) override;
  void on_tick(std::chrono::steady_clock::time_point now, const CounterValues& counters) override;
  void on_end(const CounterValues& counters) override;

  // For tests and the counters: sample shifts changed so far.
  std::uint64_t raises() const { return raises_.load(std::memory_order_relaxed); }
  std::uint64_t lowers() const { return lowers_.load(std::memory_order_relaxed); }
  std::uint8_t shift_of(std::uint32_t probe_id) const;
  // Traps of processes past max_processes: not estimated.
  std::uint64_t untracked() const { return untracked_; }

 private:
  struct Interval {
    double estimated_ns = 0;
    double cpu_ns = 0;
    double wall_ns = 0;
  };
  struct Process {
    std::optional<double> last_cpu_ns;  // the CPU time read at the last tick
    ProcessOverhead row;
    std::deque<Interval> window;
    bool seen = false;  // had traps in this interval
    // Ticks the first detach waited for this process's mix to settle (plan_duty).
    std::uint32_t settle_ticks = 0;
  };
  struct ProbeTally {
    std::uint64_t calls = 0;
    std::uint64_t sampled = 0;
    bool cycled = false;
  };
  // Asks options_.is_pinned once per timed probe (pinned_).
  void decide_pinned(const ProbeInfo& probe);

  // Ends the interval that began at the last tick (or at start): each process's row.
  OverheadReport close_interval(std::chrono::steady_clock::time_point now);
  // Raises or lowers sample shifts from the interval's rows and tallies.
  void adapt(OverheadReport& report);
  // The shifts in use: reduced probes and the sparsest timing.
  void report_shifts(OverheadReport& report) const;
  // The duty cycle's fraction from the interval's rows: the largest that keeps every
  // process within budget, moved in steps (down at once, up at most twice as high).
  void plan_duty(OverheadReport& report, double attached_share);
  // Whether the probes may be cycled for the first time: every live process making cycled
  // calls has made them in the same mix (cycled calls per pinned call) in its last two
  // intervals attached throughout (ScaledCounts::settled), or has waited kMaxSettleTicks
  // for it. A process's warm-up (launches with no synchronisation) would otherwise set
  // the windows' ratio, or fall unseen where no pinned call counts it. Counts a wait
  // for each process not settled.
  bool mixes_settled(const OverheadReport& report);
  // Adds the interval (prev, now] to each process's pace (`ended`: the part of it a
  // process that exited lived).
  void update_paces(const ScaledCounts::Span& interval,
                    const std::map<std::uint32_t, std::optional<ScaledCounts::Span>>& ended);
  // The spans of the processes that ended in (prev, now], where their exit is known.
  std::map<std::uint32_t, std::optional<ScaledCounts::Span>> ended_spans(
      std::optional<std::chrono::steady_clock::time_point> prev, std::chrono::steady_clock::time_point now,
      const std::set<std::uint32_t>& exited) const;
  // What the cycled probes' traps cost the process in this interval's tallies.
  double cycled_ns(std::uint32_t pid) const;
  // Hands on the held counts of the interval (prev, now], scaled; `exited`: the
  // processes that ended in it.
  void release_held(std::optional<std::chrono::steady_clock::time_point> prev,
                    std::chrono::steady_clock::time_point now, const ScaledCounts::Span& span,
                    const std::set<std::uint32_t>& exited);
  // The interval (prev, now]: its length, and how long the cycled probes counted in it
  // (all of it without a duty cycle; nothing before the first tick).
  ScaledCounts::Span interval_span(std::optional<std::chrono::steady_clock::time_point> prev,
                                   std::chrono::steady_clock::time_point now) const;
  // Adds an interval to the trace's totals and sets the report's attached share.
  void add_to_run(OverheadReport& report, const ScaledCounts::Span& span);
  static std::set<std::uint32_t> exited_in(const OverheadReport& report);
  // With a duty log: one line per process and interval released (what was seen, the
  // speedup used, what it became), for checking the scaling against a known loop.
  struct Seen {
    std::uint64_t held = 0, pinned = 0, windowed = 0;  // cycled calls counted; pinned ones, inside windows
    PaceGaps gaps;                                     // the pinned calls' gaps (agent/pace.h)
  };
  void log_release(const ScaledCounts::Span& span, const std::map<std::uint32_t, Seen>& seen,
                   const std::map<std::uint32_t, ScaledCounts::ProcessInterval>& processes,
                   const std::vector<CallCount>& scaled);
  std::shared_ptr<std::FILE> duty_log_;
  ExitOf exit_of_;
  // What timing a counted call adds to counting it.
  double return_ns() const;
  Process* process(std::uint32_t pid);

  TrapCosts costs_;
  BudgetOptions options_;
  CpuOf pid_cpu_;
  double since_ns_;
  std::mutex actuator_mutex_;
  SetShift set_shift_;
  std::unordered_map<std::uint32_t, Process> processes_;
  // This interval's counted calls and timed returns per (pid, probe), for the decision.
  std::map<std::pair<std::uint32_t, std::uint32_t>, ProbeTally> tallies_;
  std::map<std::uint32_t, std::uint8_t> shifts_;    // counted probes whose shift was changed
  std::unordered_map<std::uint32_t, bool> pinned_;  // timed probes by id: pinned or not
  std::optional<std::chrono::steady_clock::time_point> last_tick_;
  double last_wall_ns_ = 0;               // the last interval's length
  std::size_t calm_ticks_ = 0;            // ticks in a row with every process well within
  std::atomic<std::uint64_t> raises_{0};  // read by the counters on any thread
  std::atomic<std::uint64_t> lowers_{0};
  std::uint64_t untracked_ = 0;
  std::shared_ptr<DutyControl> duty_;
  ScaledCounts held_;
  bool holding_ = false;  // cycled probes' counts are held for scaling this interval
  // Each process's pace inside and outside the duty windows (agent/pace.h), from the
  // calls of its counted probes that are not cycled (attached throughout).
  std::map<std::uint32_t, Pace> paces_;
  double run_wall_ns_ = 0;      // the trace's intervals so far
  double run_attached_ns_ = 0;  // of them, cycled probes attached
};

}  // namespace eacgm::agent
