// Runs the device and process samplers back to back and stamps the pass with its start
// time and the CPU time the sampling thread spent on it.
#include "sample/gpu_sampler.h"

#include "core/clock.h"

namespace eacgm::sample {

Result<std::unique_ptr<GpuSampler>> GpuSampler::open(const GpuSamplerOptions& options) {
  auto session = nvml::Session::open(options.nvml_library);
  if (!session) return std::move(session).take_error();
  return std::make_unique<GpuSampler>(std::move(*session), options);
}

GpuSampler::GpuSampler(const std::shared_ptr<const nvml::Session>& session, const GpuSamplerOptions& options)
    : session_(session), devices_(session, DeviceSamplerOptions{.gpm = options.gpm}) {
  if (options.processes) processes_ = std::make_unique<ProcessSampler>(session, options.interval);
}

GpuSnapshot GpuSampler::sample() {
  GpuSnapshot snap;
  snap.time = std::chrono::system_clock::now();
  const std::uint64_t cpu_start = thread_cpu_ns();
  snap.system = devices_.system();
  DevicePass d = devices_.sample();
  snap.devices = std::move(d.devices);
  snap.errors = std::move(d.errors);
  if (processes_) {
    ProcessPass p = processes_->sample();
    snap.processes = std::move(p.processes);
    snap.errors.insert(snap.errors.end(), p.errors.begin(), p.errors.end());
  }
  snap.pass_cpu_time = std::chrono::nanoseconds(thread_cpu_ns() - cpu_start);
  return snap;
}

}  // namespace eacgm::sample
