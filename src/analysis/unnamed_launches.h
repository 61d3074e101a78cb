// UnnamedLaunches: kernel launches counted before their kernel's name was known. In the
// always-on mode a launch is counted by its handle, and the handle's name comes from a
// naming call (cuModuleGetFunction, cuLibraryGetKernel) or the host stub's symbol, which
// ingest may see only after the first counts went out unnamed. Held per (process, handle)
// and stream, they move to the name when a count of the same handle arrives with it.
// Bounded: past max_handles the oldest handle is forgotten (its launches stay unnamed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

namespace eacgm::analysis {

class UnnamedLaunches {
 public:
  static constexpr std::size_t kMaxHandles = 4096;
  explicit UnnamedLaunches(std::size_t max_handles = kMaxHandles) : max_handles_(max_handles) {}

  // `calls` launches of `handle` on `stream` were counted without a name.
  void add(std::uint32_t pid, std::uint64_t handle, std::uint64_t stream, std::uint64_t calls);
  // What was held for (pid, handle), by stream, and no longer held: the name has come.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> take(std::uint32_t pid, std::uint64_t handle);
  // The process has gone: its handles are never named now.
  void forget(std::uint32_t pid);
  std::size_t handles() const { return held_.size(); }

 private:
  using Key = std::pair<std::uint32_t, std::uint64_t>;
  std::size_t max_handles_;
  std::map<Key, std::map<std::uint64_t, std::uint64_t>> held_;  // by stream
  std::deque<Key> order_;                                       // oldest first
};

}  // namespace eacgm::analysis
