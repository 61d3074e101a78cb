// The fleet simulation's node: a busy 8-GPU Kubernetes node with 50 pods, in the two
// shapes the fleet sees it — what its agent's analysis holds (for /metrics) and the
// intervals its history writer sends (for the PostgreSQL store).
//
// The shape: 8 H100 GPUs, every NVML field set. 50 pods in namespace `ml`, one container
// (`pytorch`) each, sharing the GPUs (pod p on GPU p % 8: MIG slices or time-slicing, so
// no GPU has a single holder and the DCGM_FI_* families carry no pod labels). Pods 0–47
// are ranks of 6 training jobs (8 pods each, job `train-<j>`, RANK set); pods 48–49
// serve models (no job). Each pod runs two traced processes: its main process (on its
// GPU; 18 CUDA runtime functions, plus 6 NCCL functions in training pods; 400 kernel
// names across the node) and a data-loader worker (4 CUDA functions: pinned copies).
// 100 processes, 1,388 (process, function) pairs.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "analysis/live_analysis.h"
#include "core/call_event.h"
#include "history/history_batch.h"
#include "sample/process_facts.h"

namespace eacgm::fleet {

inline constexpr unsigned kGpus = 8;
inline constexpr unsigned kPods = 50;
inline constexpr unsigned kTrainingPods = 48;  // 6 jobs of 8 ranks
inline constexpr unsigned kPodsPerJob = 8;
inline constexpr unsigned kKernels = 400;
inline constexpr std::uint32_t kFirstPid = 200000;

// Pod p's main process is kFirstPid + 2p, its worker kFirstPid + 2p + 1.
inline std::uint32_t main_pid(unsigned pod) { return kFirstPid + 2 * pod; }
inline std::uint32_t worker_pid(unsigned pod) { return kFirstPid + 2 * pod + 1; }
inline unsigned pod_of(std::uint32_t pid) { return (pid - kFirstPid) / 2; }
inline bool is_main(std::uint32_t pid) { return (pid - kFirstPid) % 2 == 0; }
inline bool is_traced(std::uint32_t pid) { return pid >= kFirstPid && pid < kFirstPid + 2 * kPods; }

// The job of pod p ("" for the serving pods); `node` spreads jobs over nodes (a job's
// ranks on 4 nodes share its id).
std::string job_of(unsigned pod, unsigned node = 0);

// What /proc and the kubelet would say of the node's processes.
class FleetFacts final : public sample::ProcessFacts {
 public:
  sample::RankInfo rank(std::uint32_t pid) const override;
  std::string cmdline(std::uint32_t pid) const override;
  std::optional<std::string> container(std::uint32_t pid) const override;
  sample::Workload workload(std::uint32_t pid) const override;
  bool alive(std::uint32_t pid) const override { return is_traced(pid); }
};

// The functions each kind of process calls, as probes of the built-in catalogs.
struct FleetProbes {
  std::vector<std::shared_ptr<const ProbeInfo>> cuda;    // main processes, every pod
  std::vector<std::shared_ptr<const ProbeInfo>> nccl;    // main processes, training pods
  std::vector<std::shared_ptr<const ProbeInfo>> worker;  // data-loader workers
  std::shared_ptr<const ProbeInfo> launch;               // cudaLaunchKernel (kernel names)
  static FleetProbes make();
};

// One node's agent analysis, fed as the output thread feeds it: `advance` adds one
// second of calls from every process (and a kernel launch per kernel name), an NVML
// pass, and publishes a snapshot. Any thread may read snapshot().
class SyntheticNode {
 public:
  SyntheticNode();
  // One more second of the node's life, stamped `wall`.
  void advance(std::chrono::system_clock::time_point wall);
  std::shared_ptr<const analysis::AnalysisSnapshot> snapshot() const { return live_.snapshot(); }
  std::uint64_t events() const { return events_; }

 private:
  FleetProbes probes_;
  std::vector<std::string> kernels_;
  analysis::LiveAnalysis live_;
  std::uint64_t seconds_ = 0;
  std::uint64_t events_ = 0;
  std::mutex mutex_;
};

// The GPUs' sampling pass number `pass` at `wall`: 8 devices, the 50 main processes.
GpuSnapshot gpu_pass(std::uint64_t pass, std::chrono::system_clock::time_point wall);

// Interval `i` of node `node` as the history writer sends it: the node's 100 processes
// (each one touched every interval, so each is in the batch), every (process,
// function) pair with a latency sketch, 400 kernels, 8 GPUs and the 50 GPU processes.
// 1,946 rows. `t_ns`: the interval's start; spans 10 s.
class IntervalShapes {
 public:
  IntervalShapes();
  history::IntervalBatch interval(unsigned node, std::int64_t t_ns, std::int64_t i) const;

 private:
  FleetProbes probes_;
  std::vector<history::StoredSketch> sketches_;
  std::vector<std::string> kernels_;
};

std::size_t rows_of(const history::IntervalBatch& b);

}  // namespace eacgm::fleet
