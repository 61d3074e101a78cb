// Device-wide metrics for every GPU, one NVML query per field, so that a field the GPU
// does not support is absent for that GPU only. Also counts XID errors via NVML events.
#pragma once

#include <bitset>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "sample/gpu_sample.h"
#include "sample/nvml_api.h"

namespace eacgm {

struct DeviceSamplerOptions {
  // Fields whose NVML read is expensive (total energy: 3-14 ms of CPU per read on an
  // H100; PCIe replay counter: 0.2-0.5 ms) are read at most this often and reported
  // from the last read in between. Zero: every pass.
  std::chrono::nanoseconds slow_field_period = std::chrono::seconds(10);
};

struct DevicePass {
  std::vector<DeviceSample> devices;
  std::vector<std::string> errors;  // failures not tied to one GPU field
};

// Not thread-safe: one sampling thread calls sample(). Construction queries the static
// identity of each GPU and registers for XID events; it cannot fail (what it cannot get
// is reported as absent).
class DeviceSampler {
 public:
  explicit DeviceSampler(std::shared_ptr<const nvml::Session> session, DeviceSamplerOptions options = {});
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
    // Queries that answered "not supported" once are not asked again: support does not
    // change while the driver is loaded, and some (fan speed) cost 0.2 ms to refuse.
    std::bitset<32> unsupported;
    // Slow fields, last read.
    std::chrono::steady_clock::time_point next_slow_read{};
    std::optional<std::uint64_t> energy_millijoules;
    std::optional<std::uint32_t> pcie_replay;
    // PCIe byte counters of the previous pass, for a rate over the whole interval.
    std::optional<std::uint64_t> pcie_tx_bytes, pcie_rx_bytes;
    std::chrono::steady_clock::time_point pcie_read_at{};
  };
  void poll_events(std::vector<std::string>& errors);
  void sample_gpu(Gpu& gpu, DeviceSample& out);

  std::shared_ptr<const nvml::Session> session_;
  DeviceSamplerOptions options_;
  GpuSystemInfo system_;
  std::vector<Gpu> gpus_;
  nvml::EventSet events_ = nullptr;
};

}  // namespace eacgm
