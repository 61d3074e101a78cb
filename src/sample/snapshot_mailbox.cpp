// A bounded, drop-oldest queue of snapshots between two threads.
#include "sample/snapshot_mailbox.h"

#include <utility>

namespace eacgm::sample {

void SnapshotMailbox::post(GpuSnapshot snapshot) {
  std::lock_guard<std::mutex> lock(mu_);
  ++posted_;
  if (queue_.size() >= capacity_) {
    queue_.pop_front();
    ++dropped_;
  }
  queue_.push_back(std::move(snapshot));
}

std::vector<GpuSnapshot> SnapshotMailbox::take() {
  std::vector<GpuSnapshot> out;
  std::lock_guard<std::mutex> lock(mu_);
  out.reserve(queue_.size());
  for (auto& s : queue_) out.push_back(std::move(s));
  queue_.clear();
  return out;
}

std::uint64_t SnapshotMailbox::posted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return posted_;
}

std::uint64_t SnapshotMailbox::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

}  // namespace eacgm::sample
