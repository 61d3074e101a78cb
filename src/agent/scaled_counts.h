// ScaledCounts: the counts of duty-cycled probes (agent/duty_cycle.h) over one interval,
// held until the interval ends and then handed on as estimates of the whole interval:
// each count scaled by the interval's length over the time its probes were attached,
// with the variance of that estimate.
//
// The variance of a (process, probe)'s estimate is the larger of two:
// - thinning: were the calls spread at random over the interval, the attached share
//   would see each with probability f, so n/f has variance n(1 - f)/f^2;
// - drift: the call rate between windows is not constant; the rate's change from one
//   window to the next estimates how far the unseen time's rate may be from the seen
//   one (sigma_r^2 = E[(r_i - r_{i-1})^2] / 2), so the unseen calls have variance
//   sigma_r^2 x unseen_seconds^2.
// A count split by handle (a launch's kernel) gets its share of its probe's variance.
//
// The probes slow the calling thread while they are attached, so it makes fewer calls
// per second then than while they are detached: with `speedup` (the process's call rate
// while they are detached over its rate while attached), the unseen time's calls are
// n x speedup x unseen / attached. A measured speedup carries its own relative variance
// (`speedup_variance`, from the counts it was measured with), which the unseen calls'
// estimate inherits.
//
// A process that exited in the interval is scaled over the part it lived. Where its
// exit time is not known, it made its unseen calls until a moment not known: half of
// them are added, with the variance of a uniform share (the whole unseen estimate
// squared over 12) added to the rest. One that exited before the interval's window
// (nothing seen) is given its last interval's rates over the time it lived, with an
// error of half of that.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/call_counts.h"

namespace eacgm::agent {

class ScaledCounts {
 public:
  // Of an interval: its length, and how long the cycled probes counted in it.
  struct Span {
    double wall_ns = 0;
    double attached_ns = 0;
  };
  void hold(const CallCount& count) { held_.push_back(count); }
  bool empty() const { return held_.empty(); }
  // Ends the interval (`wall_ns` long, the cycled probes attached `attached_ns` of it):
  // the held counts, scaled and marked estimated. Counts of an interval that was
  // attached throughout come back as they are, exact. `speedup`: per pid, 1 if absent;
  // `speedup_variance`: its relative variance, per pid, 0 if absent.
  // `ended`: processes that exited in the interval, with the part of it they lived when
  // known.
  std::vector<CallCount> release(double wall_ns, double attached_ns,
                                 const std::map<std::uint32_t, double>& speedup = {},
                                 const std::map<std::uint32_t, std::optional<Span>>& ended = {},
                                 const std::map<std::uint32_t, double>& speedup_variance = {});

 private:
  struct Rate {
    double last = 0;                // calls per second in the last window
    double mean_square_change = 0;  // exponentially weighted (r_i - r_{i-1})^2
    std::uint32_t windows = 0;
    std::uint64_t last_interval = 0;
  };
  // Below this much time seen, a process's interval is not scaled from what was seen.
  static constexpr double kMinSeenNs = 10e6;
  // A process's last scaled interval: its counts per second, by row.
  struct LastRates {
    std::vector<CallCount> rows;  // calls and bytes of `seconds`
    double seconds = 0;
    std::uint64_t interval = 0;  // when they were seen
  };
  std::vector<CallCount> held_;
  std::map<std::uint32_t, LastRates> last_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, Rate> rates_;  // (pid, probe id)
  std::uint64_t interval_ = 0;
};

}  // namespace eacgm::agent
