// Pace: how much faster a process makes its pinned calls (synchronisations, one or more
// per training step) while the duty-cycled probes are detached than while they are
// attached: the probes' real cost to it, measured. Each interval of the duty cycle adds
// the calls and seconds it saw inside the window and outside (or, where the kernel timed
// enough gaps between a thread's calls on both sides, those gaps and their time: the
// same rate without the steps a window's edges cut); the pace pools the last intervals
// as a ratio of sums. Its error is what the intervals' own spread says (a
// window holds a few steps, so one interval's ratio is off by ±10-20% on a real loop),
// or, for the first few intervals, the Poisson error of the pooled counts; the controller
// decides on the cautious end of it, so a noisy pace cannot talk it into counting a
// slowed process whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

#include "core/call_counts.h"

namespace eacgm::agent {

class Pace {
 public:
  // Intervals pooled (the last this many with time both inside and outside a window).
  static constexpr std::size_t kIntervals = 30;

  // The calls of this interval so far, those of them made inside the window, and those
  // made while the probes were being attached or detached (neither inside nor outside).
  void add_calls(std::uint64_t calls, std::uint64_t windowed, std::uint64_t switching = 0);
  // The gaps between a thread's calls inside one window and outside (core/call_counts.h):
  // where an interval has enough of both, its pace is their means (steps' times, which
  // no window's edge cuts) instead of its calls per second.
  void add_gaps(const PaceGaps& gaps);
  std::uint64_t calls() const { return calls_; }
  std::uint64_t windowed() const { return windowed_; }
  const PaceGaps& gaps() const { return gaps_; }
  // Ends the interval: `in_s` seconds of it inside the window, `out_s` outside (with
  // the probes gone). An interval with too little of either adds nothing.
  void end_interval(double in_s, double out_s);

  // Calls a second outside the windows over inside; none until enough is pooled.
  std::optional<double> speedup() const;
  // The relative variance of speedup().
  double relative_variance() const;
  // Whether relative_variance() comes from the intervals' own spread (enough of them
  // pooled), not from the counts' Poisson error, which is too narrow for a loop's steps.
  bool spread_known() const;
  // speedup() raised by `z` standard errors: the slowest the probes may make the process.
  std::optional<double> cautious_speedup(double z) const;

 private:
  struct Interval {
    double in_calls = 0, in_s = 0, out_calls = 0, out_s = 0;
  };
  std::uint64_t calls_ = 0, windowed_ = 0, switching_ = 0;  // the interval under way
  PaceGaps gaps_;
  std::deque<Interval> intervals_;
};

}  // namespace eacgm::agent
