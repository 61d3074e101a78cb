// Probe registry: ids are dense; detached probes' ids are reused after a quarantine.
#include "probe/probe_table.h"

namespace eacgm::probe {

namespace {
// Periods an id waits between removal and reuse: removed during period p, it is free
// once period p + 2 begins, so at least one whole period lies between.
constexpr std::uint64_t kQuarantinePeriods = 2;
}  // namespace

std::shared_ptr<const ProbeInfo> ProbeTable::add(ProbeInfo info) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!free_.empty()) {
    info.id = free_.back();
    free_.pop_back();
    auto p = std::make_shared<const ProbeInfo>(std::move(info));
    probes_[p->id] = p;
    live_[p->id] = true;
    ++live_count_;
    // Readers see the new owner only after their next refresh.
    generation_.fetch_add(1, std::memory_order_acq_rel);
    return p;
  }
  info.id = static_cast<std::uint32_t>(probes_.size());
  auto p = std::make_shared<const ProbeInfo>(std::move(info));
  probes_.push_back(p);
  live_.push_back(true);
  ++live_count_;
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

std::vector<std::shared_ptr<const ProbeInfo>> ProbeTable::all(std::uint64_t& generation) const {
  std::lock_guard<std::mutex> lock(mutex_);
  generation = generation_.load(std::memory_order_acquire);
  return probes_;
}

std::size_t ProbeTable::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return probes_.size();
}

std::size_t ProbeTable::live() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_count_;
}

bool ProbeTable::is_live(std::uint32_t id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return id < live_.size() && live_[id];
}

void ProbeTable::remove(std::uint32_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (id >= live_.size() || !live_[id]) return;
  live_[id] = false;
  --live_count_;
  quarantine_.emplace_back(id, period_);
}

void ProbeTable::end_period() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++period_;
  while (!quarantine_.empty() && quarantine_.front().second + kQuarantinePeriods <= period_) {
    free_.push_back(quarantine_.front().first);
    quarantine_.pop_front();
  }
}

std::size_t ProbeTable::quarantined() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return quarantine_.size();
}

const std::shared_ptr<const ProbeInfo>& ProbeCache::refresh(std::uint32_t id) {
  cache_ = table_.all(generation_);
  if (id < cache_.size() && cache_[id]) return cache_[id];
  return none_;
}

}  // namespace eacgm::probe
