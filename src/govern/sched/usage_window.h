// A tenant's GPU time over a sliding window: the busy intervals billed to it, kept only
// as long as they overlap the window.
#pragma once

#include <cstdint>
#include <deque>

namespace eacgm::govern::sched {

using Micros = std::int64_t;  // a monotonic clock in microseconds

class UsageWindow {
 public:
  explicit UsageWindow(Micros window) : window_(window) {}

  void set_window(Micros window) { window_ = window; }
  Micros window() const { return window_; }
  // Bills [start, end) (end > start; earlier intervals may overlap it).
  void add(Micros start, Micros end);
  // Busy time inside [now - window, now).
  Micros busy(Micros now);
  // busy / window.
  double share(Micros now);
  // Every microsecond ever billed (for the counter metric).
  Micros total() const { return total_; }

 private:
  struct Interval {
    Micros start, end;
  };
  Micros window_;
  std::deque<Interval> intervals_;
  Micros total_ = 0;
};

}  // namespace eacgm::govern::sched
