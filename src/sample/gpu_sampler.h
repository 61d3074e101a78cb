// One sampling pass over the GPUs: device metrics, optionally per-process metrics, and
// the CPU the pass itself cost (the sampler's share of eacgm's overhead budget).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/gpu_sample.h"
#include "core/result.h"
#include "sample/device_sampler.h"
#include "sample/nvml_api.h"
#include "sample/process_sampler.h"

namespace eacgm::sample {

struct GpuSamplerOptions {
  bool processes = false;  // also run the process sampler each pass
  // Length of the utilization window of the first pass; later passes cover the time
  // since the previous one.
  std::chrono::microseconds interval = std::chrono::seconds(1);
  std::string nvml_library;  // $EACGM_NVML_LIBRARY; empty: the driver's (nvml::Session::open)
  bool gpm = true;           // read GPM's profiling counters ([gpu] profiling)
};

class GpuSampler {
 public:
  // Loads and initialises NVML (see nvml::Session::open for the errors).
  static Result<std::unique_ptr<GpuSampler>> open(const GpuSamplerOptions& options);
  GpuSampler(const std::shared_ptr<const nvml::Session>& session, const GpuSamplerOptions& options);

  GpuSnapshot sample();
  const GpuSystemInfo& system() const { return devices_.system(); }
  std::size_t device_count() const { return session_->devices().size(); }
  std::size_t gpm_count() const { return devices_.gpm_count(); }
  // The device sampler's reads of the expensive fields, off the passes: not in any
  // snapshot's pass_cpu_time (see DeviceSampler).
  std::chrono::nanoseconds slow_read_cpu_time() const { return devices_.slow_read_cpu_time(); }
  std::uint64_t slow_read_rounds() const { return devices_.slow_read_rounds(); }

 private:
  std::shared_ptr<const nvml::Session> session_;
  DeviceSampler devices_;
  std::unique_ptr<ProcessSampler> processes_;
};

}  // namespace eacgm::sample
