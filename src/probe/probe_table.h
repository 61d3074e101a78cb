// Attached probes by id (the BPF attach cookie). Written by the attacher, read by
// the ingest thread through a per-reader cache, so decoding takes no lock.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/call_event.h"

namespace eacgm::probe {

class ProbeTable {
 public:
  // Assigns the next id; the ProbeInfo is immutable from here on.
  std::shared_ptr<const ProbeInfo> add(ProbeInfo info);
  std::shared_ptr<const ProbeInfo> get(std::uint32_t id) const;
  std::vector<std::shared_ptr<const ProbeInfo>> all() const;
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<const ProbeInfo>> probes_;
};

// A reader's lock-free view: ids are published before their uprobes exist, so a
// miss only needs one refresh.
class ProbeCache {
 public:
  explicit ProbeCache(const ProbeTable& table) : table_(table) {}
  const std::shared_ptr<const ProbeInfo>& get(std::uint32_t id) {
    if (id < cache_.size() && cache_[id]) return cache_[id];
    return refresh(id);
  }

 private:
  const std::shared_ptr<const ProbeInfo>& refresh(std::uint32_t id);
  const ProbeTable& table_;
  std::vector<std::shared_ptr<const ProbeInfo>> cache_;
  std::shared_ptr<const ProbeInfo> none_;
};

}  // namespace eacgm::probe
