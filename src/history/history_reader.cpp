// The history's reading side: the pool of connections.
#include "history/history_reader.h"

#include <algorithm>
#include <chrono>

namespace eacgm::history {

HistoryReader::HistoryReader(std::string url, Retention retention, std::size_t max_connections, Opener opener)
    : url_(std::move(url)),
      retention_(retention),
      max_connections_(std::max<std::size_t>(1, max_connections)),
      opener_(opener ? std::move(opener)
                     : Opener([](const std::string& u) { return open_store(u, StoreAccess::kRead); })) {}

std::size_t HistoryReader::connections() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_;
}

Result<std::unique_ptr<Store>> HistoryReader::acquire() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    freed_.wait(lock, [this] { return !idle_.empty() || open_ < max_connections_; });
    if (!idle_.empty()) {
      auto store = std::move(idle_.back());
      idle_.pop_back();
      return store;
    }
    ++open_;  // this one's place, held while it opens (outside the lock: it may be slow)
  }
  auto store = opener_(url_);
  if (!store) {
    std::lock_guard<std::mutex> lock(mutex_);
    --open_;
    freed_.notify_one();
  }
  return store;
}

void HistoryReader::release(std::unique_ptr<Store> store, bool healthy) {
  if (!healthy) store.reset();  // closed outside the lock
  std::lock_guard<std::mutex> lock(mutex_);
  if (healthy) {
    idle_.push_back(std::move(store));
  } else {
    --open_;  // closed: the next query opens a fresh connection
  }
  freed_.notify_one();
}

std::int64_t HistoryReader::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace eacgm::history
