// Per-(process, GPU) metrics: GPU memory from the running-process lists, SM / memory /
// encoder / decoder utilization over the last interval, process name and container id.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/gpu_sample.h"
#include "sample/nvml_api.h"

namespace eacgm::sample {

struct ProcessPass {
  std::vector<ProcessSample> processes;  // ordered by GPU index, then pid
  std::vector<std::string> errors;       // "GPU 1: process list: GPU is lost"
};

// Not thread-safe: one sampling thread calls sample(). Each pass reads utilization
// samples newer than the previous pass, so consecutive passes cover consecutive
// intervals; the first pass covers `first_window`.
class ProcessSampler {
 public:
  explicit ProcessSampler(std::shared_ptr<const nvml::Session> session,
                          std::chrono::microseconds first_window = std::chrono::seconds(1),
                          std::string proc_root = "/proc");

  ProcessPass sample();

 private:
  void sample_gpu(unsigned index, ProcessPass& pass);

  std::shared_ptr<const nvml::Session> session_;
  std::string proc_root_;
  std::vector<std::string> uuids_;
  std::vector<unsigned long long> last_seen_us_;
  // Reused between passes so a steady state allocates nothing for the NVML buffers.
  std::vector<nvml::ProcessInfo> infos_;
  std::vector<nvml::ProcessUtilizationSample> util_;
};

// The 64-hex container id in the text of /proc/<pid>/cgroup (Docker, containerd, CRI-O,
// Podman, Kubernetes layouts), or "" when the process is not in a container.
std::string container_id_from_cgroup(std::string_view cgroup_text);

}  // namespace eacgm::sample
