// The calls in flight past the minimum age (analysis/inflight_calls.h).
#include "analysis/inflight_calls.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <vector>

namespace eacgm::analysis {

InflightCalls::InflightCalls(std::uint64_t min_age_ns) : min_age_ns_(min_age_ns), alive_(thread_alive) {}

void InflightCalls::update(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns) {
  InflightSummary s;
  s.min_age_ns = min_age_ns_;
  s.scan_mono_ns = scan_mono_ns;
  s.in_flight = calls.size();
  // The calls old enough, oldest first; then their threads are checked, up to the cap.
  std::vector<std::pair<std::uint64_t, const InflightCall*>> old;
  for (const InflightCall& c : calls) {
    const std::uint64_t age = scan_mono_ns > c.entry_mono_ns ? scan_mono_ns - c.entry_mono_ns : 0;
    if (age >= min_age_ns_) old.emplace_back(age, &c);
  }
  std::sort(old.begin(), old.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    if (a.second->call.pid != b.second->call.pid) return a.second->call.pid < b.second->call.pid;
    return a.second->call.tid < b.second->call.tid;
  });
  std::set<Listed> listed;
  for (const auto& [age, c] : old) {
    if (s.rows.size() == kMaxRows) {
      ++s.over_cap;
      continue;
    }
    // A thread that ended inside its call (killed) never returned from it.
    const Listed key{c->call.tid, c->entry_mono_ns};
    if (!listed_.contains(key) && alive_ && !alive_(c->call.pid, c->call.tid)) continue;
    listed.insert(key);
    s.rows.push_back({*c, age});
  }
  summary_ = std::move(s);
  listed_ = std::move(listed);
}

bool thread_alive(std::uint32_t pid, std::uint32_t tid) {
  // Signal 0 checks that the thread exists in that process, without reading /proc (a
  // tenth of the cost). An exited thread is gone at once (and its entry with it).
  if (pid == 0 || tid == 0) return false;
  return syscall(SYS_tgkill, static_cast<pid_t>(pid), static_cast<pid_t>(tid), 0) == 0 || errno == EPERM;
}

}  // namespace eacgm::analysis
