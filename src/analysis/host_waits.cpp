// HostWaits: per-(process, kind) waits, exits, summaries (analysis/host_waits.h).
#include "analysis/host_waits.h"

#include <time.h>

#include <algorithm>

#include "core/host_wait_kinds.h"
#include "core/proc_stat.h"

namespace eacgm::analysis {
namespace {

// Probes whose kind is cached by address; past this, kinds are looked up by name.
constexpr std::size_t kMaxPinnedProbes = 65536;

std::size_t slot(HostWaitKind kind) { return static_cast<std::size_t>(kind); }

}  // namespace

std::optional<std::chrono::steady_clock::time_point> process_start_time(std::uint32_t pid) {
  const auto cpu = process_cpu(pid);
  if (!cpu) return std::nullopt;
  // The start is in ns since boot (CLOCK_BOOTTIME, which counts suspended time too).
  timespec boot{};
  if (clock_gettime(CLOCK_BOOTTIME, &boot) != 0) return std::nullopt;
  const double boot_ns = static_cast<double>(boot.tv_sec) * 1e9 + static_cast<double>(boot.tv_nsec);
  const auto ago =
      std::chrono::nanoseconds(static_cast<std::int64_t>(std::max(0.0, boot_ns - cpu->start_ns)));
  return std::chrono::steady_clock::now() - ago;
}

HostWaits::HostWaits(Options options, Clock::time_point trace_start)
    : options_(options), trace_start_(trace_start), start_of_(process_start_time) {}

HostWaits::Process* HostWaits::process(std::uint32_t pid) {
  auto it = processes_.find(pid);
  if (it != processes_.end()) return &it->second;
  if (processes_.size() >= options_.max_processes) return nullptr;
  // A pid seen again after its exit is a new process (a reused pid): its summary goes.
  if (auto old =
          std::find_if(exited_.begin(), exited_.end(), [pid](const Exited& e) { return e.pid == pid; });
      old != exited_.end()) {
    exited_.erase(old);
    ++exited_dropped_;
  }
  Process p;
  const auto started = start_of_ ? start_of_(pid) : std::nullopt;
  p.start = started ? std::max(*started, trace_start_) : trace_start_;
  return &processes_.emplace(pid, std::move(p)).first->second;
}

std::optional<HostWaitKind> HostWaits::kind_of(const std::shared_ptr<const ProbeInfo>& probe) {
  if (!probe) return std::nullopt;
  if (auto it = kinds_.find(probe.get()); it != kinds_.end()) return it->second;
  const auto kind = wait_kind_of_function(probe->function);
  if (pinned_.size() < kMaxPinnedProbes) {
    kinds_.emplace(probe.get(), kind);
    pinned_.push_back(probe);
  }
  return kind;
}

bool HostWaits::from_source(KindState& state, const ProbeInfo& probe) {
  const Source from = probe.hook ? Source::kHook : Source::kProbes;
  if (state.source == Source::kNone) state.source = from;
  return state.source == from;
}

bool HostWaits::from_source(std::uint32_t pid, HostWaitKind kind, const ProbeInfo& probe) {
  Process* p = process(pid);
  return p == nullptr || from_source(p->kinds[slot(kind)], probe);
}

void HostWaits::add(const CallEvent& event) {
  // The outer call that made a nested one already waited for it.
  if (event.nested) return;
  const auto kind = kind_of(event.probe);
  if (!kind) return;
  Process* p = process(event.pid);
  if (p == nullptr) {
    ++untracked_;
    return;
  }
  if (p->comm.empty()) p->comm = std::string(event.comm_view());
  KindState& k = p->kinds[slot(*kind)];
  if (!from_source(k, *event.probe)) return;
  ++k.calls;
  ++calls_by_kind_[slot(*kind)];
  if (!event.has_exit) return;
  k.durations.add(event.dur_ns);
  k.total_ns += static_cast<double>(event.dur_ns);
  by_kind_[slot(*kind)].add(event.dur_ns);
}

void HostWaits::add(std::span<const CallCount> counts, std::span<const CallTimings> timings) {
  // This delivery's counted calls and sampled durations per (process, kind).
  struct Interval {
    std::uint64_t calls = 0, sampled = 0, sampled_ns = 0;
  };
  std::map<std::pair<std::uint32_t, HostWaitKind>, Interval> intervals;
  for (const CallCount& c : counts) {
    if (c.probe && c.probe->tallied) continue;  // its records are its calls' waits
    const auto kind = kind_of(c.probe);
    if (kind && from_source(c.pid, *kind, *c.probe)) intervals[{c.pid, *kind}].calls += c.calls;
  }
  for (const CallTimings& t : timings) {
    const auto kind = kind_of(t.probe);
    if (!kind || !from_source(t.pid, *kind, *t.probe)) continue;
    Interval& i = intervals[{t.pid, *kind}];
    i.sampled += t.count;
    i.sampled_ns += t.sum_ns;
    Process* p = process(t.pid);
    if (p == nullptr) continue;  // its calls are counted as untracked below
    p->kinds[slot(*kind)].durations.add_bucket(t.bucket, EACGM_HIST_BITS, t.count, t.sum_ns);
    by_kind_[slot(*kind)].add_bucket(t.bucket, EACGM_HIST_BITS, t.count, t.sum_ns);
  }
  for (const auto& [key, i] : intervals) {
    const auto [pid, kind] = key;
    Process* p = process(pid);
    if (p == nullptr) {
      untracked_ += i.calls;
      continue;
    }
    calls_by_kind_[slot(kind)] += i.calls;
    KindState& k = p->kinds[slot(kind)];
    k.calls += i.calls;
    k.estimated = true;
    // Priced at this delivery's sampled mean (exact when every call was timed), else at
    // the mean so far; calls before any sample wait for one.
    if (i.sampled > 0) {
      k.total_ns += static_cast<double>(i.sampled_ns) / static_cast<double>(i.sampled) *
                    static_cast<double>(std::max(i.calls, i.sampled));
    } else {
      k.unpriced += i.calls;
    }
    if (k.unpriced > 0 && k.durations.count() > 0) {
      k.total_ns += k.durations.mean() * static_cast<double>(k.unpriced);
      k.unpriced = 0;
    }
  }
}

void HostWaits::add(const HostWaitTimings& waits) {
  Process* p = process(waits.pid);
  if (p == nullptr) {
    untracked_ += waits.count;
    return;
  }
  KindState& k = p->kinds[slot(waits.kind)];
  k.calls += waits.count;
  k.durations.add_bucket(waits.bucket, EACGM_HIST_BITS, waits.count, waits.sum_ns);
  k.total_ns += static_cast<double>(waits.sum_ns);
  calls_by_kind_[slot(waits.kind)] += waits.count;
  by_kind_[slot(waits.kind)].add_bucket(waits.bucket, EACGM_HIST_BITS, waits.count, waits.sum_ns);
}

void HostWaits::add(const HostWaitProcess& info) {
  Process* p = process(info.pid);
  if (p == nullptr) return;
  // The main thread's name: the process's, where a traced call gives its thread's.
  if (!info.comm.empty()) p->comm = info.comm;
  // CLOCK_MONOTONIC, the steady clock's own.
  if (info.start_ns != 0) {
    p->start = std::max(trace_start_, Clock::time_point(std::chrono::nanoseconds(info.start_ns)));
  }
  if (info.exit_ns != 0) p->exit_at = Clock::time_point(std::chrono::nanoseconds(info.exit_ns));
}

void HostWaits::rows_of(std::uint32_t pid, const Process& p, Clock::time_point end, bool exited,
                        std::vector<HostWaitRow>& out) const {
  const double wall_ns = std::max(0.0, std::chrono::duration<double, std::nano>(end - p.start).count());
  for (std::size_t i = 0; i < kHostWaitKinds; ++i) {
    const KindState& k = p.kinds[i];
    if (k.calls == 0 && k.durations.count() == 0) continue;
    HostWaitRow r;
    r.pid = pid;
    r.comm = p.comm;
    r.kind = static_cast<HostWaitKind>(i);
    r.calls = std::max(k.calls, k.durations.count());
    r.timed = k.durations.count();
    r.total_ns = static_cast<std::uint64_t>(k.total_ns);
    r.estimated = k.estimated && r.timed < r.calls;
    r.p50_ns = k.durations.quantile(0.5);
    r.p99_ns = k.durations.quantile(0.99);
    r.max_ns = k.durations.max();
    r.wall_ns = wall_ns;
    r.share = wall_ns > 0 ? static_cast<double>(r.total_ns) / wall_ns : 0.0;
    r.exited = exited;
    out.push_back(std::move(r));
  }
}

void HostWaits::sweep(Clock::time_point now, const std::function<bool(std::uint32_t)>& is_alive,
                      std::size_t max_checks, Clock::duration grace) {
  if (processes_.empty() || max_checks == 0) return;
  std::vector<std::uint32_t> gone;
  auto it = processes_.lower_bound(next_check_);
  for (std::size_t checked = 0; checked < max_checks && checked < processes_.size(); ++checked) {
    if (it == processes_.end()) it = processes_.begin();
    Process& p = it->second;
    if (is_alive(it->first)) {
      p.gone_since.reset();
    } else {
      if (!p.gone_since) p.gone_since = now;
      if (now - *p.gone_since >= grace) gone.push_back(it->first);
    }
    ++it;
  }
  next_check_ = it == processes_.end() ? 0 : it->first;
  for (std::uint32_t pid : gone) {
    auto p = processes_.find(pid);
    Exited e;
    e.pid = pid;
    rows_of(pid, p->second, p->second.exit_at.value_or(*p->second.gone_since), true, e.rows);
    processes_.erase(p);
    exited_.push_back(std::move(e));
  }
  while (exited_.size() > options_.max_exited) {
    exited_.pop_front();
    ++exited_dropped_;
  }
}

HostWaitSummary HostWaits::summary(Clock::time_point now) const {
  HostWaitSummary s;
  for (const auto& [pid, p] : processes_) rows_of(pid, p, p.exit_at.value_or(now), false, s.rows);
  for (const Exited& e : exited_) s.rows.insert(s.rows.end(), e.rows.begin(), e.rows.end());
  std::stable_sort(s.rows.begin(), s.rows.end(), [](const HostWaitRow& a, const HostWaitRow& b) {
    return a.pid != b.pid ? a.pid < b.pid : a.kind < b.kind;
  });
  s.by_kind = by_kind_;
  s.calls_by_kind = calls_by_kind_;
  s.untracked = untracked_;
  s.exited_dropped = exited_dropped_;
  return s;
}

}  // namespace eacgm::analysis
