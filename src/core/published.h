// Published<T>: the last immutable snapshot a producer made, for readers on other
// threads. The producer swaps in a new shared_ptr<const T> each tick; a reader holds
// what it got for as long as it likes, so a slow reader never blocks the producer.
#pragma once

#include <atomic>
#include <memory>
#include <utility>

namespace eacgm {

template <typename T>
class Published {
 public:
  void publish(std::shared_ptr<const T> snapshot) {
    current_.store(std::move(snapshot), std::memory_order_release);
    version_.fetch_add(1, std::memory_order_release);
  }
  // nullptr until the first publish.
  std::shared_ptr<const T> get() const { return current_.load(std::memory_order_acquire); }
  // How many snapshots were published so far.
  std::uint64_t version() const { return version_.load(std::memory_order_acquire); }

 private:
  std::atomic<std::shared_ptr<const T>> current_;
  std::atomic<std::uint64_t> version_{0};
};

}  // namespace eacgm
