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
// Where the process also makes calls that are counted all the time (the pinned probes:
// its synchronisations), those are the better yardstick, and the time is not used: a
// training step makes the same calls each time, so the cycled calls per pinned call
// seen in the windows (R, pooled over recent windows as a ratio of sums) times the
// pinned calls not seen gives the unseen calls, y + R (X - x) for y cycled calls and x
// of the X pinned ones seen. It needs no speedup (both kinds of call slow alike while
// the probes are attached), and it follows a process that stops making calls, or
// exits, between its windows, which scaling by time cannot. Its variance is the ratio
// estimator's, sum (y_i - R x_i)^2 / (sum x_i)^2 over the windows i (corrected for
// their small number), times the unseen pinned calls squared; until a few windows are
// pooled, (R (X - x))^2 / sum x_i instead (the windows' pinned calls taken as a Poisson
// count, which a step's regular calls are not: too wide once the windows' spread is known), and
// until then a recent interval attached throughout, settled and of the same mix, that saw more
// pinned calls than the windows stands in for them (steadier()). An interval with
// cycled calls seen but no pinned call at all has a different mix: it is scaled by time, as are processes
// without pinned probes or with too few pinned calls seen yet. An interval without a window
// in which a process made pinned calls before any ratio is known, or before two windows
// agree on one (the first seconds of its steps, traced from its start: the last window fell
// before its steps began, or in its warm-up, whose steps make more calls) hands on nothing:
// its pinned calls wait, and the first ratio scales
// them with the unseen calls of the interval it is found in (after kMaxBacklog such
// intervals, or when the process ends, the ratio of the windows pooled so far does, with
// their Poisson error, and so it does for the unseen calls of the interval a process
// ends in; where those windows saw fewer pinned calls than the process's last interval
// attached throughout, that interval's ratio does: a process that ends soon after the
// probes were first detached; with neither, their last rates, as before).
//
// A process that exited in the interval is scaled over the part it lived. Where its
// exit time is not known, it made its unseen calls until a moment not known: half of
// them are added, with the variance of a uniform share (the whole unseen estimate
// squared over 12) added to the rest. One that exited before the interval's window
// (nothing seen) is given its last interval's rates over the time it lived, with an
// error of half of that.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/call_counts.h"

namespace eacgm::agent {

class ScaledCounts {
 public:
  // Windowless intervals whose pinned calls may wait for a process's first ratio.
  static constexpr std::uint64_t kMaxBacklog = 10;
  // Of an interval: its length, and how long the cycled probes counted in it.
  struct Span {
    double wall_ns = 0;
    double attached_ns = 0;
    double switching_ns = 0;  // of the rest, while the probes were being attached or detached
  };
  void hold(const CallCount& count) { held_.push_back(count); }
  // The interval's calls of process `pid`'s pinned probes, and of them those made while
  // the window was open.
  void hold_pinned(std::uint32_t pid, std::uint64_t calls, std::uint64_t windowed) {
    pinned_[pid] = Pinned{calls, std::min(windowed, calls)};
  }
  // A cycled probe's count handed on exact, not held (its probes were attached
  // throughout the interval): kept only for the interval's ratio (remember_exact).
  void note_exact(const CallCount& count) { noted_.push_back(count); }
  bool empty() const { return held_.empty(); }
  // Whether process `pid`'s last two intervals, both attached throughout and the second
  // the one released last, made the same cycled calls per pinned call (within
  // kRegimeChange, each with kMinRatioCalls pinned calls or more): its steps' mix is
  // known, and a ratio found in the windows will be that of its steps, not of its
  // warm-up (the budget's first detach waits for it, agent/budget_controller.h).
  bool settled(std::uint32_t pid) const;
  // The next release is the trace's last: pinned calls waiting for a ratio are handed on
  // in it, scaled as well as they can be.
  void finishing() { finishing_ = true; }
  const std::vector<CallCount>& held() const { return held_; }
  // What is known of one process over the interval beside its counts: how much faster
  // it made its calls while the cycled probes were detached (`speedup`, with the relative
  // variance of a measured one), and whether it exited in the interval (with the part of
  // the interval it lived, where the moment is known).
  struct ProcessInterval {
    std::uint32_t pid = 0;
    double speedup = 1;
    double speedup_variance = 0;
    bool exited = false;
    std::optional<Span> lived;
  };
  // Ends the interval (`wall_ns` long, the cycled probes attached `attached_ns` of it):
  // the held counts, scaled and marked estimated. Counts of an interval that was
  // attached throughout come back as they are, exact. `processes`: at most one per pid;
  // a process not in it made its calls no faster unseen and lived throughout.
  std::vector<CallCount> release(double wall_ns, double attached_ns,
                                 const std::vector<ProcessInterval>& processes = {});

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
  struct Pinned {
    std::uint64_t calls = 0, windowed = 0;
  };
  // A process's windows, pooled (each older window weighs kRatioDecay less): its pinned
  // calls seen (x), and per cycled probe the calls seen (y) and the sums of squares
  // that give the ratio's variance; with the probe's last rows, whose shares split an
  // estimate made for a window that saw none of its calls.
  struct ProbeRatio {
    double y = 0, yy = 0, xy = 0;
    std::vector<CallCount> rows;
  };
  // A process's rows of an interval, by probe id.
  using ProbeRows = std::map<std::uint32_t, std::vector<CallCount*>>;
  struct RatioPool {
    double x = 0, xx = 0;
    double windows = 0;  // pooled, by weight
    std::map<std::uint32_t, ProbeRatio> probes;
    std::uint64_t last_interval = 0;
    std::uint64_t window_interval = 0;  // the interval of the last window
    double gap = 1;                     // intervals between the last two windows
    double backlog = 0;                 // pinned calls of windowless intervals that wait for a ratio
    std::uint64_t backlog_intervals = 0;
    // (exact_) its interval's ratio agrees with the interval's before, attached
    // throughout too (settled()).
    bool agrees = false;
    // Adds a window that saw `x` pinned calls and the cycled rows `seen`; older ones
    // weigh kRatioDecay less. A window of at least kMinRatioCalls pinned calls whose
    // cycled calls per pinned call differ from the pool's by more than kRegimeChange
    // starts the pool anew: the process changed its mix (its warm-up ended, an
    // evaluation began), and the old windows would bias the ratio for dozens more.
    void add_window(double x, const ProbeRows& seen);
    // The cycled calls pooled, all probes together.
    double cycled() const;
    // Whether a window of `seen_x` pinned calls and `seen_y` cycled calls has another mix
    // than the pool's: its cycled calls per pinned call differ from the pool's by more
    // than kRegimeChange.
    bool other_mix(double seen_x, double seen_y) const;
  };
  static constexpr double kRatioDecay = 0.8;
  // Intervals after which an exact interval's ratio no longer stands in for the windows'.
  static constexpr std::uint64_t kExactFresh = 3;
  // Windows of one mix differ by the steps cut at their edges: a few percent per window
  // of a few dozen steps (the H100's CPU-bound and GPU-bound loops: 3-7%).
  static constexpr double kRegimeChange = 0.2;
  static constexpr double kMinWindowsWithout =
      1.5;                                      // pooled windows (by weight) that scale a windowless interval
  static constexpr double kMinRatioCalls = 10;  // pooled pinned calls seen before the ratio is used
  static constexpr double kMinRatioWindows = 2.5;  // pooled windows (by weight) before their spread is used
  // release()'s processes, by pid.
  using Processes = std::map<std::uint32_t, ProcessInterval>;
  static bool exited(const Processes& processes, std::uint32_t pid);
  // The part of the interval (`wall_ns`, `attached_ns`) process `pid` lived (all of it,
  // unless it ended in it), and whether the moment it ended is unknown.
  static std::pair<Span, bool> span_of(std::uint32_t pid, double wall_ns, double attached_ns,
                                       const Processes& processes);
  // Scales the rows in `out` of the processes whose pinned calls can be the yardstick
  // (in place; rows for probes none of whose calls was seen go to `made`); returns them.
  std::set<std::uint32_t> scale_by_pinned(std::vector<CallCount>& out,
                                          const std::map<std::uint32_t, Pinned>& pinned, double wall_ns,
                                          double attached_ns, const Processes& processes,
                                          std::vector<CallCount>& made);
  // A process's calls estimated from its pinned calls: its rows `seen` are scaled in
  // place; a probe none of whose calls was seen gets rows in `made`, split as its last
  // rows were.
  // Hands on the pinned calls that waited for a ratio (pool.backlog): scaled by the
  // windows pooled so far, or, if none saw a pinned call, at the process's last rates
  // (for as many intervals of `wall_ns` as waited).
  void release_backlog(std::uint32_t pid, RatioPool& pool, double wall_ns, std::vector<CallCount>& made);
  // Keeps the ratio of an interval whose probes were attached throughout (`rows`: its
  // cycled calls, none: nothing learnt; `calls`: its pinned calls, none: another mix,
  // and the kept ratio is dropped): a process whose windows saw too few pinned calls is
  // scaled by it, for kExactFresh intervals, when a ratio is needed at once (it ended,
  // the trace ends, its waiting calls can wait no longer). It is not pooled with the
  // windows: the first one, from the process's start to the first decision, holds its
  // start-up.
  void remember_exact(std::uint32_t pid, std::uint64_t calls, const ProbeRows& rows);
  // Adds to `into` the rows of `counts` of processes with pinned calls, by process and probe.
  static void rows_by_process(std::vector<CallCount>& counts, const std::map<std::uint32_t, Pinned>& pinned,
                              std::map<std::uint32_t, ProbeRows>& into);
  // The ratio that scales process `pid` now: its pooled windows', or, where they saw
  // fewer than kMinRatioCalls pinned calls, its last interval attached throughout, where
  // that saw enough and is recent (kExactFresh); else the windows' few pinned calls where
  // `few_pinned_calls` allows them; nullptr if none.
  const RatioPool* ratio_of(std::uint32_t pid, const RatioPool& pool, bool few_pinned_calls) const;
  // The pooled windows, or, while their spread is not known yet (fewer than
  // kMinRatioWindows pooled), process `pid`'s recent last interval attached throughout
  // where it saw more pinned calls than they did, agreed with the interval before it
  // (settled()) and has the windows' mix (within kRegimeChange): the same ratio, known
  // from more steps, so with a narrower error (a short window of a process that ends
  // soon after the first detach may see a few hundred steps, the interval before it
  // thousands).
  const RatioPool& steadier(std::uint32_t pid, const RatioPool& pool) const;
  // `unseen_x`: the pinned calls not seen (the interval's, and those that waited);
  // `unseen_square`: the sum of their squares by interval (what sets the variance).
  static void ratio_estimates(double unseen_x, double unseen_square, const RatioPool& pool, ProbeRows& seen,
                              std::vector<CallCount>& made);
  // The square that waited pinned calls add: as if spread evenly over their intervals.
  static double backlog_square(const RatioPool& pool);
  std::vector<CallCount> held_;
  std::vector<CallCount> noted_;               // this interval's, by note_exact
  std::map<std::uint32_t, Pinned> pinned_;     // this interval's, by pid
  std::map<std::uint32_t, RatioPool> ratios_;  // by pid
  std::map<std::uint32_t, RatioPool> exact_;   // by pid: the last interval attached throughout, if recent
  std::map<std::uint32_t, LastRates> last_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, Rate> rates_;  // (pid, probe id)
  std::uint64_t interval_ = 0;
  bool finishing_ = false;
};

}  // namespace eacgm::agent
