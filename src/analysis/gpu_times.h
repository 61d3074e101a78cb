// GpuTimes: what the hooks timed on the GPU (core/gpu_span.h), per kernel and per stream.
// Per (process, function): the exact launch count the hook kept, its first launch's GPU
// time apart (it runs cold), the GPU durations of the other launches it timed (a
// LatencySketch: p50, p99; from the spans whose kernel followed its start event at once,
// or, when there is none, from those that started on an idle stream, marked as upper
// bounds) with their number, and the GPU time all launches took, estimated as the first
// launch's plus the timed mean times the other launches (NCCL kernels are all timed:
// exact), with a 95% confidence interval from the timed durations' variance.
// Per (process, function, launch shape): the same figures for the timed launches of each
// grid, block and shared-memory size (one kernel launched with several shapes runs for
// different times), at most kMaxShapesPerFunction per function and `max_shapes` in all
// (spans of shapes beyond are counted in the row's `shapes_left_out`).
// Per (process, device, stream): the GPU busy time, estimated the same way per function,
// over the time between its first timed start and its last timed end. Per process: the
// same busy share over all its streams, beside the SM utilization NVML reported for it
// while it was timed (observe_nvml), so the two views can be reconciled. Bounded: at most
// `max_functions` functions (later ones only counted in `folded_launches`), and the rows
// of processes that exited are dropped first when the bound is reached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/latency_sketch.h"
#include "core/gpu_sample.h"
#include "core/gpu_span.h"

namespace eacgm::analysis {

struct GpuShapeRow {
  gpu_time::LaunchShape shape{};
  std::uint64_t timed = 0;    // the kernel's first launch is in none of its shapes
  std::uint64_t samples = 0;  // the spans the figures come from
  std::uint64_t idle_starts = 0;
  bool upper_bound = false;  // every timed launch of this shape started idle
  double mean_ns = 0;        // of the spans the figures come from
  double p50_ns = 0;
  double p99_ns = 0;
  double max_ns = 0;
};

struct GpuKernelTimeRow {
  std::uint32_t pid = 0;
  std::string name;  // the kernel's (mangled) name; "graph 0x…" for a graph; "" unnamed
  std::uint64_t function = 0;
  bool nccl = false;
  bool graph = false;
  std::uint64_t launches = 0;     // exact, from the hook
  std::uint64_t timed = 0;        // launches timed, the first included
  std::uint64_t idle_starts = 0;  // of the others, started on an idle stream (the launch's latency included)
  bool upper_bound = false;       // every one of those started idle: the figures are upper bounds
  std::uint64_t samples = 0;      // the spans the figures come from (the first launch never)
  std::uint64_t timed_ns = 0;     // their GPU time
  double mean_ns = 0;
  double p50_ns = 0;
  double p99_ns = 0;
  double max_ns = 0;
  // The first launch's GPU time (cold: the module loaded, caches empty), when it was timed.
  std::optional<double> first_launch_ns;
  // All launches' GPU time: the first launch's plus the timed mean times the others (when
  // only the first was timed, it times the launches), and the half-width of its 95%
  // confidence interval: 1.96 standard errors of the mean, with the finite-population
  // correction, times the launches it stands for (absent under two samples).
  double est_gpu_ns = 0;
  std::optional<double> est_gpu_ci_ns;
  std::vector<GpuShapeRow> shapes;    // most timed first
  std::uint64_t shapes_left_out = 0;  // timed spans of shapes past the bounds
  // The cumulative durations the figures come from (shared, never changed once handed
  // out): the history writes each interval's difference.
  std::shared_ptr<const LatencySketch> sketch;
};

struct GpuStreamRow {
  std::uint32_t pid = 0;
  std::int32_t device = -1;
  std::uint64_t stream = 0;
  std::uint64_t timed = 0;
  double est_busy_ns = 0;
  std::uint64_t first_ns = 0;  // the first timed start (CLOCK_MONOTONIC)
  std::uint64_t last_ns = 0;   // the last timed end
  double busy_share = 0;       // est_busy_ns / (last_ns - first_ns), at most 1
};

// A process's GPU time set beside NVML's view of it: the busy share the hook's spans give
// and the SM utilization NVML reported for the process while it was being timed.
struct GpuTimeProcess {
  GpuRingState ring;
  double est_gpu_ns = 0;  // the sum over its kernels
  // Its streams' estimated busy time over the time from its first timed start to its last
  // timed end, per device it launched on, in percent (at most 100; concurrent streams on
  // one device add up, so this is an upper estimate there). Absent before two spans.
  std::optional<double> busy_percent;
  std::uint32_t devices = 0;  // CUDA devices its timed launches ran on
  // NVML's per-process SM utilization, the mean over the sampling passes that listed the
  // process after its first timed launch (every GPU); absent without such a pass.
  std::optional<double> nvml_sm_percent;
  std::uint64_t nvml_samples = 0;
};

// One kernel name over all processes, for /metrics (graphs under "graph", unnamed
// kernels under "unnamed").
struct GpuKernelNameTimes {
  std::string name;
  std::uint64_t launches = 0;  // exact, from the hooks
  double est_gpu_ns = 0;
  double est_gpu_ci_ns = 0;  // the rows' 95% half-widths added in quadrature
  bool has_ci = false;       // some row had one (two timed launches or more)
  LatencySketch durations;   // the spans the rows' figures come from
};

struct GpuTimeSummary {
  std::vector<GpuKernelTimeRow> kernels;  // most estimated GPU time first
  std::vector<GpuStreamRow> streams;      // pid, device, stream order
  std::vector<GpuTimeProcess> processes;  // pid order
  std::vector<GpuKernelNameTimes> names;  // most estimated GPU time first
  std::uint64_t folded_launches = 0;
  bool empty() const { return kernels.empty() && processes.empty(); }
};

// A sketch a summary hands out without a copy: while a published summary holds it, the
// writer changes a copy of it instead (copy on write). One writer thread.
class SharedSketch {
 public:
  const LatencySketch& get() const { return *sketch_; }
  LatencySketch& for_write() {
    if (sketch_.use_count() > 1) sketch_ = std::make_shared<LatencySketch>(*sketch_);
    return *sketch_;
  }
  std::shared_ptr<const LatencySketch> share() const { return sketch_; }

 private:
  std::shared_ptr<LatencySketch> sketch_ = std::make_shared<LatencySketch>();
};

class GpuTimes {
 public:
  static constexpr std::size_t kMaxShapesPerFunction = 16;
  explicit GpuTimes(std::size_t max_functions = 8192, std::size_t max_shapes = 16384)
      : max_functions_(max_functions), max_shapes_(max_shapes) {}
  void add(const GpuTimeBatch& batch);
  // A GPU sampling pass: the SM utilization NVML reports for processes being timed.
  void observe_nvml(const GpuSnapshot& pass);
  GpuTimeSummary summary() const;
  std::size_t function_count() const { return functions_.size(); }

 private:
  struct PerStream {
    std::int32_t device = -1;
    std::uint64_t timed = 0;
    std::uint64_t ns = 0;       // queued spans
    std::uint64_t idle_ns = 0;  // spans started on an idle stream
    std::uint64_t first_launch_ns = 0;
    std::uint64_t first_ns = 0;
    std::uint64_t last_ns = 0;
  };
  struct ShapeTimes {
    LatencySketch durations;  // queued spans
    LatencySketch idle;       // spans started on an idle stream
  };
  struct Function {
    std::string name;
    bool named = false;
    bool nccl = false;
    bool graph = false;
    std::uint64_t launches = 0;
    SharedSketch durations;  // queued spans: the kernel's own time
    SharedSketch idle;       // spans started on an idle stream: upper bounds
    double squares = 0;      // the sums of the squared durations of each, for the variance
    double idle_squares = 0;
    std::optional<std::uint64_t> first_launch_ns;
    std::map<std::uint64_t, PerStream> streams;
    std::map<gpu_time::LaunchShape, ShapeTimes> shapes;
    std::uint64_t shapes_left_out = 0;
  };
  using Key = std::pair<std::uint32_t, std::uint64_t>;  // pid, function
  Function* function(Key key);
  void add_shape(Function& f, const GpuSpan& s);

  std::size_t max_functions_;
  std::size_t max_shapes_;
  std::size_t shape_count_ = 0;
  std::map<Key, Function> functions_;
  struct NvmlMean {
    double sum = 0;
    std::uint64_t n = 0;
  };
  std::map<std::uint32_t, GpuRingState> rings_;
  std::map<std::uint32_t, NvmlMean> nvml_;  // pids of rings_ only
  std::uint64_t folded_launches_ = 0;
};

}  // namespace eacgm::analysis
