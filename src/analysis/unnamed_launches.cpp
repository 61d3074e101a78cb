// UnnamedLaunches: held per handle until its name comes, the oldest forgotten at the cap.
#include "analysis/unnamed_launches.h"

namespace eacgm::analysis {

void UnnamedLaunches::add(std::uint32_t pid, std::uint64_t handle, std::uint64_t stream,
                          std::uint64_t calls) {
  if (handle == 0 || calls == 0 || max_handles_ == 0) return;
  const Key key{pid, handle};
  auto it = held_.find(key);
  if (it == held_.end()) {
    while (held_.size() >= max_handles_ && !order_.empty()) {
      held_.erase(order_.front());
      order_.pop_front();
    }
    it = held_.emplace(key, std::map<std::uint64_t, std::uint64_t>{}).first;
    order_.push_back(key);
  }
  it->second[stream] += calls;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> UnnamedLaunches::take(std::uint32_t pid,
                                                                           std::uint64_t handle) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  auto it = held_.find(Key{pid, handle});
  if (it == held_.end()) return out;
  out.assign(it->second.begin(), it->second.end());
  held_.erase(it);
  std::erase(order_, Key{pid, handle});
  return out;
}

void UnnamedLaunches::forget(std::uint32_t pid) {
  auto first = held_.lower_bound(Key{pid, 0});
  auto last = first;
  while (last != held_.end() && last->first.first == pid) ++last;
  if (first == last) return;
  held_.erase(first, last);
  std::erase_if(order_, [pid](const Key& k) { return k.first == pid; });
}

}  // namespace eacgm::analysis
