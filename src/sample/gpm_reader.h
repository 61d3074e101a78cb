// NVML GPM's profiling counters per GPU (SM, tensor and pipe activity, DRAM bandwidth,
// PCIe and NVLink traffic): each read takes a sample and turns the difference from the
// previous one into the interval's averages, so a pass reports what the GPU did since
// the pass before.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/gpu_sample.h"
#include "sample/nvml_api.h"

namespace eacgm::sample {

// What one read gave: the counters, or the NVML call that failed and its code (the
// caller classifies it as absent, lost or an error). On a GPU in MIG mode, `counters` stays
// empty and `instances` holds each GPU instance's that had an interval this read.
struct GpmRead {
  std::optional<GpmCounters> counters;
  nvml::Return status = nvml::kSuccess;
  const char* call = "";
  bool mig = false;
  std::vector<GpmInstanceCounters> instances;
  // Said once each: a GPU instance without GPM, an unexpected failure of an instance's read.
  std::vector<std::string> notes;
};

// Not thread-safe: the sampling thread alone reads. Construction asks each GPU whether it
// has GPM and, for those that do, allocates two sample buffers and takes the first
// sample; it cannot fail (a GPU whose support query or allocation fails is unsupported).
// A GPU in MIG mode gives GPM only per GPU instance: the reader lists its instances at
// construction, again every mig_period and after a failed read, and keeps two buffers
// per instance.
class GpmReader {
 public:
  // `wait`: a read closer than kMinInterval to the previous sample waits for the rest;
  // without it, such a read reports nothing and the next one covers the longer interval.
  GpmReader(std::shared_ptr<const nvml::Session> session, const std::vector<nvml::Device>& devices,
            bool wait = true, std::chrono::nanoseconds mig_period = kMigPeriod);
  ~GpmReader();
  GpmReader(const GpmReader&) = delete;
  GpmReader& operator=(const GpmReader&) = delete;

  bool supported(std::size_t gpu) const {
    return gpu < gpus_.size() && gpus_[gpu].whole.samples[0] != nullptr;
  }
  // The counters since the previous read of this GPU (since construction, for the first).
  // Two samples closer than kMinInterval give noisy averages: the first read waits for the
  // rest of it (once, at start; passes are further apart), or reports nothing (no `wait`).
  // A GPU instance found after construction gives its first counters at the read after.
  GpmRead read(std::size_t gpu);

  static constexpr std::chrono::milliseconds kMinInterval{100};
  // Graphics engine activity is asked for every kGraphicsEvery-th read of a GPU, and the
  // reads between carry its last value: on H100 and H200 nvmlGpmMetricsGet spends 1.7 ms
  // of CPU on that one metric and about 0.1 ms on all the others together
  // (bench/gpu/gpm_call_cost.py --each). A GPU instance is read the same way.
  static constexpr unsigned kGraphicsEvery = 10;
  // How often a GPU's MIG mode and GPU instances are listed again: instances come and go
  // only when an administrator changes the partition, and a vanished one shows sooner, as
  // a failed read.
  static constexpr std::chrono::seconds kMigPeriod{30};

  // Two sample buffers used in turn, for the whole GPU or one GPU instance.
  struct Series {
    nvml::GpmSample samples[2] = {nullptr, nullptr};
    int latest = -1;  // which of samples holds the previous sample; -1: none yet
    std::chrono::steady_clock::time_point taken_at{};
    unsigned reads = 0;                     // reads that gave counters
    std::optional<double> graphics_active;  // its last read value
  };

 private:
  struct Instance {
    unsigned id = 0;
    std::string profile;
    Series series;
    bool fresh = false;  // found by this read: its first counters come at the next
  };
  struct Gpu {
    nvml::Device handle = nullptr;
    Series whole;
    bool mig = false;         // MIG mode on when last listed
    bool mig_capable = true;  // the driver answers the MIG mode query for this GPU
    bool list_due = false;    // a read failed: list the instances again
    std::chrono::steady_clock::time_point listed_at{};
    std::vector<Instance> instances;    // by id
    std::vector<unsigned> without_gpm;  // instances said to have no GPM, left out
    std::vector<std::string> notes;     // for the next read
  };
  void list_instances(Gpu& g, bool at_start);
  void read_instances(Gpu& g, GpmRead& out);
  void release(Series& s);

  std::shared_ptr<const nvml::Session> session_;
  std::vector<Gpu> gpus_;
  bool wait_ = true;
  std::chrono::nanoseconds mig_period_;
};

// The metric ids a read asks for, in order (exposed for tests of the fake library), and
// those of the reads between two of graphics engine activity.
const std::vector<unsigned>& gpm_metric_ids();
const std::vector<unsigned>& gpm_metric_ids_but_graphics();

// "1g.10gb" from a MIG device's name ("NVIDIA H100 80GB HBM3 MIG 1g.10gb"); a compute
// instance smaller than its GPU instance ("... MIG 1c.3g.40gb") gives the GPU instance's
// profile ("3g.40gb"). Empty when the name has no MIG profile.
std::string mig_profile_of_name(std::string_view name);

}  // namespace eacgm::sample
