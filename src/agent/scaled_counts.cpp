// Scaling of duty-cycled counts and the variance of each estimate.
#include "agent/scaled_counts.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace eacgm::agent {
namespace {

constexpr double kExact = 0.999;                // attached this share of an interval: counts are exact
constexpr double kMinAttachedNs = 1e6;          // below, the window is taken as this long
constexpr double kChangeWeight = 0.2;           // weight of the newest rate change
constexpr std::uint64_t kForgetIntervals = 10;  // a (process, probe) unseen this long is dropped
constexpr double kMinSpeedup = 0.5;             // a pace outside these bounds is taken as the bound
constexpr double kMaxSpeedup = 2.0;

std::uint64_t scaled(std::uint64_t n, double factor) {
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(n) * factor));
}

// Rows of a process's last rates, `share` times what they held, each ± half, to `to`.
void extrapolate(const std::vector<CallCount>& rows, double share, std::vector<CallCount>& to) {
  for (CallCount c : rows) {
    const double calls = static_cast<double>(c.calls) * share;
    c.calls = static_cast<std::uint64_t>(std::llround(calls));
    c.bytes = scaled(c.bytes, share);
    c.variance = calls * calls / 4;
    c.estimated = true;
    if (c.calls > 0) to.push_back(std::move(c));
  }
}

}  // namespace

std::vector<CallCount> ScaledCounts::release(double wall_ns, double attached_ns,
                                             const std::vector<ProcessInterval>& processes) {
  ++interval_;
  Processes by_pid;
  for (const ProcessInterval& p : processes) by_pid.try_emplace(p.pid, p);
  std::vector<CallCount> out;
  out.swap(held_);
  std::map<std::uint32_t, Pinned> pinned;
  pinned.swap(pinned_);
  std::erase_if(rates_,
                [this](const auto& r) { return r.second.last_interval + kForgetIntervals < interval_; });
  std::erase_if(ratios_,
                [this](const auto& r) { return r.second.last_interval + kForgetIntervals < interval_; });
  // An exact interval's ratio stands in for kExactFresh intervals only.
  std::erase_if(exact_, [this](const auto& r) { return r.second.window_interval + kExactFresh < interval_; });
  {
    // Counts handed on exact, and those held before the first decision (no length): the
    // interval was attached throughout for their processes.
    std::vector<CallCount> noted;
    noted.swap(noted_);
    std::map<std::uint32_t, ProbeRows> rows_of;
    rows_by_process(noted, pinned, rows_of);
    if (wall_ns <= 0) rows_by_process(out, pinned, rows_of);
    for (const auto& [pid, rows] : rows_of) remember_exact(pid, pinned.at(pid).calls, rows);
  }
  if (wall_ns <= 0) return out;
  std::vector<CallCount> made;
  const std::set<std::uint32_t> by_ratio = scale_by_pinned(out, pinned, wall_ns, attached_ns, by_pid, made);
  // Processes that ended before anything of the interval was seen: their last rates
  // (handed on as they are, after the scaling below).
  std::vector<CallCount> extrapolated;
  for (const auto& [pid, process] : by_pid) {
    if (!process.exited) continue;
    const std::optional<Span>& span = process.lived;
    ratios_.erase(pid);
    exact_.erase(pid);
    auto last = last_.find(pid);
    if (last == last_.end()) continue;
    if (by_ratio.contains(pid)) {
      last_.erase(last);
      continue;
    }
    if (span && span->attached_ns < kMinSeenNs && last->second.seconds > 0) {
      extrapolate(last->second.rows, span->wall_ns / 1e9 / last->second.seconds, extrapolated);
    }
    last_.erase(last);
  }
  // An interval without a window (a short window falls in every K-th one only): the
  // processes scaled by time get their last rates, ± half; one seen in a window making
  // no cycled calls has none any more.
  std::set<std::uint32_t> in_out;
  for (const CallCount& c : out) in_out.insert(c.pid);
  if (attached_ns < kMinSeenNs) {
    for (const auto& [pid, last] : last_) {
      if (exited(by_pid, pid) || by_ratio.contains(pid) || in_out.contains(pid) || last.seconds <= 0)
        continue;
      extrapolate(last.rows, wall_ns / 1e9 / last.seconds, extrapolated);
    }
  } else {
    std::erase_if(last_,
                  [&](const auto& l) { return !in_out.contains(l.first) && !exited(by_pid, l.first); });
  }
  // What was seen of a process that ended before its window (at its very end) is
  // already in its extrapolation.
  std::set<std::uint32_t> extrapolated_pids;
  for (const CallCount& e : extrapolated) extrapolated_pids.insert(e.pid);
  std::erase_if(out, [&](const CallCount& c) { return extrapolated_pids.contains(c.pid); });
  extrapolated.insert(extrapolated.end(), made.begin(), made.end());
  if (out.empty()) return extrapolated;

  // Per process: the span it lived in the interval, and how it is scaled.
  struct Scale {
    bool exact = false;
    double f = 1;              // the seen share of its span
    double seen_s = 0;         // seconds seen
    double unseen_s = 0;       // seconds not seen
    double speedup = 1;        // 1 / (1 - slowdown): how much faster unseen calls were made
    double unseen_weight = 1;  // 0.5 for a process that ended at a moment not known
  };
  std::map<std::uint32_t, Scale> scales;
  auto scale_of = [&](std::uint32_t pid) -> const Scale& {
    auto [it, added] = scales.try_emplace(pid);
    if (!added) return it->second;
    Scale& sc = it->second;
    const auto [span, end_unknown] = span_of(pid, wall_ns, attached_ns, by_pid);
    if (end_unknown) sc.unseen_weight = 0.5;
    if (by_ratio.contains(pid) || span.wall_ns <= 0 || span.attached_ns >= kExact * span.wall_ns) {
      sc.exact = true;
      return sc;
    }
    const double seen_ns = std::max(span.attached_ns, kMinAttachedNs);
    sc.f = std::min(1.0, seen_ns / span.wall_ns);
    sc.seen_s = seen_ns / 1e9;
    sc.unseen_s = std::max(0.0, span.wall_ns - seen_ns) / 1e9;
    const auto process = by_pid.find(pid);
    sc.speedup =
        process == by_pid.end() ? 1.0 : std::clamp(process->second.speedup, kMinSpeedup, kMaxSpeedup);
    return sc;
  };

  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> totals;
  for (const CallCount& c : out) {
    if (!scale_of(c.pid).exact) totals[{c.pid, c.probe ? c.probe->id : 0}] += c.calls;
  }
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> variance;
  for (const auto& [key, n] : totals) {
    const Scale& sc = scale_of(key.first);
    Rate& r = rates_[key];
    const double rate = static_cast<double>(n) / sc.seen_s * sc.speedup;  // while detached
    if (r.windows > 0 && r.last_interval + 1 == interval_) {
      const double change = (rate - r.last) * (rate - r.last);
      r.mean_square_change =
          r.windows == 1 ? change : (1 - kChangeWeight) * r.mean_square_change + kChangeWeight * change;
    }
    r.last = rate;
    ++r.windows;
    r.last_interval = interval_;
    const double thinning = static_cast<double>(n) * (1 - sc.f) / (sc.f * sc.f) * sc.speedup * sc.speedup;
    const double drift = r.mean_square_change / 2 * sc.unseen_s * sc.unseen_s;
    variance[key] = std::max(thinning, drift);
  }
  for (CallCount& c : out) {
    const Scale& sc = scale_of(c.pid);
    if (sc.exact) continue;
    const auto key = std::make_pair(c.pid, c.probe ? c.probe->id : 0u);
    const double n = static_cast<double>(totals[key]);
    const double share = n > 0 ? static_cast<double>(c.calls) / n : 0.0;
    c.variance = variance[key] * share * share;
    // What one call seen stands for: itself, and its share of the unseen time's calls.
    const double unseen = (1 - sc.f) / sc.f * sc.speedup;
    if (sc.unseen_weight < 1) c.variance += std::pow(unseen * static_cast<double>(c.calls), 2) / 12;
    // The unseen calls scale with the speedup, and so does their error.
    if (auto p = by_pid.find(c.pid); p != by_pid.end() && p->second.speedup_variance != 0) {
      c.variance +=
          std::pow(unseen * sc.unseen_weight * static_cast<double>(c.calls), 2) * p->second.speedup_variance;
    }
    const double factor = 1 + unseen * sc.unseen_weight;
    c.calls = scaled(c.calls, factor);
    c.bytes = scaled(c.bytes, factor);
    c.estimated = true;
  }
  // The rates of the processes seen long enough, for an interval they end before its window.
  std::map<std::uint32_t, LastRates> latest;
  for (const CallCount& c : out) {
    const Scale& sc = scale_of(c.pid);
    if (sc.exact || sc.seen_s * 1e9 < kMinSeenNs || exited(by_pid, c.pid)) continue;
    LastRates& l = latest[c.pid];
    l.seconds = sc.seen_s + sc.unseen_s;
    l.interval = interval_;
    CallCount row = c;
    row.variance = 0;
    l.rows.push_back(std::move(row));
  }
  for (auto& [pid, l] : latest) last_[pid] = std::move(l);
  std::erase_if(last_, [this](const auto& l) { return l.second.interval + kForgetIntervals < interval_; });
  out.insert(out.end(), extrapolated.begin(), extrapolated.end());
  return out;
}

bool ScaledCounts::exited(const Processes& processes, std::uint32_t pid) {
  const auto p = processes.find(pid);
  return p != processes.end() && p->second.exited;
}

std::pair<ScaledCounts::Span, bool> ScaledCounts::span_of(std::uint32_t pid, double wall_ns,
                                                          double attached_ns, const Processes& processes) {
  if (auto p = processes.find(pid); p != processes.end() && p->second.exited) {
    return p->second.lived ? std::make_pair(*p->second.lived, false)
                           : std::make_pair(Span{wall_ns, attached_ns}, true);
  }
  return {Span{wall_ns, attached_ns}, false};
}

void ScaledCounts::RatioPool::add_window(double seen_x, const ProbeRows& seen) {
  double seen_y = 0;
  for (const auto& [id, rows] : seen) {
    for (const CallCount* c : rows) seen_y += static_cast<double>(c->calls);
  }
  if (x > 0 && seen_x >= kMinRatioCalls && other_mix(seen_x, seen_y)) {
    x = xx = windows = 0;
    probes.clear();
  }
  x = kRatioDecay * x + seen_x;
  xx = kRatioDecay * xx + seen_x * seen_x;
  windows = kRatioDecay * windows + 1;
  for (auto& [id, r] : probes) {
    r.y *= kRatioDecay;
    r.yy *= kRatioDecay;
    r.xy *= kRatioDecay;
  }
  for (const auto& [id, rows] : seen) {
    ProbeRatio& r = probes[id];
    double y = 0;
    r.rows.clear();
    for (const CallCount* c : rows) {
      y += static_cast<double>(c->calls);
      r.rows.push_back(*c);
    }
    r.y += y;
    r.yy += y * y;
    r.xy += seen_x * y;
  }
  std::erase_if(probes, [](const auto& r) { return r.second.y < 1e-3; });
}

double ScaledCounts::RatioPool::cycled() const {
  double y = 0;
  for (const auto& [id, r] : probes) y += r.y;
  return y;
}

bool ScaledCounts::RatioPool::other_mix(double seen_x, double seen_y) const {
  // seen_y / seen_x against cycled() / x, without dividing by a pool that saw no call.
  const double pool_y = cycled();
  return std::abs(seen_y * x - pool_y * seen_x) > kRegimeChange * pool_y * seen_x;
}

std::set<std::uint32_t> ScaledCounts::scale_by_pinned(std::vector<CallCount>& out,
                                                      const std::map<std::uint32_t, Pinned>& pinned,
                                                      double wall_ns, double attached_ns,
                                                      const Processes& processes,
                                                      std::vector<CallCount>& made) {
  std::map<std::uint32_t, ProbeRows> rows_of;
  rows_by_process(out, pinned, rows_of);
  std::set<std::uint32_t> by_ratio;
  for (const auto& [pid, p] : pinned) {
    const Span span = span_of(pid, wall_ns, attached_ns, processes).first;
    if (span.wall_ns <= 0 || span.attached_ns >= kExact * span.wall_ns) {  // exact as they are
      remember_exact(pid, p.calls, rows_of[pid]);
      if (auto pool = ratios_.find(pid); pool != ratios_.end())
        release_backlog(pid, pool->second, wall_ns, made);
      continue;
    }
    ProbeRows& seen = rows_of[pid];
    if (p.calls == 0 && !seen.empty()) continue;  // calls, but none pinned: another mix, by time
    RatioPool& pool = ratios_[pid];
    pool.last_interval = interval_;
    const bool window = span.attached_ns >= kMinSeenNs;
    if (window) {
      pool.add_window(static_cast<double>(p.windowed), seen);
      if (pool.window_interval > 0) pool.gap = static_cast<double>(interval_ - pool.window_interval);
      pool.window_interval = interval_;
    }
    const double unseen_x = static_cast<double>(p.calls - p.windowed);
    // A window's own interval is scaled by the pool as soon as it has enough pinned
    // calls; an interval without one only by a pool of two windows or more that agree
    // (a single one may be the warm-up's, whose steps make more calls).
    const RatioPool* ratio = &pool;
    if (pool.x < kMinRatioCalls || (!window && pool.windows < kMinWindowsWithout)) {
      // No ratio yet: a windowless interval's pinned calls wait for one (its process's
      // last rates may be those of another mix), up to kMaxBacklog intervals and while
      // the process lives. Then, or when its window comes, the windows pooled so far
      // scale them, and when it ends, this interval's unseen calls too; where those
      // windows saw fewer pinned calls than its recent last interval attached
      // throughout, that interval's ratio does (ratio_of: a process that ends soon
      // after the probes were first detached).
      const bool ending = finishing_ || exited(processes, pid) || pool.backlog_intervals >= kMaxBacklog;
      if (!window && unseen_x > 0 && !ending) {
        pool.backlog += unseen_x;
        ++pool.backlog_intervals;
        by_ratio.insert(pid);
        continue;
      }
      // The interval a process ends in goes by a ratio only where it made enough pinned
      // calls unseen (a script's last synchronisation has few launches near it): else by
      // time, as one with calls and no pinned call.
      if (pool.backlog <= 0 && !(ending && unseen_x >= kMinRatioCalls)) continue;
      // Calls that waited take what ratio there is; the ending interval alone only one
      // of enough pinned calls (a window that also saw steps of another mix, warm-up
      // launches without a synchronisation, would multiply them), else time scales it.
      ratio = ratio_of(pid, pool, pool.backlog > 0);
      if (ratio == nullptr) {
        if (pool.backlog > 0) release_backlog(pid, pool, wall_ns, made);
        continue;
      }
    }
    if (ratio == &pool) ratio = &steadier(pid, pool);
    ratio_estimates(unseen_x + pool.backlog, unseen_x * unseen_x + backlog_square(pool), *ratio, seen, made);
    pool.backlog = 0;
    pool.backlog_intervals = 0;
    by_ratio.insert(pid);
  }
  return by_ratio;
}

void ScaledCounts::rows_by_process(std::vector<CallCount>& counts,
                                   const std::map<std::uint32_t, Pinned>& pinned,
                                   std::map<std::uint32_t, ProbeRows>& into) {
  for (CallCount& c : counts) {
    if (pinned.contains(c.pid)) into[c.pid][c.probe ? c.probe->id : 0].push_back(&c);
  }
}

void ScaledCounts::remember_exact(std::uint32_t pid, std::uint64_t calls, const ProbeRows& rows) {
  if (rows.empty()) return;
  if (calls == 0) {  // cycled calls and no pinned one: another mix (a warm-up's steps)
    exact_.erase(pid);
    return;
  }
  RatioPool exact;
  exact.add_window(static_cast<double>(calls), rows);
  exact.window_interval = interval_;
  if (auto before = exact_.find(pid); before != exact_.end() &&
                                      before->second.window_interval + 1 == interval_ &&
                                      before->second.x >= kMinRatioCalls && exact.x >= kMinRatioCalls) {
    exact.agrees = before->second.cycled() > 0 && !before->second.other_mix(exact.x, exact.cycled());
  }
  exact_[pid] = std::move(exact);
}

bool ScaledCounts::settled(std::uint32_t pid) const {
  const auto e = exact_.find(pid);
  return e != exact_.end() && e->second.agrees && e->second.window_interval == interval_;
}

const ScaledCounts::RatioPool* ScaledCounts::ratio_of(std::uint32_t pid, const RatioPool& pool,
                                                      bool few_pinned_calls) const {
  if (pool.x >= kMinRatioCalls) return &pool;
  // Windows with too few pinned calls to go by alone: the exact interval, where it saw
  // enough (release() keeps it only while recent: an older one may hold another phase).
  auto e = exact_.find(pid);
  if (e != exact_.end() && e->second.x >= kMinRatioCalls && !e->second.probes.empty()) return &e->second;
  return few_pinned_calls && pool.x > 0 ? &pool : nullptr;
}

const ScaledCounts::RatioPool& ScaledCounts::steadier(std::uint32_t pid, const RatioPool& pool) const {
  if (pool.windows >= kMinRatioWindows) return pool;
  const auto e = exact_.find(pid);
  if (e == exact_.end()) return pool;
  const RatioPool& exact = e->second;
  const bool better =
      exact.agrees && exact.x > pool.x && exact.cycled() > 0 && !exact.other_mix(pool.x, pool.cycled());
  return better ? exact : pool;
}

void ScaledCounts::release_backlog(std::uint32_t pid, RatioPool& pool, double wall_ns,
                                   std::vector<CallCount>& made) {
  if (pool.backlog <= 0) return;
  if (const RatioPool* ratio = ratio_of(pid, pool, true)) {
    ProbeRows none;
    ratio_estimates(pool.backlog, backlog_square(pool), *ratio, none, made);
  } else if (auto last = last_.find(pid); last != last_.end() && last->second.seconds > 0) {
    // No window saw a pinned call of it: the waiting intervals get its last rates.
    extrapolate(last->second.rows,
                static_cast<double>(pool.backlog_intervals) * wall_ns / 1e9 / last->second.seconds, made);
  }
  pool.backlog = 0;
  pool.backlog_intervals = 0;
}

double ScaledCounts::backlog_square(const RatioPool& pool) {
  return pool.backlog_intervals > 0
             ? pool.backlog * pool.backlog / static_cast<double>(pool.backlog_intervals)
             : 0.0;
}

void ScaledCounts::ratio_estimates(double unseen_x, double unseen_square, const RatioPool& pool,
                                   ProbeRows& seen, std::vector<CallCount>& made) {
  // The same pooled ratio scales every interval until the next windows change it, so
  // their errors add up, not as independent ones would: each interval's variance is
  // taken that many times (the intervals per window times the windows pooled), so that
  // the sum a consumer makes over a run is not too narrow. Pinned calls that waited are
  // taken as the intervals they came from (unseen_square), not as one: those intervals
  // are already counted in `shared`.
  const double shared = std::max(1.0, pool.gap * pool.windows);
  for (const auto& [id, r] : pool.probes) {
    const double ratio = r.y / pool.x;
    const double unseen = ratio * unseen_x;
    const double residual = std::max(0.0, r.yy - 2 * ratio * r.xy + ratio * ratio * pool.xx);
    const double variance =
        shared * (pool.windows >= kMinRatioWindows
                      ? unseen_square * residual / (pool.x * pool.x) * pool.windows / (pool.windows - 1)
                      : ratio * ratio * unseen_square / pool.x);
    auto rows = seen.find(id);
    double y = 0;
    if (rows != seen.end()) {
      for (const CallCount* c : rows->second) y += static_cast<double>(c->calls);
    }
    if (y > 0) {
      const double factor = (y + unseen) / y;
      for (CallCount* c : rows->second) {
        const double share = static_cast<double>(c->calls) / y;
        c->variance = variance * share * share;
        c->calls = scaled(c->calls, factor);
        c->bytes = scaled(c->bytes, factor);
        c->estimated = true;
      }
      continue;
    }
    // None seen in this window: the unseen calls split as the probe's last rows were.
    double last = 0;
    for (const CallCount& c : r.rows) last += static_cast<double>(c.calls);
    if (last <= 0 || unseen < 0.5) continue;
    for (const CallCount& row : r.rows) {
      const double share = static_cast<double>(row.calls) / last;
      CallCount c = row;
      c.calls = static_cast<std::uint64_t>(std::llround(unseen * share));
      c.bytes = row.calls > 0
                    ? scaled(row.bytes, static_cast<double>(c.calls) / static_cast<double>(row.calls))
                    : 0;
      c.variance = variance * share * share;
      c.estimated = true;
      if (c.calls > 0) made.push_back(std::move(c));
    }
  }
}

}  // namespace eacgm::agent
