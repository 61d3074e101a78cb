// Per-second rollups in a chunked ring shared copy-on-write with published views.
#include "analysis/rollup_series.h"

#include <algorithm>
#include <chrono>
#include <limits>

namespace eacgm::analysis {

namespace {

void add_activity(RollupGpu& g, RollupActivity a, const std::optional<double>& ratio) {
  const auto i = static_cast<std::size_t>(a);
  if (!ratio || g.activity_samples[i] == std::numeric_limits<std::uint16_t>::max()) return;
  g.activity_sum[i] += static_cast<float>(*ratio);
  ++g.activity_samples[i];
}

}  // namespace

std::optional<double> RollupGpu::activity(RollupActivity a) const {
  const auto i = static_cast<std::size_t>(a);
  if (activity_samples[i] == 0) return std::nullopt;
  return static_cast<double>(activity_sum[i]) / activity_samples[i];
}

RollupSeries::RollupSeries() {
  for (auto& c : chunks_) c = std::make_shared<RollupView::Chunk>();
}

RollupPoint* RollupSeries::point(std::int64_t t) {
  if (t < 0) return nullptr;
  const auto span = static_cast<std::int64_t>(RollupView::kSeconds);
  if (latest_ >= 0 && t <= latest_ - span) return nullptr;
  latest_ = std::max(latest_, t);
  const auto slot = static_cast<std::size_t>(t % span);
  const std::size_t c = slot / RollupView::kChunkSeconds;
  if (shared_[c]) {
    chunks_[c] = std::make_shared<RollupView::Chunk>(*chunks_[c]);
    shared_[c] = false;
  }
  RollupPoint& p = (*chunks_[c])[slot % RollupView::kChunkSeconds];
  if (p.t != t) p = RollupPoint{t};
  return &p;
}

std::size_t RollupSeries::domain_index(std::string_view domain) {
  for (std::size_t i = 0; i < domains_.size(); ++i) {
    if (domains_[i] == domain) return i;
  }
  if (domains_.size() + 1 < RollupPoint::kMaxDomains) {
    domains_.emplace_back(domain);
    return domains_.size() - 1;
  }
  if (domains_.size() + 1 == RollupPoint::kMaxDomains) domains_.emplace_back("other");
  return RollupPoint::kMaxDomains - 1;
}

void RollupSeries::add(const CallEvent& event) {
  if (event.nested) return;
  RollupPoint* p = point(static_cast<std::int64_t>(event.ts_ns / 1'000'000'000));
  if (p == nullptr) return;
  if (event.is_error()) ++p->errors;
  if (event.tallied) return;  // counted by its probe's CallCount
  ++p->calls;
  if (event.probe.get() != last_probe_ || last_probe_ == nullptr) {
    last_domain_ = domain_index(event.domain());
    last_probe_ = event.probe.get();
  }
  ++p->domains[last_domain_];
}

void RollupSeries::add(const CallCount& count, std::int64_t unix_s) {
  RollupPoint* p = point(unix_s);
  if (p == nullptr || count.probe == nullptr) return;
  p->calls += count.calls;
  p->domains[domain_index(count.probe->spec.domain)] += count.calls;
}

void RollupSeries::add(const GpuSnapshot& snapshot) {
  const std::int64_t t =
      std::chrono::duration_cast<std::chrono::seconds>(snapshot.time.time_since_epoch()).count();
  RollupPoint* p = point(t);
  if (p == nullptr) return;
  for (const DeviceSample& d : snapshot.devices) {
    if (d.lost || !d.error.empty()) continue;
    RollupGpu* g = nullptr;
    for (std::size_t i = 0; i < p->gpu_count; ++i) {
      if (p->gpus[i].index == d.index) g = &p->gpus[i];
    }
    if (g == nullptr) {
      if (p->gpu_count >= RollupPoint::kMaxGpus) continue;
      g = &p->gpus[p->gpu_count++];
      g->index = d.index;
    }
    if (d.utilization_gpu_percent) {
      g->util_sum += *d.utilization_gpu_percent;
      ++g->util_samples;
    }
    if (d.gpm) {
      add_activity(*g, RollupActivity::kSm, d.gpm->sm_active);
      add_activity(*g, RollupActivity::kTensor, d.gpm->tensor_active);
      add_activity(*g, RollupActivity::kDram, d.gpm->dram_active);
    }
    if (d.memory_used_bytes) {
      g->has_memory = true;
      g->memory_used_bytes = *d.memory_used_bytes;
    }
  }
}

RollupView RollupSeries::view() {
  RollupView v;
  for (std::size_t i = 0; i < chunks_.size(); ++i) {
    v.chunks_[i] = chunks_[i];
    shared_[i] = true;
  }
  v.domains_ = domains_;
  v.latest_ = latest_;
  return v;
}

std::vector<RollupPoint> RollupView::points(std::int64_t end, std::size_t window) const {
  std::vector<RollupPoint> out;
  window = std::min(window, kSeconds);
  const auto span = static_cast<std::int64_t>(kSeconds);
  for (std::int64_t t = end - static_cast<std::int64_t>(window) + 1; t <= end; ++t) {
    if (t < 0) continue;
    const auto slot = static_cast<std::size_t>(t % span);
    const auto& chunk = chunks_[slot / kChunkSeconds];
    if (!chunk) continue;
    const RollupPoint& p = (*chunk)[slot % kChunkSeconds];
    if (p.t == t) out.push_back(p);
  }
  return out;
}

}  // namespace eacgm::analysis
