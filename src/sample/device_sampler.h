// Device-wide metrics for every GPU, one NVML query per field, so that a field the GPU
// does not support is absent for that GPU only. Also counts XID errors via NVML events.
//
// Two fields cost far more than a pass may spend: total energy (3-14 ms of CPU per read
// on an H100, the driver busy-waits) and the PCIe replay counter (0.2-0.5 ms). They are
// read off the pass, in rounds over every GPU. The constructor runs the first round
// itself, so that the first pass (and a one-shot `eacgm gpu`) has them whatever the
// hardware's speed; construction costs one round for that. A thread of the sampler's
// own then runs a round every slow_field_period. A pass copies the latest values and
// never waits for a round in progress; an unexpected failure of a round reaches the
// next pass's field_errors.
#pragma once

#include <atomic>
#include <bitset>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/gpu_sample.h"
#include "sample/gpm_reader.h"
#include "sample/nvml_api.h"

namespace eacgm::sample {

struct DeviceSamplerOptions {
  // Time between rounds of the expensive reads (total energy, PCIe replay counter) on
  // the sampler's own thread; a pass reports each field's latest successful read. Zero
  // (or less): no thread, every pass reads them itself.
  std::chrono::nanoseconds slow_field_period = std::chrono::seconds(10);
  // Read GPM's profiling counters on the GPUs that have them ([gpu] profiling).
  bool gpm = true;
  // A pass sooner than GpmReader::kMinInterval after the previous GPM sample waits for it
  // (true) or leaves that pass without GPM counters (false: for callers that must not block).
  bool gpm_wait = true;
};

struct DevicePass {
  std::vector<DeviceSample> devices;
  std::vector<std::string> errors;  // failures not tied to one GPU field
};

// sample() is not thread-safe: one sampling thread calls it. Construction queries the
// static identity of each GPU, registers for XID events, reads the slow fields once and
// starts the slow-field thread (with every signal blocked, so that it never takes one
// meant for the program); it cannot fail (what it cannot get is reported as absent). The
// destructor stops that thread, waiting at most for the one NVML read in progress.
class DeviceSampler {
 public:
  explicit DeviceSampler(std::shared_ptr<const nvml::Session> session, DeviceSamplerOptions options = {});
  ~DeviceSampler();
  DeviceSampler(const DeviceSampler&) = delete;
  DeviceSampler& operator=(const DeviceSampler&) = delete;

  const GpuSystemInfo& system() const { return system_; }
  // How many GPUs have their GPM counters read (0 when turned off).
  std::size_t gpm_count() const;
  DevicePass sample();

  // CPU spent on slow-field rounds outside the passes (the constructor's and the
  // thread's), and how many rounds have completed. Both stay zero when
  // slow_field_period is zero: the reads are then part of each pass's own CPU time.
  // Safe to call from any thread.
  std::chrono::nanoseconds slow_read_cpu_time() const {
    return std::chrono::nanoseconds(slow_cpu_ns_.load(std::memory_order_relaxed));
  }
  std::uint64_t slow_read_rounds() const { return slow_rounds_.load(std::memory_order_relaxed); }

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
    // PCIe byte counters of the previous pass, for a rate over the whole interval.
    std::optional<std::uint64_t> pcie_tx_bytes, pcie_rx_bytes;
    std::chrono::steady_clock::time_point pcie_read_at{};
  };
  // One GPU's slow fields (latest successful reads), shared by the round and the
  // passes under slow_mu_.
  struct SlowFields {
    std::optional<std::uint64_t> energy_millijoules;
    std::optional<std::uint32_t> pcie_replay;
    // Unexpected failures of a round ("nvmlDeviceGetTotalEnergyConsumption: Unknown
    // Error"), handed to the next pass's field_errors.
    std::vector<std::string> errors;
  };
  // What only the reader of the slow fields touches (the slow thread; the pass thread
  // when slow_field_period is zero).
  struct SlowReader {
    std::bitset<32> unsupported;  // as Gpu::unsupported, for the slow queries
    bool lost = false;            // the GPU fell off the bus: not read again
  };

  void poll_events(std::vector<std::string>& errors);
  void sample_gpu(std::size_t i, DeviceSample& out);

  bool slow_inline() const { return options_.slow_field_period <= std::chrono::nanoseconds::zero(); }
  void read_slow_gpu(std::size_t i, DeviceSample& status);
  void slow_round();
  void slow_loop();
  void start_slow_thread();
  void stop_slow_thread();
  void take_slow_fields(std::size_t i, DeviceSample& out);

  std::shared_ptr<const nvml::Session> session_;
  DeviceSamplerOptions options_;
  GpuSystemInfo system_;
  std::vector<Gpu> gpus_;
  std::unique_ptr<GpmReader> gpm_;
  nvml::EventSet events_ = nullptr;

  std::vector<SlowReader> slow_readers_;  // by GPU index
  std::mutex slow_mu_;
  std::condition_variable slow_cv_;
  std::vector<SlowFields> slow_fields_;  // by GPU index, guarded by slow_mu_
  std::atomic<bool> slow_stop_{false};   // set under slow_mu_, read anywhere
  std::atomic<std::int64_t> slow_cpu_ns_{0};
  std::atomic<std::uint64_t> slow_rounds_{0};
  std::thread slow_thread_;
};

}  // namespace eacgm::sample
