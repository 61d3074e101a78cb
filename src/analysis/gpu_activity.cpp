// Folds GPU snapshots and traced calls into per-GPU and per-process totals.
#include "analysis/gpu_activity.h"

#include <chrono>

namespace eacgm::analysis {

GpuActivity::Process* GpuActivity::process(std::uint32_t pid) {
  if (pid == last_pid_ && last_process_ != nullptr && last_process_->exit.seq == 0) return last_process_;
  auto it = processes_.find(pid);
  if (it == processes_.end()) {
    if (processes_.size() >= max_processes_) return nullptr;
    it = processes_.emplace(pid, Process{}).first;
  } else if (it->second.exit.seq != 0) {
    it->second = Process{};  // a new process under an exited one's pid: its exit in exits_ goes stale
  }
  last_pid_ = pid;
  last_process_ = &it->second;  // std::map nodes do not move
  return last_process_;
}

void GpuActivity::add(const CallEvent& event) {
  Process* p = process(event.pid);
  if (p == nullptr) {
    // As the row would have counted it: a tallied call overflows with its probe's count.
    if (!event.nested && !event.tallied) ++overflow_calls_;
    return;
  }
  if (p->comm.empty()) p->comm = std::string(event.comm_view());
  if (event.ts_ns != 0) p->seen(event.ts_ns, event.ts_ns + event.dur_ns);
  if (event.nested) return;
  if (!event.tallied) ++p->calls;  // a tallied call is in its probe's CallCount
  if (event.is_error()) ++p->errors;
}

void GpuActivity::add(const CallCount& count) {
  Process* p = process(count.pid);
  if (p == nullptr) {
    overflow_calls_ += count.calls;
    return;
  }
  p->calls += count.calls;
}

void GpuActivity::add(const GpuSnapshot& snapshot) {
  ++snapshots_;
  const std::int64_t now_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(snapshot.time.time_since_epoch()).count();
  for (const DeviceSample& d : snapshot.devices) {
    Device& dev = devices_[d.index];
    DeviceActivityRow& row = dev.row;
    row.index = d.index;
    if (!d.name.empty()) row.name = d.name;
    if (!d.uuid.empty()) row.uuid = d.uuid;
    if (d.lost || !d.error.empty()) {
      ++row.lost;
      continue;
    }
    ++row.samples;
    if (d.utilization_gpu_percent) dev.utilization.add(*d.utilization_gpu_percent);
    keep_max(row.utilization_max_percent, d.utilization_gpu_percent);
    if (d.gpm) {
      if (d.gpm->sm_active) dev.sm_active.add(*d.gpm->sm_active);
      if (d.gpm->tensor_active) dev.tensor_active.add(*d.gpm->tensor_active);
      if (d.gpm->dram_active) dev.dram_active.add(*d.gpm->dram_active);
    }
    keep_max(row.memory_used_max_bytes, d.memory_used_bytes);
    if (d.memory_total_bytes) row.memory_total_bytes = d.memory_total_bytes;
    keep_max(row.temperature_max_celsius, d.temperature_gpu_celsius);
    if (d.power_usage_milliwatts) {
      const double watts = *d.power_usage_milliwatts / 1000.0;
      dev.power.add(watts);
      keep_max(row.power_max_watts, std::optional<double>(watts));
      if (dev.last_power_watts && now_ns > *dev.last_power_ns) {
        dev.energy +=
            (watts + *dev.last_power_watts) / 2 * static_cast<double>(now_ns - *dev.last_power_ns) / 1e9;
        dev.has_energy = true;
      }
      dev.last_power_watts = watts;
      dev.last_power_ns = now_ns;
    }
    if (d.xid_errors_total) dev.xid_total = d.xid_errors_total;
  }
  for (const ProcessSample& s : snapshot.processes) {
    Process* p = process(s.pid);
    if (p == nullptr) continue;
    if (now_ns > 0) p->seen(static_cast<std::uint64_t>(now_ns), static_cast<std::uint64_t>(now_ns));
    OnGpu& g = p->gpus[s.gpu_index];
    ++g.samples;
    if (!s.name.empty()) g.nvml_name = s.name;
    keep_max(g.memory_max, s.used_memory_bytes);
    if (s.sm_utilization_percent) g.sm.add(*s.sm_utilization_percent);
    keep_max(g.sm_max, s.sm_utilization_percent);
  }
}

void GpuActivity::sweep(Clock::time_point now, const std::function<bool(std::uint32_t)>& is_alive,
                        std::size_t max_checks, Clock::duration grace) {
  exits_.sweep(processes_, now, is_alive, max_checks, grace, max_exited_, [this](auto found) {
    if (last_process_ == &found->second) last_process_ = nullptr;
    processes_.erase(found);
  });
}

std::vector<DeviceActivityRow> GpuActivity::devices() const {
  std::vector<DeviceActivityRow> rows;
  for (const auto& [index, dev] : devices_) {
    DeviceActivityRow row = dev.row;
    row.utilization_mean_percent = dev.utilization.value();
    row.sm_active_mean = dev.sm_active.value();
    row.tensor_active_mean = dev.tensor_active.value();
    row.dram_active_mean = dev.dram_active.value();
    row.power_mean_watts = dev.power.value();
    if (dev.has_energy) row.energy_joules = dev.energy;
    row.xid_errors = dev.xid_total;  // the sampler counts from its own start
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<ProcessActivityRow> GpuActivity::processes() const {
  std::vector<ProcessActivityRow> rows;
  for (const auto& [pid, p] : processes_) {
    ProcessActivityRow base;
    base.pid = pid;
    base.name = p.comm;
    base.calls = p.calls;
    base.errors = p.errors;
    base.first_seen_ns = p.first_seen_ns;
    base.last_seen_ns = p.last_seen_ns;
    if (p.gpus.empty()) {
      rows.push_back(base);
      continue;
    }
    for (const auto& [gpu, g] : p.gpus) {
      ProcessActivityRow row = base;
      if (row.name.empty()) row.name = g.nvml_name;
      row.gpu = gpu;
      row.samples = g.samples;
      row.memory_max_bytes = g.memory_max;
      row.sm_mean_percent = g.sm.value();
      row.sm_max_percent = g.sm_max;
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace eacgm::analysis
