// A periodic sampling thread: runs a pass on a fixed grid of deadlines (no drift from
// the pass's own duration) and hands each snapshot to a sink as a value.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/gpu_sample.h"
#include "core/result.h"

namespace eacgm::sample {

class SamplingLoop {
 public:
  using Pass = std::function<GpuSnapshot()>;
  using Sink = std::function<void(GpuSnapshot)>;

  struct Options {
    std::chrono::nanoseconds interval = std::chrono::seconds(1);
    std::uint64_t max_passes = 0;  // 0: until stop()
  };

  // Validates everything before the thread starts, so a failure leaves nothing running.
  // The first pass runs at once; pass k is due at start + k * interval. A pass that
  // overruns skips the deadlines it missed (counted) instead of bursting to catch up.
  static Result<std::unique_ptr<SamplingLoop>> start(const Options& options, Pass pass, Sink sink);

  ~SamplingLoop();  // stops and joins
  SamplingLoop(const SamplingLoop&) = delete;
  SamplingLoop& operator=(const SamplingLoop&) = delete;

  // Asks the thread to finish after the pass in progress and joins it. Idempotent.
  void stop();
  // Blocks until max_passes have run or stop() was called; the error names what a pass
  // or the sink threw, if one did (the loop stops then).
  Status wait();

  // False once the thread has finished (max_passes reached, a failure, or stop()).
  bool running() const { return !finished_flag_.load(); }
  std::uint64_t passes() const { return passes_.load(); }
  std::uint64_t skipped_deadlines() const { return skipped_.load(); }

 private:
  SamplingLoop(const Options& options, Pass pass, Sink sink);
  void run();

  Options options_;
  Pass pass_;
  Sink sink_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool finished_ = false;
  std::string failure_;
  std::atomic<bool> finished_flag_{false};
  std::atomic<std::uint64_t> passes_{0};
  std::atomic<std::uint64_t> skipped_{0};
  std::thread thread_;
};

}  // namespace eacgm::sample
