// The workers and the rejecting thread of server/worker_pool.h.
#include "server/worker_pool.h"

#include <algorithm>
#include <utility>

namespace eacgm::server {

WorkerPool::WorkerPool(std::size_t workers, std::size_t max_waiting, std::chrono::milliseconds wait,
                       std::atomic<std::uint64_t>& busy)
    : workers_(workers), max_waiting_(std::max<std::size_t>(max_waiting, 1)), wait_(wait), busy_count_(busy) {
  for (std::size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  threads_.emplace_back([this] { reject(); });
}

WorkerPool::~WorkerPool() { shutdown(); }

void WorkerPool::enqueue(Job job) {
  {
    std::lock_guard lock(mutex_);
    pending_.push_back({std::move(job), std::chrono::steady_clock::now()});
  }
  wake_.notify_all();
}

void WorkerPool::shutdown() {
  {
    std::lock_guard lock(mutex_);
    shutdown_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void WorkerPool::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return !pending_.empty() || shutdown_; });
    if (pending_.empty()) return;  // shut down with nothing left
    Waiting w = std::move(pending_.front());
    pending_.pop_front();
    ++busy_;
    lock.unlock();
    busy_count_.fetch_add(1, std::memory_order_relaxed);
    w.job(false);
    busy_count_.fetch_sub(1, std::memory_order_relaxed);
    lock.lock();
    --busy_;
    wake_.notify_all();  // the rejecting thread re-checks whether a worker is free
  }
}

void WorkerPool::reject() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (pending_.empty()) {
      if (shutdown_) return;
      wake_.wait(lock);
      continue;
    }
    // A free worker takes the job; the rejecting thread acts only while all are busy
    // and the oldest job has waited long enough, or when too many wait.
    const bool crowded = pending_.size() > max_waiting_;
    if (!crowded && busy_ < workers_ && !shutdown_) {
      wake_.wait(lock);
      continue;
    }
    const auto due = pending_.front().queued + wait_;
    if (!crowded && std::chrono::steady_clock::now() < due && !shutdown_) {
      wake_.wait_until(lock, due);
      continue;
    }
    Waiting w = std::move(pending_.front());
    pending_.pop_front();
    lock.unlock();
    w.job(true);
    lock.lock();
  }
}

}  // namespace eacgm::server
