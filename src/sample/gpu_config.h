// [gpu]: how often NVML is sampled, and whether `trace` and `run` sample beside the trace.
#pragma once

namespace eacgm {
class ConfigSections;
}  // namespace eacgm

namespace eacgm::sample {

struct GpuConfig {
  double interval_s = 1.0;  // NVML sampling period
  // `trace` and `run` also sample the GPUs (device-wide, and the traced processes);
  // without NVML they trace on with a notice.
  bool sample = true;
  // Read the GPUs' profiling counters through NVML GPM (Hopper and newer): SM, tensor and
  // DRAM activity. Off where another profiler must have the counters to itself.
  bool profiling = true;
};

// Adds [gpu] to the file's sections, read into `gpu`.
void add_gpu_section(ConfigSections& sections, GpuConfig& gpu);

}  // namespace eacgm::sample
