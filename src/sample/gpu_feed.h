// GPU sampling beside a trace: device and process samples every interval on a thread
// of their own, reduced to the traced processes, posted to a mailbox that the output
// thread drains between batches of traced calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "sample/gpu_sampler.h"
#include "sample/sampling_loop.h"
#include "sample/snapshot_mailbox.h"

namespace eacgm::sample {

struct GpuFeedOptions {
  std::chrono::nanoseconds interval = std::chrono::seconds(1);
  // Keep only processes in the trees of `roots` (a traced command, or --pid targets);
  // false: every process on the GPUs (a machine-wide trace).
  bool filter_processes = false;
  std::vector<int> roots;
  std::string nvml_library;  // $EACGM_NVML_LIBRARY; empty: the driver's
  bool gpm = true;           // read GPM's profiling counters ([gpu] profiling)
};

class GpuFeed {
 public:
  // Fails when NVML cannot be loaded or initialised, or the interval is invalid; the
  // caller traces on without GPU metrics.
  static Result<std::unique_ptr<GpuFeed>> start(const GpuFeedOptions& options,
                                                std::shared_ptr<SnapshotMailbox> mailbox);
  ~GpuFeed();
  GpuFeed(const GpuFeed&) = delete;
  GpuFeed& operator=(const GpuFeed&) = delete;

  // Ends the periodic passes and runs one last pass, so that a trace shorter than the
  // interval still has a sample at each end. Idempotent; after it, `failure()` says
  // what stopped the passes early, if anything did.
  void stop();

  std::size_t gpu_count() const { return gpu_count_; }
  std::size_t gpm_count() const { return gpm_count_; }
  std::uint64_t passes() const;
  std::uint64_t skipped_deadlines() const;
  const std::string& failure() const { return failure_; }

 private:
  GpuFeed(const GpuFeedOptions& options, std::unique_ptr<GpuSampler> sampler,
          std::shared_ptr<SnapshotMailbox> mailbox);
  GpuSnapshot pass();

  GpuFeedOptions options_;
  std::unique_ptr<GpuSampler> sampler_;
  std::shared_ptr<SnapshotMailbox> mailbox_;
  std::unique_ptr<SamplingLoop> loop_;
  std::size_t gpu_count_ = 0;
  std::size_t gpm_count_ = 0;
  bool stopped_ = false;
  std::string failure_;
};

}  // namespace eacgm::sample
