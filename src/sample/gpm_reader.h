// NVML GPM's profiling counters per GPU (SM, tensor and pipe activity, DRAM bandwidth,
// PCIe and NVLink traffic): each read takes a sample and turns the difference from the
// previous one into the interval's averages, so a pass reports what the GPU did since
// the pass before.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "core/gpu_sample.h"
#include "sample/nvml_api.h"

namespace eacgm::sample {

// What one read gave: the counters, or the NVML call that failed and its code (the
// caller classifies it as absent, lost or an error).
struct GpmRead {
  std::optional<GpmCounters> counters;
  nvml::Return status = nvml::kSuccess;
  const char* call = "";
};

// Not thread-safe: the sampling thread alone reads. Construction asks each GPU whether it
// has GPM and, for those that do, allocates two sample buffers and takes the first
// sample; it cannot fail (a GPU whose support query or allocation fails is unsupported).
class GpmReader {
 public:
  // `wait`: a read closer than kMinInterval to the previous sample waits for the rest;
  // without it, such a read reports nothing and the next one covers the longer interval.
  GpmReader(std::shared_ptr<const nvml::Session> session, const std::vector<nvml::Device>& devices,
            bool wait = true);
  ~GpmReader();
  GpmReader(const GpmReader&) = delete;
  GpmReader& operator=(const GpmReader&) = delete;

  bool supported(std::size_t gpu) const { return gpu < gpus_.size() && gpus_[gpu].samples[0] != nullptr; }
  // The counters since the previous read of this GPU (since construction, for the first).
  // Two samples closer than kMinInterval give noisy averages: the first read waits for the
  // rest of it (once, at start; passes are further apart), or reports nothing (no `wait`).
  GpmRead read(std::size_t gpu);

  static constexpr std::chrono::milliseconds kMinInterval{100};
  // Graphics engine activity is asked for every kGraphicsEvery-th read of a GPU, and the
  // reads between carry its last value: on H100 and H200 nvmlGpmMetricsGet spends 1.7 ms
  // of CPU on that one metric and about 0.1 ms on all the others together
  // (bench/gpu/gpm_call_cost.py --each).
  static constexpr unsigned kGraphicsEvery = 10;

 private:
  struct Gpu {
    nvml::Device handle = nullptr;
    nvml::GpmSample samples[2] = {nullptr, nullptr};
    int latest = -1;  // which of samples holds the previous sample; -1: none yet
    std::chrono::steady_clock::time_point taken_at{};
    unsigned reads = 0;                     // reads that gave counters
    std::optional<double> graphics_active;  // its last read value
  };
  nvml::Return take(Gpu& g, int slot);

  std::shared_ptr<const nvml::Session> session_;
  std::vector<Gpu> gpus_;
  bool wait_ = true;
};

// The metric ids a read asks for, in order (exposed for tests of the fake library), and
// those of the reads between two of graphics engine activity.
const std::vector<unsigned>& gpm_metric_ids();
const std::vector<unsigned>& gpm_metric_ids_but_graphics();

}  // namespace eacgm::sample
