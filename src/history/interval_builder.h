// IntervalBuilder: makes one interval's rows from the agent's published snapshots. The
// analysis keeps cumulative totals; the builder remembers what it wrote last and writes
// differences (latency sketches included, so that intervals merge exactly; the hook's GPU
// time, analysis/gpu_times.h, the same way, as rows of kGpuTimeDomain). GPU figures
// are accumulated from each sampling pass seen (observe_gpu) into means and maxima.
// Runs on the history writer's thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "analysis/analysis_snapshot.h"
#include "analysis/call_summary.h"
#include "analysis/gpu_times.h"
#include "core/gpu_sample.h"
#include "history/history_batch.h"
#include "sample/process_facts.h"
#include "sample/process_start.h"

namespace eacgm::history {

class IntervalBuilder {
 public:
  // When a process started (Unix ns), nullopt when it is gone; default: /proc.
  using StartOf = std::function<std::optional<std::int64_t>(std::uint32_t pid)>;
  // `idle_threshold`: the activity (0..1: SM activity where GPM gives it, else
  // utilization) under which a pass counts toward a process's idle_samples ([report]).
  IntervalBuilder(std::shared_ptr<const sample::ProcessFacts> facts, StartOf start_of,
                  double idle_threshold = 0.05);

  // A GPU sampling pass (each is counted once, by its sequence).
  void observe_gpu(const GpuSnapshot& pass);
  // The rows of [t_ns, end_ns) from the newest snapshot.
  IntervalBatch build(const analysis::AnalysisSnapshot& snap, std::int64_t t_ns, std::int64_t end_ns);

  std::size_t known_processes() const { return processes_.size(); }
  // A process neither in the analysis's summaries nor touched for this long is forgotten.
  static constexpr std::int64_t kForgetAfterNs = 600'000'000'000;

 private:
  struct Known {
    ProcessRecord record;
    std::shared_ptr<const analysis::CallSummary> written;  // the summary the last rows came from
    bool exit_written = false;
  };
  // A ratio's mean and max over the passes that had it.
  struct RatioAcc {
    double sum = 0;
    std::uint64_t n = 0;
    std::optional<double> max;
    void add(std::optional<double> v) {
      if (!v) return;
      sum += *v;
      ++n;
      max = std::max(max.value_or(*v), *v);
    }
    std::optional<double> mean() const {
      return n ? std::optional<double>(sum / static_cast<double>(n)) : std::nullopt;
    }
  };
  struct GpuAcc {
    std::string uuid, name;
    std::uint64_t samples = 0, util_n = 0, mem_n = 0, power_n = 0;
    double util_sum = 0, mem_sum = 0, power_sum = 0;
    std::optional<std::uint32_t> util_max, temp_max;
    std::optional<std::uint64_t> mem_max, mem_total;
    std::optional<double> power_max;
    RatioAcc sm_active, tensor_active, dram_active;  // NVML GPM
  };
  // A GPU's energy counter: its newest reading, from the first pass that carried it (the
  // slow reader took it since the pass before), the passes' power integrated since that
  // reading (each pair of passes by the mean of their readings), the newest power and its
  // pass, and the counter as estimated at the end of the last interval written. An
  // interval's energy is the difference of the estimates at its ends: over a process's
  // life the estimates' errors cancel but for the two ends, each the error of a slow-read
  // period's power sampled once a pass (not the newest power held over the period: a job
  // that computes and sleeps in turns swings it by hundreds of watts).
  struct EnergyTrack {
    std::optional<std::uint64_t> read_mj;
    std::int64_t read_ns = 0;
    double since_mj = 0;
    std::optional<double> power_w;
    std::int64_t power_ns = 0;
    std::optional<double> at_end_mj;
  };
  // The counter at `end_ns`: the newest reading, the power integrated since and the newest
  // power after it; none without a reading of the last minute.
  static std::optional<double> energy_at(const EnergyTrack& e, std::int64_t end_ns);
  struct GpuProcAcc {
    std::uint64_t samples = 0, idle_samples = 0, sm_n = 0, power_n = 0;
    double sm_sum = 0, power_sum = 0;  // power: the GPU's in the passes that listed it
    double power_share = 0;            // the process's share of that power, pass by pass
    std::optional<std::uint64_t> mem_max;
  };
  Known& known(std::uint32_t pid, std::int64_t t_ns);
  // The GPU time rows (kGpuTimeDomain) of the interval, per (process, kernel name).
  void add_gpu_time(const analysis::GpuTimeSummary& summary, std::int64_t t_ns, IntervalBatch& batch,
                    std::set<std::uint32_t>& touched);
  // What the last GPU time rows came from, per (pid, function).
  struct GpuWritten {
    std::uint64_t launches = 0;
    std::shared_ptr<const analysis::LatencySketch> sketch;
    bool upper_bound = false;
  };

  std::shared_ptr<const sample::ProcessFacts> facts_;
  StartOf start_of_;
  double idle_threshold_;
  std::map<std::uint32_t, Known> processes_;
  std::map<std::uint32_t, std::int64_t> first_seen_;  // this build's snapshot: first traced call
  std::map<std::string, std::uint64_t> kernels_written_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, GpuWritten> gpu_written_;
  std::uint64_t anomalies_kept_ = 0;      // call anomalies written (AnomalySummary::kept)
  std::uint64_t intervals_kept_ = 0;      // slow intervals written (interval_total)
  std::uint64_t hangs_through_ = 0;       // newest ended hang written (end_ns)
  std::uint64_t gpu_events_written_ = 0;  // GPU health events written (their total then)
  std::set<std::uint32_t> leaks_written_;
  std::optional<std::uint64_t> last_gpu_sequence_;
  std::map<std::uint32_t, GpuAcc> gpus_;
  std::map<std::uint32_t, EnergyTrack> energy_;                                  // kept across intervals
  std::map<std::pair<std::uint32_t, std::uint32_t>, GpuProcAcc> gpu_processes_;  // (gpu, pid)
};

// Unix ns of a process's start, read by the sample stage (/proc): the StartOf of a live node.
using sample::proc_start_ns;

}  // namespace eacgm::history
