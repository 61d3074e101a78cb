// The budget controller: trap counts -> estimated time per process -> sample shifts.
#include "agent/budget_controller.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace eacgm::agent {
namespace {

constexpr double kMinOwnNs = 1e6;  // below 1 ms of own CPU time in a window, no ratio
// The duty cycle aims below the budget (this share of it), so that noise in the next
// interval's rates does not take a process over; and moves only on a clear change.
constexpr double kDutyAim = 0.8;
constexpr double kDutyLower = 0.9;        // lowered when the fraction needed is below this share
constexpr double kDutyRaise = 1.25;       // raised when the fraction allowed is above this multiple
constexpr double kDutyFull = 0.9;         // a fraction allowed above this is the whole time
constexpr double kDutyFullShare = 0.999;  // attached this share of an interval: not cycled
// A fraction a process with no measured pace starts at, so that its pace is measured.
constexpr double kDutyExplore = 0.5;
// An interval with less of a window than this share is not planned from.
constexpr double kMinPlanShare = 0.01;
// The standard errors a measured pace is raised by before the fraction is set from it.
constexpr double kPaceZ = 1.0;
constexpr double kMaxModelSlowdown = 0.5;
// Ticks the probes stay attached throughout, past the first decision to cycle them, while
// a process making cycled calls has not made them in the same mix twice (its warm-up).
constexpr std::uint32_t kMaxSettleTicks = 3;

}  // namespace

BudgetController::BudgetController(std::shared_ptr<Consumer> inner, TrapCosts costs, BudgetOptions options,
                                   CpuOf pid_cpu, double since_ns)
    : ForwardingConsumer(std::move(inner)),
      costs_(costs),
      options_(std::move(options)),
      pid_cpu_(std::move(pid_cpu)),
      since_ns_(since_ns) {
  options_.window_ticks = std::max<std::size_t>(options_.window_ticks, 1);
  options_.max_shift = std::clamp<std::uint8_t>(options_.max_shift, options_.base_shift, 31);
}

void BudgetController::set_actuator(SetShift set_shift) {
  std::lock_guard lock(actuator_mutex_);
  set_shift_ = std::move(set_shift);
}

void BudgetController::set_duty_cycle(std::shared_ptr<DutyControl> duty, ExitOf exit_of,
                                      std::shared_ptr<std::FILE> log) {
  duty_ = std::move(duty);
  exit_of_ = std::move(exit_of);
  if (duty_) duty_log_ = std::move(log);
}

std::uint8_t BudgetController::shift_of(std::uint32_t probe_id) const {
  auto it = shifts_.find(probe_id);
  return it == shifts_.end() ? options_.base_shift : it->second;
}

BudgetController::Process* BudgetController::process(std::uint32_t pid) {
  auto it = processes_.find(pid);
  if (it != processes_.end()) return &it->second;
  if (processes_.size() >= options_.max_processes) {
    ++untracked_;
    return nullptr;
  }
  Process& p = processes_[pid];
  p.row.pid = pid;
  // Its CPU time before it was first seen: none if it started after us (all of it was
  // traced), else what it has used so far (its first interval then counts no time).
  if (auto cpu = pid_cpu_(pid)) p.last_cpu_ns = cpu->start_ns >= since_ns_ ? 0.0 : cpu->cpu_ns;
  return &p;
}

void BudgetController::on_calls(std::span<const CallEvent> calls) {
  std::uint32_t last_pid = 0;
  Process* last = nullptr;
  for (const CallEvent& c : calls) {
    if (last == nullptr || c.pid != last_pid) {
      last = process(c.pid);
      last_pid = c.pid;
    }
    if (last == nullptr) continue;
    ++last->row.per_call_records;
    last->seen = true;
  }
  inner_->on_calls(calls);
}

void BudgetController::on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) {
  std::vector<CallCount> exact;  // while holding: the counts passed on now
  for (const CallCount& c : counts) {
    // Counted by the process's hook (exact, and no probe's cost), or a per-call probe's
    // calls counted at entry (their cost is their records').
    if (c.probe && (c.probe->hook || c.probe->tallied)) {
      if (holding_) exact.push_back(c);
      continue;
    }
    const bool held = holding_ && c.probe && c.probe->cycled;
    if (held) {
      held_.hold(c);
    } else if (holding_) {
      exact.push_back(c);
    } else if (duty_ && c.probe && c.probe->cycled) {
      held_.note_exact(c);  // attached throughout: the interval's ratio, should a process end soon
    }
    Process* p = process(c.pid);
    if (p == nullptr) continue;
    p->row.counted_calls += c.calls;
    p->seen = true;
    if (c.probe) {
      ProbeTally& t = tallies_[{c.pid, c.probe->id}];
      t.calls += c.calls;
      t.cycled = c.probe->cycled;
      if (duty_ && !c.probe->cycled) {
        Pace& pace = paces_[c.pid];
        pace.add_calls(c.calls, c.windowed, c.switching);
        pace.add_gaps(c.gaps);
      }
    }
  }
  for (const CallTimings& t : timings) {
    if (t.probe && t.probe->hook) continue;  // timed by the process's hook: no probe's returns
    Process* p = process(t.pid);
    if (p == nullptr) continue;
    p->row.sampled_returns += t.count;
    p->seen = true;
    if (t.probe) tallies_[{t.pid, t.probe->id}].sampled += t.count;
    if (t.probe) decide_pinned(*t.probe);
  }
  inner_->on_counts(holding_ ? std::span<const CallCount>(exact) : counts, timings);
}

std::set<std::uint32_t> BudgetController::exited_in(const OverheadReport& report) {
  std::set<std::uint32_t> out;
  for (const ProcessOverhead& row : report.processes) {
    if (row.exited) out.insert(row.pid);
  }
  return out;
}

double BudgetController::cycled_ns(std::uint32_t pid) const {
  const double ret_ns = return_ns();
  double ns = 0;
  for (auto it = tallies_.lower_bound({pid, 0}); it != tallies_.end() && it->first.first == pid; ++it) {
    if (!it->second.cycled) continue;
    ns += static_cast<double>(it->second.calls) * costs_.entry_ns +
          static_cast<double>(it->second.sampled) * ret_ns;
  }
  return ns;
}

std::map<std::uint32_t, std::optional<ScaledCounts::Span>> BudgetController::ended_spans(
    std::optional<std::chrono::steady_clock::time_point> prev, std::chrono::steady_clock::time_point now,
    const std::set<std::uint32_t>& exited) const {
  std::map<std::uint32_t, std::optional<ScaledCounts::Span>> ended;
  for (std::uint32_t pid : exited) {
    auto& span = ended[pid];
    const auto at = exit_of_ && prev ? exit_of_(pid) : std::nullopt;
    if (at && *at > *prev && *at <= now) {
      span = ScaledCounts::Span{std::chrono::duration<double, std::nano>(*at - *prev).count(),
                                duty_->attached_ns(*prev, *at), duty_->switching_ns(*prev, *at)};
    }
  }
  return ended;
}

void BudgetController::update_paces(const ScaledCounts::Span& interval,
                                    const std::map<std::uint32_t, std::optional<ScaledCounts::Span>>& ended) {
  for (auto& [pid, pace] : paces_) {
    ScaledCounts::Span span = interval;
    if (auto e = ended.find(pid); e != ended.end() && e->second) span = *e->second;
    // Outside: with the probes gone, not while they were being attached or detached.
    pace.end_interval(span.attached_ns / 1e9,
                      std::max(0.0, span.wall_ns - span.attached_ns - span.switching_ns) / 1e9);
  }
}

ScaledCounts::Span BudgetController::interval_span(std::optional<std::chrono::steady_clock::time_point> prev,
                                                   std::chrono::steady_clock::time_point now) const {
  if (!prev) return {};
  const double wall = std::chrono::duration<double, std::nano>(now - *prev).count();
  if (!duty_) return {wall, wall, 0};
  const double attached = std::min(duty_->attached_ns(*prev, now), wall);
  return {wall, attached, std::min(duty_->switching_ns(*prev, now), wall - attached)};
}

void BudgetController::add_to_run(OverheadReport& report, const ScaledCounts::Span& span) {
  run_wall_ns_ += span.wall_ns;
  run_attached_ns_ += span.attached_ns;
  report.attached_share = run_wall_ns_ > 0 ? run_attached_ns_ / run_wall_ns_ : 1.0;
}

void BudgetController::release_held(std::optional<std::chrono::steady_clock::time_point> prev,
                                    std::chrono::steady_clock::time_point now, const ScaledCounts::Span& span,
                                    const std::set<std::uint32_t>& exited) {
  if (!duty_) return;  // nothing is held without a duty cycle
  const double wall = span.wall_ns, attached = span.attached_ns;
  const auto ended = ended_spans(prev, now, exited);
  std::map<std::uint32_t, Seen> seen;  // for the duty log
  for (const auto& [pid, pace] : paces_) {
    held_.hold_pinned(pid, pace.calls(), pace.windowed());
    if (duty_log_) seen[pid] = Seen{0, pace.calls(), pace.windowed(), pace.gaps()};
  }
  if (duty_log_) {
    for (const CallCount& c : held_.held()) seen[c.pid].held += c.calls;
  }
  update_paces(span, ended);
  // What is known of each process beside its counts, by pid.
  std::map<std::uint32_t, ScaledCounts::ProcessInterval> processes;
  for (const auto& [pid, lived] : ended) {
    auto& p = processes[pid];
    p.exited = true;
    p.lived = lived;
  }
  // How much faster each process made its calls while the cycled probes were detached:
  // measured from its pace where it has one, else from the calibrated cost of the traps
  // it took (a lower bound: a real program pays more than a loop's best case).
  std::set<std::uint32_t> paced;
  for (const auto& [key, tally] : tallies_) {
    if (!tally.cycled || !paced.insert(key.first).second) continue;
    const auto pace = paces_.find(key.first);
    const auto measured = pace == paces_.end() ? std::nullopt : pace->second.speedup();
    const double model = attached > 0 ? std::min(cycled_ns(key.first) / attached, kMaxModelSlowdown) : 0.0;
    auto& p = processes[key.first];
    p.speedup = measured ? *measured : 1 / (1 - model);
    if (measured) p.speedup_variance = pace->second.relative_variance();
  }
  std::vector<ScaledCounts::ProcessInterval> released;
  released.reserve(processes.size());
  for (auto& [pid, p] : processes) {
    p.pid = pid;
    released.push_back(p);
  }
  auto scaled = held_.release(wall, attached, released);
  if (duty_log_) log_release(span, seen, processes, scaled);
  for (std::uint32_t pid : exited) paces_.erase(pid);
  if (!scaled.empty()) inner_->on_counts(scaled, {});
}

void BudgetController::log_release(const ScaledCounts::Span& span, const std::map<std::uint32_t, Seen>& seen,
                                   const std::map<std::uint32_t, ScaledCounts::ProcessInterval>& processes,
                                   const std::vector<CallCount>& scaled) {
  std::map<std::uint32_t, std::pair<std::uint64_t, bool>> out;  // scaled calls, estimated
  for (const CallCount& c : scaled) {
    auto& o = out[c.pid];
    o.first += c.calls;
    o.second = o.second || c.estimated;
  }
  const DutyControl::SwitchTimes times = duty_->switch_times();
  for (const auto& [pid, s] : seen) {
    const auto process = processes.find(pid);
    const auto pace = paces_.find(pid);
    const bool measured = pace != paces_.end() && pace->second.speedup().has_value();
    const auto o = out.find(pid);
    std::fprintf(duty_log_.get(),
                 "pid=%u wall_ms=%.3f attached_ms=%.3f held=%llu pinned=%llu windowed=%llu in_gaps=%llu "
                 "out_gaps=%llu speedup=%.4f measured=%d speedup_error=%.4f released=%llu estimated=%d "
                 "attach_ms=%.1f detach_ms=%.1f\n",
                 pid, span.wall_ns / 1e6, span.attached_ns / 1e6, static_cast<unsigned long long>(s.held),
                 static_cast<unsigned long long>(s.pinned), static_cast<unsigned long long>(s.windowed),
                 static_cast<unsigned long long>(s.gaps.in), static_cast<unsigned long long>(s.gaps.out),
                 process == processes.end() ? 1.0 : process->second.speedup, measured ? 1 : 0,
                 measured ? std::sqrt(pace->second.relative_variance()) : 0.0,
                 static_cast<unsigned long long>(o == out.end() ? 0 : o->second.first),
                 o != out.end() && o->second.second ? 1 : 0, times.attach_ms, times.detach_ms);
  }
  std::fflush(duty_log_.get());
}

void BudgetController::plan_duty(OverheadReport& report, double attached_share) {
  // An interval without a window (a short one falls in every K-th only) shows nothing
  // of the cycled probes' cost: the fraction stays.
  if (duty_->fraction() < 1.0 && attached_share < kMinPlanShare) {
    report.duty_fraction = duty_->fraction();
    return;
  }
  double allowed_fraction = 1.0;
  for (const ProcessOverhead& row : report.processes) {
    if (row.exited) continue;
    const double cycled = cycled_ns(row.pid);  // the cycled probes' cost, attached as they were
    if (cycled <= 0) continue;
    const double own = std::max(std::min(row.cpu_ns, last_wall_ns_) - row.estimated_ns, kMinOwnNs);
    const double steady = row.estimated_ns - cycled;
    const double room = kDutyAim * options_.budget - steady / own;
    const auto pace = paces_.find(row.pid);
    const auto speedup = pace == paces_.end() ? std::nullopt : pace->second.cautious_speedup(kPaceZ);
    if (speedup) {
      // Measured: while attached, the process goes at most 1 - 1/speedup slower (the
      // pace's cautious end: a pace near 1 within its noise is not taken for no cost);
      // at fraction f, f times that.
      const double slowdown = 1 - 1 / *speedup;
      if (slowdown > 0) allowed_fraction = std::min(allowed_fraction, room / slowdown);
      // Until the intervals' spread gives the pace's error, its counts' Poisson error is
      // too narrow for a loop's steps: a few noisy windows must not count the process
      // whole, which would end the measuring (no window, no pace) for good.
      if (!pace->second.spread_known()) allowed_fraction = std::min(allowed_fraction, kDutyExplore);
      continue;
    }
    // Not measured yet: from the calibrated cost (attached all the time, the cycled
    // probes would have cost `whole`), and cycled anyway, at most half the time, while a
    // quarter of the budget is at stake, so that the pace is measured.
    const double whole = cycled / std::max(attached_share, duty_->min_fraction());
    allowed_fraction = std::min(allowed_fraction, room * own / whole);
    if (whole / own > options_.budget / 4) allowed_fraction = std::min(allowed_fraction, kDutyExplore);
  }
  // Each period's switches cost the process as if counting (the kernel installs and
  // removes the probes one by one, for up to hundreds of milliseconds): the window gets
  // what is left of the share allowed.
  if (allowed_fraction <= kDutyFull) allowed_fraction -= duty_->switching_share();
  const double now = duty_->fraction();
  double next = now;
  if (allowed_fraction < kDutyLower * now) {
    next = allowed_fraction;
  } else if (allowed_fraction > std::min(kDutyRaise * now, kDutyFull)) {
    // (Past kDutyFull the whole time is allowed: from above kDutyFull / kDutyRaise a
    // raise by that multiple could never be asked.)
    next = std::min(allowed_fraction, 2 * now);
  }
  if (next > kDutyFull) next = 1.0;
  if (now >= 1.0 && next < 1.0 && !mixes_settled(report)) next = 1.0;
  next = std::max(next, duty_->min_fraction());
  if (next != now) duty_->set_fraction(next);
  report.duty_fraction = duty_->fraction();
}

bool BudgetController::mixes_settled(const OverheadReport& report) {
  bool settled = true;
  for (const ProcessOverhead& row : report.processes) {
    if (row.exited || cycled_ns(row.pid) <= 0 || held_.settled(row.pid)) continue;
    Process* p = process(row.pid);
    if (p == nullptr || p->settle_ticks >= kMaxSettleTicks) continue;
    ++p->settle_ticks;
    settled = false;
  }
  return settled;
}

void BudgetController::decide_pinned(const ProbeInfo& probe) {
  auto [it, added] = pinned_.try_emplace(probe.id, false);
  if (added) it->second = options_.is_pinned && options_.is_pinned(probe);
}

double BudgetController::return_ns() const { return std::max(0.0, costs_.entry_return_ns - costs_.entry_ns); }

OverheadReport BudgetController::close_interval(std::chrono::steady_clock::time_point now) {
  const double wall_ns =
      last_tick_ ? std::chrono::duration<double, std::nano>(now - *last_tick_).count() : 0.0;
  last_tick_ = now;
  last_wall_ns_ = wall_ns;
  OverheadReport report;
  report.costs = costs_;
  report.budget = options_.budget;
  const double ret_ns = return_ns();
  for (auto it = processes_.begin(); it != processes_.end();) {
    Process& p = it->second;
    ProcessOverhead& row = p.row;
    const std::optional<ProcessCpu> read = pid_cpu_(it->first);
    const std::optional<double> cpu = read ? std::optional<double>(read->cpu_ns) : std::nullopt;
    row.estimated_ns = static_cast<double>(row.counted_calls) * costs_.entry_ns +
                       static_cast<double>(row.sampled_returns) * ret_ns +
                       static_cast<double>(row.per_call_records) * costs_.per_call_ns;
    row.cpu_ns = cpu && p.last_cpu_ns ? std::max(0.0, *cpu - *p.last_cpu_ns) : 0.0;
    if (cpu) p.last_cpu_ns = cpu;
    row.total_estimated_ns += row.estimated_ns;
    row.total_cpu_ns += row.cpu_ns;
    p.window.push_back({row.estimated_ns, row.cpu_ns, wall_ns});
    while (p.window.size() > options_.window_ticks) p.window.pop_front();
    double est = 0, used = 0, wall = 0;
    for (const Interval& i : p.window) {
      est += i.estimated_ns;
      used += i.cpu_ns;
      wall += i.wall_ns;
    }
    // The probes' time against the process's own: its CPU time less theirs, but no more
    // than the window's wall time, since the traps of a launching process fall mostly on
    // one thread (PyTorch's), whose slowdown is what the budget limits; a process's other
    // threads (data loading, compilation) must not dilute it.
    const double own = std::min(used, wall) - est;
    row.ratio = own >= kMinOwnNs ? est / own : (est > 0 && used > 0 ? est / kMinOwnNs : 0.0);
    row.exited = !cpu;
    if (p.seen || est > 0 || row.exited) report.processes.push_back(row);
    row.counted_calls = row.sampled_returns = row.per_call_records = 0;
    p.seen = false;
    it = row.exited ? processes_.erase(it) : std::next(it);
  }
  std::sort(report.processes.begin(), report.processes.end(),
            [](const ProcessOverhead& a, const ProcessOverhead& b) { return a.pid < b.pid; });
  return report;
}

void BudgetController::adapt(OverheadReport& report) {
  const double ret_ns = return_ns();
  // The shift each counted probe needs so that every process over budget gets back
  // within it (shifts are per probe, for every process).
  std::map<std::uint32_t, std::uint8_t> wanted;
  bool any_over = false, all_calm = true;
  for (const ProcessOverhead& row : report.processes) {
    if (row.exited) continue;
    if (row.ratio > options_.budget / 4) all_calm = false;
    if (row.ratio <= options_.budget || !costs_.measured) continue;
    any_over = true;
    ++report.over_budget;
    // The last interval: what entries and records cost is fixed; timed returns shrink
    // by half for each step of a probe's shift.
    // The last interval, measured as the ratio is (close_interval).
    const double own = std::max(std::min(row.cpu_ns, last_wall_ns_) - row.estimated_ns, kMinOwnNs);
    const double allowed = options_.budget * own;
    struct Part {
      std::uint32_t probe;
      double ret_cost;
      std::uint8_t shift;
    };
    std::vector<Part> parts;
    double fixed = static_cast<double>(row.per_call_records) * costs_.per_call_ns;
    double returns = 0;
    for (auto it = tallies_.lower_bound({row.pid, 0}); it != tallies_.end() && it->first.first == row.pid;
         ++it) {
      fixed += static_cast<double>(it->second.calls) * costs_.entry_ns;
      const double r = static_cast<double>(it->second.sampled) * ret_ns;
      returns += r;
      // A pinned probe's returns are paid as they are: only the others can be reduced.
      const auto pin = pinned_.find(it->first.second);
      if (it->second.sampled > 0 && (pin == pinned_.end() || !pin->second)) {
        parts.push_back({it->first.second, r, shift_of(it->first.second)});
      }
    }
    if (fixed > allowed) ++report.at_entry_floor;
    // Halve the costliest returns until the estimate fits (or every probe is at the cap).
    std::sort(parts.begin(), parts.end(),
              [](const Part& a, const Part& b) { return a.ret_cost > b.ret_cost; });
    for (bool changed = true; fixed + returns > allowed && changed;) {
      changed = false;
      for (Part& part : parts) {
        if (part.shift >= options_.max_shift || part.ret_cost <= 0) continue;
        ++part.shift;
        returns -= part.ret_cost / 2;
        part.ret_cost /= 2;
        changed = true;
        if (fixed + returns <= allowed) break;
      }
    }
    for (const Part& part : parts) {
      auto& w = wanted[part.probe];
      w = std::max(w, part.shift);
    }
  }
  std::lock_guard lock(actuator_mutex_);
  if (options_.adapt && set_shift_) {
    if (any_over) {
      calm_ticks_ = 0;
      for (auto [probe, shift] : wanted) {
        if (shift <= shift_of(probe)) continue;
        if (set_shift_(probe, shift)) {
          shifts_[probe] = shift;
          ++raises_;
        }
      }
    } else if (all_calm && !shifts_.empty() && (!duty_ || duty_->fraction() >= 1.0) &&
               ++calm_ticks_ >= options_.window_ticks) {
      // Well within budget for a whole window: time the reduced probes twice as often.
      calm_ticks_ = 0;
      for (auto it = shifts_.begin(); it != shifts_.end();) {
        const auto lower = static_cast<std::uint8_t>(it->second - 1);
        if (!set_shift_(it->first, lower)) {
          ++it;
          continue;
        }
        ++lowers_;
        if (lower <= options_.base_shift) {
          it = shifts_.erase(it);
        } else {
          it->second = lower;
          ++it;
        }
      }
    } else if (!all_calm) {
      calm_ticks_ = 0;
    }
  }
}

void BudgetController::report_shifts(OverheadReport& report) const {
  report.max_sample_shift = options_.base_shift;
  report.pinned_probes = static_cast<std::uint32_t>(
      std::count_if(pinned_.begin(), pinned_.end(), [](const auto& p) { return p.second; }));
  for (auto [probe, shift] : shifts_) {
    ++report.reduced_probes;
    report.max_sample_shift = std::max(report.max_sample_shift, shift);
  }
}

void BudgetController::on_tick(std::chrono::steady_clock::time_point now, const CounterValues& counters) {
  const auto prev = last_tick_;
  OverheadReport report = close_interval(now);
  const ScaledCounts::Span span = interval_span(prev, now);
  const double attached_share = span.wall_ns > 0 ? span.attached_ns / span.wall_ns : 1.0;
  add_to_run(report, span);
  // The interval's counts first (with the paces they add), then the decisions.
  release_held(prev, now, span, exited_in(report));
  if (options_.budget > 0) adapt(report);
  if (duty_ && options_.budget > 0 && options_.adapt && costs_.measured) plan_duty(report, attached_share);
  for (ProcessOverhead& row : report.processes) {
    const auto pace = paces_.find(row.pid);
    if (pace == paces_.end()) continue;
    if (auto speedup = pace->second.speedup()) row.measured_slowdown = 1 - 1 / *speedup;
  }
  report_shifts(report);
  tallies_.clear();
  if (duty_) duty_->on_tick(now);
  // Held while cycling, and for the interval after it (the probes attach again).
  holding_ = duty_ && (duty_->fraction() < 1.0 || attached_share < kDutyFullShare);
  inner_->on_overhead(report);
  inner_->on_tick(now, counters);
}

void BudgetController::on_end(const CounterValues& counters) {
  const auto prev = last_tick_;
  const auto now = std::chrono::steady_clock::now();
  OverheadReport report = close_interval(now);
  const ScaledCounts::Span span = interval_span(prev, now);
  add_to_run(report, span);
  held_.finishing();
  release_held(prev, now, span, exited_in(report));
  holding_ = false;
  if (duty_) report.duty_fraction = duty_->fraction();
  report_shifts(report);
  inner_->on_overhead(report);
  inner_->on_end(counters);
}

}  // namespace eacgm::agent
