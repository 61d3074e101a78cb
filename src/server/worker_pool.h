// WorkerPool: the HTTP server's fixed set of worker threads, each serving one whole
// request at a time (a streamed response holds its worker for the stream's life). A job
// waiting while every worker is busy is answered "overloaded" by one rejecting thread
// once it has waited `wait`, or at once when `max_waiting` jobs wait already.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace eacgm::server {

class WorkerPool {
 public:
  // Runs the job; `overloaded`: on the rejecting thread, to be answered 503 at once.
  using Job = std::function<void(bool overloaded)>;

  // `busy`: the number of jobs running on workers, kept up to date here.
  WorkerPool(std::size_t workers, std::size_t max_waiting, std::chrono::milliseconds wait,
             std::atomic<std::uint64_t>& busy);
  ~WorkerPool();  // shutdown()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Never blocks (the event loop calls it).
  void enqueue(Job job);
  // Runs the jobs still waiting, then joins every thread. Idempotent.
  void shutdown();

 private:
  struct Waiting {
    Job job;
    std::chrono::steady_clock::time_point queued;
  };

  void work();
  void reject();

  const std::size_t workers_;
  const std::size_t max_waiting_;
  const std::chrono::milliseconds wait_;
  std::atomic<std::uint64_t>& busy_count_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Waiting> pending_;
  std::size_t busy_ = 0;
  bool shutdown_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace eacgm::server
