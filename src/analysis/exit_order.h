// ExitOrder: the exits of a per-process table's processes, found round robin and kept in
// the order found, so that a table holding the last N exited processes lets go of the first
// to exit without a walk over all of them. Shared by the GPU activity and GPU work tables.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <utility>

namespace eacgm::analysis {

// What a table's process entry carries for its exit.
struct ExitMark {
  std::optional<std::chrono::steady_clock::time_point> gone_since;
  std::uint64_t seq = 0;  // its place in the ExitOrder; 0 while it runs
};

class ExitOrder {
 public:
  using Clock = std::chrono::steady_clock;

  // Checks up to `max_checks` entries of `processes` (a std::map from pid to an entry with
  // an ExitMark `exit`), round robin across calls, with `is_alive`; one gone for `grace`
  // has exited. Past `max_exited` exits, `let_go(iterator)` erases the first to exit.
  template <typename Map, typename LetGo>
  void sweep(Map& processes, Clock::time_point now, const std::function<bool(std::uint32_t)>& is_alive,
             std::size_t max_checks, Clock::duration grace, std::size_t max_exited, LetGo let_go) {
    if (processes.empty() || !is_alive) return;
    auto it = processes.lower_bound(cursor_);
    for (std::size_t checked = 0; checked < max_checks && checked < processes.size(); ++checked) {
      if (it == processes.end()) it = processes.begin();
      auto& [pid, p] = *it;
      ++it;
      if (p.exit.seq != 0) continue;
      if (is_alive(pid)) {
        p.exit.gone_since.reset();
        continue;
      }
      if (!p.exit.gone_since) p.exit.gone_since = now;
      if (now - *p.exit.gone_since < grace) continue;
      p.exit.seq = ++seq_;
      exited_.emplace_back(pid, p.exit.seq);
    }
    cursor_ = it == processes.end() ? 0 : it->first;
    while (exited_.size() > max_exited) {
      const auto [pid, seq] = exited_.front();
      exited_.pop_front();
      auto found = processes.find(pid);
      // Stale: the pid came back (reused) since.
      if (found == processes.end() || found->second.exit.seq != seq) continue;
      let_go(found);
      ++dropped_;
    }
  }
  // Exits held (some may be stale).
  std::size_t size() const { return exited_.size(); }
  // Processes let go past max_exited.
  std::uint64_t dropped() const { return dropped_; }

 private:
  std::deque<std::pair<std::uint32_t, std::uint64_t>> exited_;  // (pid, seq), first exit first
  std::uint64_t seq_ = 0;
  std::uint32_t cursor_ = 0;  // the pid the next sweep starts at
  std::uint64_t dropped_ = 0;
};

}  // namespace eacgm::analysis
