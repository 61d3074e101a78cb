// Hands GPU snapshots from the sampling thread to the thread that writes the outputs,
// so that outputs see traced calls and samples on one thread and need no locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "core/gpu_sample.h"

namespace eacgm::sample {

class SnapshotMailbox {
 public:
  // A consumer that stops draining loses the oldest snapshots past `capacity`
  // (counted), never blocks the sampling thread.
  explicit SnapshotMailbox(std::size_t capacity = 64) : capacity_(capacity == 0 ? 1 : capacity) {}

  void post(GpuSnapshot snapshot);
  // Everything posted since the last take, oldest first.
  std::vector<GpuSnapshot> take();
  std::uint64_t posted() const;
  std::uint64_t dropped() const;

 private:
  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::deque<GpuSnapshot> queue_;
  std::uint64_t posted_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace eacgm::sample
