// GpuActivity: what the GPUs did while a trace ran, joined with the traced calls by
// process: per GPU (utilization, GPM activity, memory, power, energy, temperature, XID
// errors over the samples) and per traced process and GPU (memory, SM utilization,
// traced calls).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/exit_order.h"
#include "core/call_counts.h"
#include "core/call_event.h"
#include "core/gpu_sample.h"
#include "core/running_mean.h"

namespace eacgm::analysis {

struct DeviceActivityRow {
  unsigned index = 0;
  std::string name;
  std::string uuid;
  std::uint64_t samples = 0;  // passes in which the GPU answered
  std::uint64_t lost = 0;     // passes in which it was lost or failed
  std::optional<double> utilization_mean_percent;
  std::optional<std::uint32_t> utilization_max_percent;
  // NVML GPM's activities (ratios 0..1) over the samples that carried them: how much of
  // the GPU computed while utilization says only that a kernel ran. Absent without GPM.
  std::optional<double> sm_active_mean;
  std::optional<double> tensor_active_mean;
  std::optional<double> dram_active_mean;
  std::optional<std::uint64_t> memory_used_max_bytes;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<double> power_mean_watts;
  std::optional<double> power_max_watts;
  // Power integrated over the sampled window (trapezoids between passes); absent with
  // fewer than two power readings.
  std::optional<double> energy_joules;
  std::optional<std::uint32_t> temperature_max_celsius;
  // XID errors reported since sampling started (absent: the GPU reports no events).
  std::optional<std::uint64_t> xid_errors;
};

struct ProcessActivityRow {
  std::uint32_t pid = 0;
  std::string name;             // the traced thread's name, else NVML's process name
  std::optional<unsigned> gpu;  // absent: traced, but never seen on a GPU
  std::uint64_t calls = 0;      // traced calls of the process (all GPUs; nested left out)
  std::uint64_t errors = 0;
  std::uint64_t samples = 0;  // passes that listed the process on this GPU
  std::optional<std::uint64_t> memory_max_bytes;
  std::optional<double> sm_mean_percent;
  std::optional<std::uint32_t> sm_max_percent;
  // The first and last traced call (its entry, and its return when timed) or GPU sample
  // of the process, ns since the Unix epoch; 0 when never seen.
  std::uint64_t first_seen_ns = 0;
  std::uint64_t last_seen_ns = 0;
};

// Bounded in processes: at most `max_processes` held at once; a process found gone (by
// sweep) is kept as an exited row, and past `max_exited` such rows the one that exited
// first is let go (counted in exited_dropped).
class GpuActivity {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kMaxExited = 1024;
  explicit GpuActivity(std::size_t max_processes = 4096, std::size_t max_exited = kMaxExited)
      : max_processes_(max_processes), max_exited_(max_exited) {}
  // A copy (a published snapshot) starts without the last-process cache, which points
  // into the original.
  GpuActivity(const GpuActivity& o)
      : max_processes_(o.max_processes_),
        max_exited_(o.max_exited_),
        snapshots_(o.snapshots_),
        overflow_calls_(o.overflow_calls_),
        devices_(o.devices_),
        processes_(o.processes_),
        exits_(o.exits_) {}
  GpuActivity& operator=(const GpuActivity& o) {
    if (this != &o) *this = GpuActivity(o);
    return *this;
  }
  GpuActivity(GpuActivity&&) noexcept = default;  // map nodes keep their addresses
  GpuActivity& operator=(GpuActivity&&) noexcept = default;

  // Both on one thread (the output thread): calls as they are delivered, snapshots in
  // the order they were taken.
  void add(const CallEvent& event);
  // Calls counted in the kernel (always-on): counts only, no activity interval.
  void add(const CallCount& count);
  void add(const GpuSnapshot& snapshot);

  bool has_samples() const { return snapshots_ > 0; }
  std::uint64_t snapshots() const { return snapshots_; }
  // Rows by GPU index.
  std::vector<DeviceActivityRow> devices() const;
  // Rows by pid, then GPU (a process without GPU samples comes first for its pid).
  std::vector<ProcessActivityRow> processes() const;
  // Calls of processes beyond max_processes: counted here only.
  std::uint64_t overflow_calls() const { return overflow_calls_; }

  // Checks up to `max_checks` held processes (round robin across calls) with `is_alive`;
  // one gone for `grace` becomes an exited row, and the exited rows past max_exited are
  // let go, oldest exit first.
  void sweep(Clock::time_point now, const std::function<bool(std::uint32_t)>& is_alive,
             std::size_t max_checks, Clock::duration grace);
  std::size_t process_count() const { return processes_.size(); }
  std::size_t exited_count() const { return exits_.size(); }
  // Exited processes' rows let go to keep max_exited.
  std::uint64_t exited_dropped() const { return exits_.dropped(); }

 private:
  using Mean = RunningMean;
  template <typename T>
  static void keep_max(std::optional<T>& slot, const std::optional<T>& v) {
    if (v && (!slot || *v > *slot)) slot = v;
  }
  struct Device {
    DeviceActivityRow row;
    Mean utilization;
    Mean sm_active, tensor_active, dram_active;
    Mean power;
    std::optional<double> last_power_watts;
    std::optional<std::int64_t> last_power_ns;
    double energy = 0;
    bool has_energy = false;
    std::optional<std::uint64_t> xid_total;
  };
  struct OnGpu {
    std::uint64_t samples = 0;
    std::optional<std::uint64_t> memory_max;
    Mean sm;
    std::optional<std::uint32_t> sm_max;
    std::string nvml_name;
  };
  struct Process {
    std::string comm;
    std::uint64_t calls = 0;
    std::uint64_t errors = 0;
    std::map<unsigned, OnGpu> gpus;
    std::uint64_t first_seen_ns = 0;
    std::uint64_t last_seen_ns = 0;
    ExitMark exit;
    void seen(std::uint64_t from, std::uint64_t to) {
      if (first_seen_ns == 0 || from < first_seen_ns) first_seen_ns = from;
      if (to > last_seen_ns) last_seen_ns = to;
    }
  };
  Process* process(std::uint32_t pid);

  std::size_t max_processes_;
  std::size_t max_exited_;
  std::uint64_t snapshots_ = 0;
  std::uint64_t overflow_calls_ = 0;
  std::map<unsigned, Device> devices_;
  std::map<std::uint32_t, Process> processes_;
  ExitOrder exits_;
  std::uint32_t last_pid_ = 0;
  Process* last_process_ = nullptr;
};

}  // namespace eacgm::analysis
