// PidFifo: a map from pid to a value, bounded at `capacity` pids, that makes room by
// forgetting the pid put in longest ago, one at a time. Under process churn it stays at its
// capacity once full, with the same number of entries freed as made, instead of growing to
// a cap and starting over (which held from nothing to the whole cap by turns, and freed the
// whole cap at once among the agent's long-lived blocks). `put` may spare the oldest pid
// (`keep`: a process that still runs): it then counts as put now, and the next oldest is
// asked, at most kSpares times per put, after which the oldest goes whatever `keep` says.
// Not thread-safe.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace eacgm {

template <typename V>
class PidFifo {
 public:
  static constexpr int kSpares = 4;

  explicit PidFifo(std::size_t capacity) : slots_(capacity) {
    assert(capacity > 0);
    map_.reserve(capacity);
  }

  V* find(std::uint32_t pid) {
    auto it = map_.find(pid);
    return it == map_.end() ? nullptr : &it->second.value;
  }
  const V* find(std::uint32_t pid) const {
    auto it = map_.find(pid);
    return it == map_.end() ? nullptr : &it->second.value;
  }
  bool contains(std::uint32_t pid) const { return map_.contains(pid); }
  // Its place in the order stays taken until the oldest comes round to it.
  void erase(std::uint32_t pid) { map_.erase(pid); }

  // Sets the pid's value; a pid not held yet is put last in the order.
  template <typename Keep>
  V& put(std::uint32_t pid, V value, Keep keep) {
    if (auto it = map_.find(pid); it != map_.end()) {
      it->second.value = std::move(value);
      return it->second.value;
    }
    for (int spared = 0;; ++spared) {
      Slot& oldest = slots_[next_];
      Entry* held = holder(oldest);
      if (held == nullptr) break;
      if (spared == kSpares || !keep(oldest.pid, std::as_const(held->value))) {
        map_.erase(oldest.pid);
        break;
      }
      oldest.seq = held->seq = ++seq_;
      advance();
    }
    slots_[next_] = Slot{pid, ++seq_};
    advance();
    return map_.insert_or_assign(pid, Entry{std::move(value), seq_}).first->second.value;
  }
  V& put(std::uint32_t pid, V value) {
    return put(pid, std::move(value), [](std::uint32_t, const V&) { return false; });
  }

  std::size_t size() const { return map_.size(); }
  std::size_t capacity() const { return slots_.size(); }

 private:
  struct Entry {
    V value;
    std::uint64_t seq = 0;
  };
  struct Slot {
    std::uint32_t pid = 0;
    std::uint64_t seq = 0;  // 0: never taken
  };

  // The entry whose place this slot is, if the pid was not erased or put again since.
  Entry* holder(const Slot& s) {
    if (s.seq == 0) return nullptr;
    auto it = map_.find(s.pid);
    return it != map_.end() && it->second.seq == s.seq ? &it->second : nullptr;
  }
  void advance() { next_ = (next_ + 1) % slots_.size(); }

  std::unordered_map<std::uint32_t, Entry> map_;
  std::vector<Slot> slots_;
  std::size_t next_ = 0;  // the oldest place once every place was taken
  std::uint64_t seq_ = 0;
};

}  // namespace eacgm
