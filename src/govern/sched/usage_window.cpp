// Sliding-window accounting: intervals are appended in time order and dropped once they
// end before the window starts.
#include "govern/sched/usage_window.h"

#include <algorithm>

namespace eacgm::govern::sched {

void UsageWindow::add(Micros start, Micros end) {
  if (end <= start) return;
  intervals_.push_back({start, end});
  total_ += end - start;
}

Micros UsageWindow::busy(Micros now) {
  Micros from = now - window_;
  while (!intervals_.empty() && intervals_.front().end <= from) intervals_.pop_front();
  Micros sum = 0;
  for (const Interval& i : intervals_) {
    Micros s = std::max(i.start, from);
    Micros e = std::min(i.end, now);
    if (e > s) sum += e - s;
  }
  return sum;
}

double UsageWindow::share(Micros now) {
  return window_ <= 0 ? 0.0 : static_cast<double>(busy(now)) / static_cast<double>(window_);
}

}  // namespace eacgm::govern::sched
