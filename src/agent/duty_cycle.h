// DutyCycle: when counting every call would cost a process more than its budget, the
// cycled probes (counted and not pinned) are attached for only a fraction of each
// period (a window at a random place in it) and detached for the rest, so they cost
// that fraction of their traps. A thread of its own switches them; it logs when they
// counted, so that the counts of an interval can be scaled by the time they covered
// (agent/scaled_counts.h).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "core/duty_window.h"
#include "core/result.h"

namespace eacgm::agent {

// What the budget controller needs of a duty cycle (tests give it their own).
class DutyControl {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~DutyControl() = default;
  // Attached for `fraction` of each period (clamped to [min_fraction(), 1]; 1: always).
  virtual void set_fraction(double fraction) = 0;
  virtual double fraction() const = 0;
  virtual double min_fraction() const = 0;
  // Nanoseconds of (from, to] during which the cycled probes were attached (counting).
  virtual double attached_ns(Clock::time_point from, Clock::time_point to) const = 0;
  // Nanoseconds of (from, to] during which they were being attached or detached.
  virtual double switching_ns(Clock::time_point from, Clock::time_point to) const {
    (void)from;
    (void)to;
    return 0;
  }
  // The share of the time the switches take (their mean times over the periods a window
  // spans): the probes cost the process then as if counting.
  virtual double switching_share() const { return 0; }
  // An interval of the counts began at `now`: the next window falls inside it.
  virtual void on_tick(Clock::time_point now) { (void)now; }
  // Mean milliseconds an attach and a detach of the cycled probes took (0 before any).
  struct SwitchTimes {
    double attach_ms = 0, detach_ms = 0;
  };
  virtual SwitchTimes switch_times() const { return {}; }
};

class DutyCycle final : public DutyControl {
 public:
  // Attaches (true) or detaches (false) the cycled probes; runs on the cycle's thread.
  // It calls `counting(at, state)` at each move of the window: switching as the switch
  // begins (counting stops before a detach), then open after an attach or off after a
  // detach; each is logged at once: a detach takes the kernel tens to hundreds of
  // milliseconds, and an interval that ends meanwhile must not take the probes for
  // counting.
  using Counting = std::function<void(Clock::time_point at, DutyWindow state)>;
  using Switch = std::function<Status(bool attached, const Counting& counting)>;
  // One switch done: when it began, when counting started or stopped (the begin if the
  // switch never said), when it returned, and whether it succeeded.
  struct SwitchDone {
    bool attached = false;
    Clock::time_point began, counting, ended;
    bool ok = false;
  };
  struct Options {
    std::chrono::milliseconds period{1000};
    double min_fraction = 0.05;
    // A window shorter than this (period × fraction) falls in every K-th period only,
    // K times as long: a window must hold many steps of a training loop (tens of
    // milliseconds each), or the steps it cuts at its edges make the counts and the
    // pace noisy (on the H100, 250 ms windows of a 31 ms step: ±7% per window).
    std::chrono::milliseconds min_window{500};
    // Holds the fraction at this value whatever set_fraction asks ([trace]
    // duty_fraction): for measuring what the cycled probes cost, attached against
    // detached, in one process.
    std::optional<double> fixed_fraction;
    // Called on the cycle's thread after each switch (without the lock).
    std::function<void(const SwitchDone&)> on_switch;
  };
  // An on_switch that writes a line per switch to `file` ([trace] duty_switch_log:
  // "switch attached=0|1 began_ns= counting_ns= ended_ns= ok=", CLOCK_MONOTONIC
  // nanoseconds, core/duty_switch_log.h).
  static std::function<void(const SwitchDone&)> switch_logger(std::shared_ptr<std::FILE> file);

  // Starts with the probes attached (as the attacher leaves them) at fraction 1.
  DutyCycle(Switch attach, Options options);
  ~DutyCycle() override;
  DutyCycle(const DutyCycle&) = delete;
  DutyCycle& operator=(const DutyCycle&) = delete;

  void set_fraction(double fraction) override;
  double fraction() const override;
  double min_fraction() const override { return options_.min_fraction; }
  double attached_ns(Clock::time_point from, Clock::time_point to) const override;
  double switching_ns(Clock::time_point from, Clock::time_point to) const override;
  double switching_share() const override;
  // Each tick starts a period: one window at a random place in it, so that every
  // interval of counts holds one.
  void on_tick(Clock::time_point now) override;
  // Ends the thread, leaving the probes attached; before the probes' owner goes.
  void stop();
  // The window moved at `at` other than by a switch (the trace closing it as it ends).
  void mark(Clock::time_point at, DutyWindow state);

  std::uint64_t switches() const;  // attaches and detaches done
  std::uint64_t failures() const;  // of them, refused (the probes stay detached)
  SwitchTimes switch_times() const override;

 private:
  struct Change {
    Clock::time_point at;  // when the window moved
    DutyWindow state = DutyWindow::kOff;
  };
  void loop();
  // Runs the switch without the lock; the moment counting changed is logged when the
  // switch reports it.
  void switch_to(std::unique_lock<std::mutex>& lock, bool attached);
  // Logs that the window moved to `state` at `at`; under the lock.
  void log_counting(Clock::time_point at, DutyWindow state);
  // Nanoseconds of (from, to] in `state`; under the lock.
  double ns_in(DutyWindow state, Clock::time_point from, Clock::time_point to) const;
  void prune(Clock::time_point now);
  // The periods one window spans at `fraction` (1, or K for a short window).
  int periods_per_window(double fraction) const;
  // Time the switches took, attaches [1] and detaches [0], and how many.
  double switch_ns_[2] = {0, 0};
  std::uint64_t switch_n_[2] = {0, 0};

  Switch attach_;
  Options options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  double fraction_ = 1.0;
  bool attached_ = true;
  bool stopping_ = false;
  std::optional<Clock::time_point> period_start_;  // a tick not yet begun as a period
  bool ticked_ = false;                            // a tick came: the controller scales from here
  int periods_to_skip_ = 0;                        // periods left without a window
  std::deque<Change> log_;  // state changes, oldest first; the first is the state before
  std::uint64_t switches_ = 0;
  std::uint64_t failures_ = 0;
  std::minstd_rand random_{std::random_device{}()};  // where each period's window falls
  std::thread thread_;
};

}  // namespace eacgm::agent
