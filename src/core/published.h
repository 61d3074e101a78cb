// Published<T>: the last immutable snapshot a producer made, for readers on other
// threads. The producer swaps in a new shared_ptr<const T> each tick; a reader copies
// the pointer and holds the snapshot for as long as it likes. The lock guards only the
// pointer copy (never the snapshot's making or reading), so a slow reader never holds
// up the producer. (A mutex rather than std::atomic<shared_ptr>: libstdc++ 12's lock
// bit inside the pointer is invisible to ThreadSanitizer.)
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

namespace eacgm {

template <typename T>
class Published {
 public:
  void publish(std::shared_ptr<const T> snapshot) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      current_.swap(snapshot);
    }
    version_.fetch_add(1, std::memory_order_release);
    // The old snapshot (now in `snapshot`) is released here, outside the lock.
  }
  // nullptr until the first publish.
  std::shared_ptr<const T> get() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return current_;
  }
  // How many snapshots were published so far.
  std::uint64_t version() const { return version_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const T> current_;
  std::atomic<std::uint64_t> version_{0};
};

}  // namespace eacgm
