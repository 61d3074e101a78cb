// Plain value types for what NVML reports: one DeviceSample per GPU, one ProcessSample
// per (process, GPU), grouped in a GpuSnapshot per sampling pass. No handles, no NVML.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace eacgm {

// One NVLink's traffic over the interval, from GPM.
struct NvlinkRate {
  unsigned link = 0;
  double tx_bytes_per_second = 0;
  double rx_bytes_per_second = 0;
};

// The GPU's profiling counters (NVML GPM, Hopper and newer) averaged over the interval
// since the previous pass: what the SMs, tensor cores and memory actually did, where
// "utilization" only says a kernel was running. Activities are ratios 0..1 (dcgm-exporter's
// DCGM_FI_PROF_* units); each is absent where the GPU lacks that unit.
struct GpmCounters {
  double interval_seconds = 0;  // between the two samples
  std::optional<double> graphics_active;
  std::optional<double> sm_active;
  std::optional<double> sm_occupancy;
  std::optional<double> tensor_active;  // any tensor operation
  std::optional<double> tensor_hmma_active;
  std::optional<double> tensor_imma_active;
  std::optional<double> tensor_dfma_active;
  std::optional<double> fp16_active;  // non-tensor pipes
  std::optional<double> fp32_active;
  std::optional<double> fp64_active;
  std::optional<double> integer_active;
  std::optional<double> dram_active;  // DRAM bandwidth used over the peak
  std::optional<double> pcie_tx_bytes_per_second;
  std::optional<double> pcie_rx_bytes_per_second;
  std::optional<double> nvlink_tx_bytes_per_second;  // all links
  std::optional<double> nvlink_rx_bytes_per_second;
  std::vector<NvlinkRate> nvlinks;  // links that carry traffic counters
};

// One MIG GPU instance's profiling counters: with MIG on, GPM gives none for the whole GPU,
// only per GPU instance (its compute instances together).
struct GpmInstanceCounters {
  unsigned gpu_instance_id = 0;  // NVML's GPU instance id, dcgm-exporter's GPU_I_ID
  std::string profile;           // "1g.10gb" (GPU_I_PROFILE); empty when NVML does not say
  GpmCounters counters;
};

// Every metric is optional: a GPU that does not support a field reports it as absent
// without losing the others. Units are NVML's own where they are exact integers.
struct DeviceSample {
  unsigned index = 0;
  std::string name;
  std::string uuid;
  std::string pci_bus_id;  // "00000000:19:00.0"

  // Set when the GPU fell off the bus (or needs a reset): the metrics below are absent
  // and `error` says why.
  bool lost = false;
  std::string error;
  // Unexpected per-field NVML failures ("nvmlDeviceGetFanSpeed: Unknown Error"); fields
  // that are merely unsupported are absent without a message.
  std::vector<std::string> field_errors;

  std::optional<std::uint32_t> utilization_gpu_percent;
  std::optional<std::uint32_t> utilization_memory_percent;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<std::uint64_t> memory_used_bytes;
  std::optional<std::uint64_t> memory_free_bytes;
  std::optional<std::uint64_t> memory_reserved_bytes;
  std::optional<std::uint32_t> temperature_gpu_celsius;
  std::optional<std::uint32_t> temperature_memory_celsius;
  std::optional<std::uint32_t> power_usage_milliwatts;
  std::optional<std::uint32_t> power_limit_milliwatts;
  std::optional<std::uint64_t> energy_total_millijoules;  // since the driver loaded
  std::optional<std::uint32_t> clock_sm_mhz;
  std::optional<std::uint32_t> clock_memory_mhz;
  std::optional<std::uint32_t> fan_speed_percent;
  std::optional<std::uint32_t> encoder_utilization_percent;
  std::optional<std::uint32_t> decoder_utilization_percent;
  std::optional<std::uint64_t> pcie_tx_bytes_per_second;
  std::optional<std::uint64_t> pcie_rx_bytes_per_second;
  std::optional<std::uint32_t> pcie_replay_total;
  std::optional<std::uint64_t> nvlink_tx_bytes_total;  // data payload, all links
  std::optional<std::uint64_t> nvlink_rx_bytes_total;
  std::optional<std::uint64_t> ecc_corrected_volatile_total;
  std::optional<std::uint64_t> ecc_uncorrected_volatile_total;
  std::optional<std::uint32_t> remapped_rows_correctable;
  std::optional<std::uint32_t> remapped_rows_uncorrectable;
  std::optional<bool> remapped_rows_pending;
  std::optional<bool> remapped_rows_failure;
  std::optional<std::uint64_t> clock_event_reasons;  // nvmlClocksEventReason* bit mask
  // XID critical errors seen since the sampler started (absent: events unsupported).
  std::optional<std::uint64_t> xid_errors_total;
  std::optional<std::uint64_t> last_xid;
  // Whether the GPU has GPM profiling counters (constant for the session), and their
  // values over the last interval (absent on the first pass: GPM needs two samples).
  bool gpm_supported = false;
  std::optional<GpmCounters> gpm;
  // MIG mode on a GPU with GPM: `gpm` stays absent and each GPU instance's counters over the
  // interval are here, by instance id (an instance without GPM is left out, said once in
  // field_errors).
  bool gpm_mig = false;
  std::vector<GpmInstanceCounters> gpm_instances;
};

struct ProcessSample {
  std::uint32_t pid = 0;
  unsigned gpu_index = 0;
  std::string gpu_uuid;
  std::string name;          // empty when unknown
  std::string container_id;  // 64-hex id from /proc/<pid>/cgroup, empty when none
  bool compute = false;      // has a compute (CUDA) context on this GPU
  bool graphics = false;     // has a graphics context on this GPU
  std::optional<std::uint64_t> used_memory_bytes;
  // Over the last interval; absent when the GPU cannot report per-process utilization.
  std::optional<std::uint32_t> sm_utilization_percent;
  std::optional<std::uint32_t> memory_utilization_percent;
  std::optional<std::uint32_t> encoder_utilization_percent;
  std::optional<std::uint32_t> decoder_utilization_percent;
};

// Constant for the life of an NVML session.
struct GpuSystemInfo {
  std::string driver_version;              // "550.54.15", empty when unknown
  std::optional<int> cuda_driver_version;  // 12040 means CUDA 12.4
  bool gpm_off = false;                    // GPM's counters turned off ([gpu] profiling = false)
};

struct GpuSnapshot {
  std::uint64_t sequence = 0;                  // pass number, from 0
  std::chrono::system_clock::time_point time;  // when the pass started
  std::chrono::nanoseconds pass_cpu_time{0};   // CPU spent by the sampling thread
  GpuSystemInfo system;
  std::vector<DeviceSample> devices;
  std::vector<ProcessSample> processes;  // empty unless process sampling is on
  // Failures not tied to one field ("GPU 1: process list: GPU is lost").
  std::vector<std::string> errors;
};

// nvml.h's nvmlClocksEventReason* (nvmlClocksThrottleReason*) bits and their names;
// `slowdown`: the clocks held back by a limit, not by the GPU being idle or set so.
struct ClockEventReason {
  std::uint64_t bit;
  const char* name;
  bool slowdown;
};
inline constexpr ClockEventReason kClockEventReasons[] = {
    {0x1, "gpu_idle", false},
    {0x2, "applications_clocks_setting", false},
    {0x4, "sw_power_cap", true},
    {0x8, "hw_slowdown", true},
    {0x10, "sync_boost", false},
    {0x20, "sw_thermal_slowdown", true},
    {0x40, "hw_thermal_slowdown", true},
    {0x80, "hw_power_brake_slowdown", true},
    {0x100, "display_clock_setting", false},
};

// "12.4" from NVML's 12040.
inline std::string format_cuda_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace eacgm
