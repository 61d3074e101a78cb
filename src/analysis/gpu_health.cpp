// The rules that turn consecutive sampling passes into GPU health events
// (analysis/gpu_health.h).
#include "analysis/gpu_health.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <utility>

namespace eacgm::analysis {
namespace {

std::string key_of(const DeviceSample& d) { return d.uuid.empty() ? "#" + std::to_string(d.index) : d.uuid; }

// How far a counter rose since the previous pass; 0 when either is unknown or it fell
// (a driver reload resets the volatile counts).
template <typename T>
std::uint64_t rise(const std::optional<T>& before, const std::optional<T>& now) {
  if (!before || !now || *now <= *before) return 0;
  return static_cast<std::uint64_t>(*now - *before);
}

bool began(const std::optional<bool>& before, const std::optional<bool>& now) {
  return before.has_value() && now.value_or(false) && !*before;
}

// What the next pass is compared with: `now`, where a field it lacks (a read that failed
// this once) keeps its last value, so a rise across the gap is still seen.
void keep_known(DeviceSample& known, const DeviceSample& now) {
  DeviceSample next = now;
  auto keep = [&](auto... fields) { ((next.*fields = (next.*fields ? next.*fields : known.*fields)), ...); };
  using D = DeviceSample;
  keep(&D::xid_errors_total, &D::ecc_corrected_volatile_total, &D::ecc_uncorrected_volatile_total,
       &D::remapped_rows_correctable, &D::remapped_rows_uncorrectable, &D::remapped_rows_pending,
       &D::remapped_rows_failure, &D::clock_event_reasons, &D::pcie_replay_total);
  known = std::move(next);
}

}  // namespace

void GpuHealth::set_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns) {
  calls_.clear();
  comms_.clear();
  for (const InflightCall& c : calls) {
    auto& list = calls_[c.call.pid];
    comms_.try_emplace(c.call.pid, c.call.comm_view());
    if (list.size() >= kMaxCalls) continue;
    list.push_back(GpuEventCall{c.call.tid, std::string(c.call.domain()), std::string(c.call.function()),
                                c.call.ts_ns,
                                scan_mono_ns > c.entry_mono_ns ? scan_mono_ns - c.entry_mono_ns : 0});
  }
}

std::vector<GpuEventProcess> GpuHealth::processes_on(const DeviceSample& gpu, const GpuSnapshot& pass) const {
  std::vector<GpuEventProcess> out;
  for (const ProcessSample& p : pass.processes) {
    const bool here =
        gpu.uuid.empty() || p.gpu_uuid.empty() ? p.gpu_index == gpu.index : p.gpu_uuid == gpu.uuid;
    if (!here) continue;
    if (std::any_of(out.begin(), out.end(), [&](const GpuEventProcess& e) { return e.pid == p.pid; }))
      continue;
    GpuEventProcess e{p.pid, p.name, {}};
    if (auto c = calls_.find(p.pid); c != calls_.end()) e.calls = c->second;
    if (e.comm.empty()) {
      if (auto n = comms_.find(p.pid); n != comms_.end()) e.comm = n->second;
    }
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
  if (out.size() > kMaxProcesses) out.resize(kMaxProcesses);
  return out;
}

void GpuHealth::add(GpuHealthEvent event, const DeviceSample& gpu, const GpuSnapshot& pass) {
  event.ts_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(pass.time.time_since_epoch()).count());
  event.gpu = gpu.index;
  event.uuid = gpu.uuid;
  event.processes = processes_on(gpu, pass);
  GpuHealthCount& n = counts_[{gpu.index, event.kind}];
  n = GpuHealthCount{gpu.index, gpu.uuid, gpu.name, gpu.pci_bus_id, event.kind, n.events + event.count};
  ++total_;
  events_.push_back(std::move(event));
  if (events_.size() > kMaxEvents) {
    events_.pop_front();
    ++dropped_;
  }
  stale_ = true;
}

std::size_t GpuHealth::update(const GpuSnapshot& pass) {
  const std::uint64_t before = total_;
  for (const DeviceSample& d : pass.devices) {
    auto [at, first] = last_.try_emplace(key_of(d), d);
    DeviceSample& p = at->second;
    auto event = [&](std::string kind, std::string detail, std::uint64_t count = 1) {
      add(GpuHealthEvent{0, 0, {}, std::move(kind), std::move(detail), count, {}}, d, pass);
    };
    if (first) continue;
    if (d.lost || p.lost) {
      if (d.lost && !p.lost) event("gpu_lost", d.error.empty() ? "GPU lost" : "GPU lost: " + d.error);
      p = d;  // back from lost: its fields are the new baseline
      continue;
    }
    if (auto n = rise(p.xid_errors_total, d.xid_errors_total)) {
      event("xid", fmt::format("XID {}", d.last_xid.value_or(0)), n);
    }
    if (auto n = rise(p.ecc_uncorrected_volatile_total, d.ecc_uncorrected_volatile_total)) {
      event("ecc_uncorrected", fmt::format("ECC uncorrected +{}", n), n);
    }
    if (auto n = rise(p.ecc_corrected_volatile_total, d.ecc_corrected_volatile_total)) {
      event("ecc_corrected", fmt::format("ECC corrected +{}", n), n);
    }
    if (auto n = rise(p.remapped_rows_uncorrectable, d.remapped_rows_uncorrectable)) {
      event("remapped_rows", fmt::format("remapped rows (uncorrectable) +{}", n), n);
    }
    if (auto n = rise(p.remapped_rows_correctable, d.remapped_rows_correctable)) {
      event("remapped_rows", fmt::format("remapped rows (correctable) +{}", n), n);
    }
    if (began(p.remapped_rows_pending, d.remapped_rows_pending))
      event("remap_pending", "row remapping pending");
    if (began(p.remapped_rows_failure, d.remapped_rows_failure))
      event("remap_failure", "row remapping failed");
    if (p.clock_event_reasons && d.clock_event_reasons) {
      const std::uint64_t new_bits = *d.clock_event_reasons & ~*p.clock_event_reasons;
      for (const ClockEventReason& r : kClockEventReasons) {
        if (r.slowdown && (new_bits & r.bit)) event(r.name, fmt::format("{} began", r.name));
      }
    }
    if (auto n = rise(p.pcie_replay_total, d.pcie_replay_total)) {
      event("pcie_replay", fmt::format("PCIe replays +{}", n), n);
    }
    keep_known(p, d);
  }
  return static_cast<std::size_t>(total_ - before);
}

const GpuHealthSummary& GpuHealth::summary() const {
  if (stale_) {
    summary_.events.assign(events_.begin(), events_.end());
    summary_.total = total_;
    summary_.dropped = dropped_;
    summary_.counts.clear();
    for (const auto& [key, n] : counts_) summary_.counts.push_back(n);
    stale_ = false;
  }
  return summary_;
}

}  // namespace eacgm::analysis
