// Attached probes by id (the BPF attach cookie). Written by the attacher, read by
// the ingest thread through a per-reader cache, so decoding takes no lock.
//
// Ids of detached probes are reused, but only after a quarantine: a removed id keeps
// its ProbeInfo (records still queued in the ring buffer decode against it) until two
// quarantine periods have ended (`end_period()`, called at each whole rescan), so at
// least one full period separates a probe's detach from its id's next owner. Each reuse
// bumps the table's generation; a ProbeCache whose generation differs refreshes first.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/call_event.h"

namespace eacgm::probe {

class ProbeTable {
 public:
  // Assigns an id (a free one past its quarantine, else the next new one); the
  // ProbeInfo is immutable from here on.
  std::shared_ptr<const ProbeInfo> add(ProbeInfo info);
  // The probe registered under id: the current one, or the last one removed while its
  // id is not reused yet; nullptr for ids never assigned.
  std::shared_ptr<const ProbeInfo> get(std::uint32_t id) const;
  // Every id's entry (removed ones included until reused), indexed by id.
  std::vector<std::shared_ptr<const ProbeInfo>> all() const;
  // With the generation it belongs to, read under the same lock.
  std::vector<std::shared_ptr<const ProbeInfo>> all(std::uint64_t& generation) const;
  // Ids assigned so far (the highest id + 1): live, quarantined and free ones.
  std::size_t size() const;
  // Probes added and not removed.
  std::size_t live() const;
  bool is_live(std::uint32_t id) const;

  // Releases an id (unknown or already removed ids are ignored). It is quarantined.
  void remove(std::uint32_t id);
  // Ends a quarantine period: ids removed two periods ago become free.
  void end_period();
  // Ids removed and not yet free (for tests and accounting).
  std::size_t quarantined() const;

  // Bumped whenever an id gets a new owner.
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<const ProbeInfo>> probes_;
  std::vector<bool> live_;
  std::size_t live_count_ = 0;
  std::deque<std::pair<std::uint32_t, std::uint64_t>> quarantine_;  // (id, period removed in)
  std::vector<std::uint32_t> free_;
  std::uint64_t period_ = 0;
  std::atomic<std::uint64_t> generation_{0};
};

// A reader's lock-free view: ids are published before their uprobes exist, so a
// miss only needs one refresh; a reused id (the table's generation moved) refreshes too.
class ProbeCache {
 public:
  explicit ProbeCache(const ProbeTable& table) : table_(table) {}
  const std::shared_ptr<const ProbeInfo>& get(std::uint32_t id) {
    if (id < cache_.size() && cache_[id] && generation_ == table_.generation()) return cache_[id];
    return refresh(id);
  }

 private:
  const std::shared_ptr<const ProbeInfo>& refresh(std::uint32_t id);
  const ProbeTable& table_;
  std::vector<std::shared_ptr<const ProbeInfo>> cache_;
  std::uint64_t generation_ = 0;
  std::shared_ptr<const ProbeInfo> none_;
};

}  // namespace eacgm::probe
