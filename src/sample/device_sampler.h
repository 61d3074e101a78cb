// Device-wide metrics for every GPU, one NVML query per field, so that a field the GPU
// does not support is absent for that GPU only. Also counts XID errors via NVML events.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sample/gpu_sample.h"
#include "sample/nvml_api.h"

namespace eacgm {

struct DevicePass {
  std::vector<DeviceSample> devices;
  std::vector<std::string> errors;  // failures not tied to one GPU field
};

// Not thread-safe: one sampling thread calls sample(). Construction queries the static
// identity of each GPU and registers for XID events; it cannot fail (what it cannot get
// is reported as absent).
class DeviceSampler {
 public:
  explicit DeviceSampler(std::shared_ptr<const nvml::Session> session);
  ~DeviceSampler();
  DeviceSampler(const DeviceSampler&) = delete;
  DeviceSampler& operator=(const DeviceSampler&) = delete;

  const GpuSystemInfo& system() const { return system_; }
  DevicePass sample();

 private:
  struct Gpu {
    nvml::Device handle = nullptr;
    DeviceSample identity;  // index, name, uuid, bus id; error when the handle failed
    bool xid_registered = false;
    std::uint64_t xid_total = 0;
    std::optional<std::uint64_t> last_xid;
  };
  void poll_events(std::vector<std::string>& errors);
  void sample_gpu(const Gpu& gpu, DeviceSample& out) const;

  std::shared_ptr<const nvml::Session> session_;
  GpuSystemInfo system_;
  std::vector<Gpu> gpus_;
  nvml::EventSet events_ = nullptr;
};

}  // namespace eacgm
