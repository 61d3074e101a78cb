// GpuReader: the NVML samplers of the original API (GPUSampler, NVMLSampler) over the
// agent's own sample layer: one NVML session, a device pass and a process pass on demand.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "core/result.h"
#include "sample/device_sampler.h"
#include "sample/nvml_api.h"
#include "sample/process_sampler.h"

namespace eacgm::pybind {

class GpuReader {
 public:
  // Fails (one sentence) when NVML cannot be loaded or initialised. `nvml_library`: the
  // value of $EACGM_NVML_LIBRARY ("": the driver's).
  static Result<std::unique_ptr<GpuReader>> open(std::chrono::microseconds first_window,
                                                 const std::string& nvml_library);

  sample::DevicePass devices() { return devices_->sample(); }
  sample::ProcessPass processes() { return processes_->sample(); }

 private:
  GpuReader() = default;
  std::shared_ptr<const sample::nvml::Session> session_;
  std::unique_ptr<sample::DeviceSampler> devices_;
  std::unique_ptr<sample::ProcessSampler> processes_;
};

}  // namespace eacgm::pybind
