// The drains' sweep of exited processes: which of the pids they hold state for are gone.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <vector>

namespace eacgm::ingest {

// The pids of `held` that `alive` says are gone, in ascending order.
inline std::vector<std::uint32_t> gone_pids(const std::set<std::uint32_t>& held,
                                            const std::function<bool(std::uint32_t)>& alive) {
  std::vector<std::uint32_t> gone;
  for (std::uint32_t pid : held) {
    if (!alive(pid)) gone.push_back(pid);
  }
  return gone;
}

}  // namespace eacgm::ingest
