// The calls in flight past the minimum age (analysis/inflight_calls.h).
#include "analysis/inflight_calls.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/proc_stat.h"

namespace eacgm::analysis {

InflightCalls::InflightCalls(std::uint64_t min_age_ns) : min_age_ns_(min_age_ns), alive_(thread_alive) {}

void InflightCalls::update(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns) {
  InflightSummary s;
  s.min_age_ns = min_age_ns_;
  s.scan_mono_ns = scan_mono_ns;
  s.in_flight = calls.size();
  for (const InflightCall& c : calls) {
    const std::uint64_t age = scan_mono_ns > c.entry_mono_ns ? scan_mono_ns - c.entry_mono_ns : 0;
    if (age < min_age_ns_) continue;
    // A thread that ended inside its call (killed) never returned from it.
    if (alive_ && !alive_(c.call.pid, c.call.tid)) continue;
    s.rows.push_back({c, age});
  }
  std::sort(s.rows.begin(), s.rows.end(), [](const InflightRow& a, const InflightRow& b) {
    if (a.age_ns != b.age_ns) return a.age_ns > b.age_ns;
    if (a.call.call.pid != b.call.call.pid) return a.call.call.pid < b.call.call.pid;
    return a.call.call.tid < b.call.call.tid;
  });
  if (s.rows.size() > kMaxRows) {
    s.over_cap = s.rows.size() - kMaxRows;
    s.rows.resize(kMaxRows);
  }
  summary_ = std::move(s);
}

bool thread_alive(std::uint32_t pid, std::uint32_t tid) {
  return process_running(tid, "/proc/" + std::to_string(pid) + "/task");
}

}  // namespace eacgm::analysis
