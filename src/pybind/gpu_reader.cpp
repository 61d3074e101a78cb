#include "pybind/gpu_reader.h"

namespace eacgm::pybind {

Result<std::unique_ptr<GpuReader>> GpuReader::open(std::chrono::microseconds first_window,
                                                   const std::string& nvml_library) {
  auto session = sample::nvml::Session::open(nvml_library);
  if (!session) return std::move(session).take_error();
  std::unique_ptr<GpuReader> reader(new GpuReader());
  reader->session_ = *session;
  reader->devices_ = std::make_unique<sample::DeviceSampler>(
      reader->session_,
      sample::DeviceSamplerOptions{.slow_field_period = std::chrono::nanoseconds::zero(), .gpm_wait = false});
  reader->processes_ = std::make_unique<sample::ProcessSampler>(reader->session_, first_window);
  return reader;
}

}  // namespace eacgm::pybind
