// Probe registry: ids are dense and never reused within a run.
#include "probe/probe_table.h"

namespace eacgm::probe {

std::shared_ptr<const ProbeInfo> ProbeTable::add(ProbeInfo info) {
  std::lock_guard<std::mutex> lock(mutex_);
  info.id = static_cast<std::uint32_t>(probes_.size());
  auto p = std::make_shared<const ProbeInfo>(std::move(info));
  probes_.push_back(p);
  return p;
}

std::shared_ptr<const ProbeInfo> ProbeTable::get(std::uint32_t id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return id < probes_.size() ? probes_[id] : nullptr;
}

std::vector<std::shared_ptr<const ProbeInfo>> ProbeTable::all() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return probes_;
}

std::size_t ProbeTable::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return probes_.size();
}

const std::shared_ptr<const ProbeInfo>& ProbeCache::refresh(std::uint32_t id) {
  cache_ = table_.all();
  if (id < cache_.size() && cache_[id]) return cache_[id];
  return none_;
}

}  // namespace eacgm::probe
