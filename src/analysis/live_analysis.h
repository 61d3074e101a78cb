// LiveAnalysis: the aggregators of a running trace (per-function call summary, GPU
// activity per device and process, the memory ledger, kernel launches, NCCL calls and
// their arrival skew, kernels per PyTorch op, host waits, the calls in flight) as one Consumer on the output
// thread, publishing an immutable AnalysisSnapshot each tick and at the end for readers on any thread (`eacgm
// run`'s tables, the server's routes).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "analysis/anomaly_detector.h"
#include "analysis/call_summary.h"
#include "analysis/gpu_activity.h"
#include "analysis/gpu_times.h"
#include "analysis/gpu_work.h"
#include "analysis/hang_diagnosis.h"
#include "analysis/host_waits.h"
#include "analysis/inflight_calls.h"
#include "analysis/kernel_stats.h"
#include "analysis/memory_ledger.h"
#include "analysis/nccl_skew.h"
#include "analysis/nccl_stats.h"
#include "analysis/op_kernels.h"
#include "analysis/process_calls.h"
#include "analysis/python_profile.h"
#include "analysis/rollup_series.h"
#include "core/clock.h"
#include "core/consumer.h"
#include "core/probe_cost.h"
#include "core/proc_stat.h"
#include "core/published.h"

namespace eacgm::analysis {

struct AnalysisSnapshot {
  std::chrono::system_clock::time_point time;
  std::uint64_t sequence = 0;  // 1 for the first snapshot, then +1 each
  bool final = false;          // made after the trace ended
  CallSummary calls;
  GpuActivity gpu;
  std::optional<GpuSnapshot> last_gpu;              // the latest sampling pass, as taken
  MemorySummary memory;                             // the memory ledger's rows
  CounterValues counters;                           // the agent's counters when it was made
  KernelStats kernels;                              // launches per kernel name and shape
  GpuWorkStats work;                                // kernels, memsets, copies per process and stream
  NcclStats nccl;                                   // NCCL calls per communicator and function
  NcclSkewSummary nccl_skew;                        // arrival skew per communicator
  OpKernelSummary ops;                              // kernels launched per PyTorch op (per-call mode)
  RollupView series;                                // per-second rollups (shares the ring's chunks)
  std::shared_ptr<const AnomalySummary> anomalies;  // never null once published
  // Always-on: the probes' estimated cost; per process the latest row (exited ones keep
  // their final totals), pid order.
  OverheadReport overhead;
  std::shared_ptr<const PythonHotSpots> python;  // sampled Python stacks; never null once published
  HostWaitSummary waits;                         // time blocked on the host per process and kind
  InflightSummary inflight;                      // waiting calls in flight past [hangs] min_age_s
  HangSummary hangs;                             // per communicator, and the hangs found at the last scan
  // Each process's calls by function (for the history store); remade at most every
  // kProcessRefresh. Never null once published.
  std::shared_ptr<const ProcessCallsView> by_process;
  // What the hooks timed on the GPU (processes carrying libeacgm_hook.so with GPU time on).
  GpuTimeSummary gpu_time;
};

// The seconds of the last `window_s` of a snapshot's ring, ending at the snapshot's time
// (or the ring's latest second, when that is later).
SeriesWindow series_window(const AnalysisSnapshot& snap, std::size_t window_s);

class LiveAnalysis final : public Consumer {
 public:
  explicit LiveAnalysis(CallSummary calls = CallSummary{}, std::size_t max_gpu_processes = 4096,
                        MemoryLedger::Options memory = MemoryLedger::Options{})
      : calls_(std::move(calls)), gpu_(max_gpu_processes), memory_(memory) {}

  // Each tick checks up to this many of the ledger's processes for their exit; a
  // process seen gone for `kExitGrace` is finalized (its unfreed allocations become
  // leaks). At the end every process found gone is finalized at once.
  static constexpr std::size_t kExitChecksPerTick = 512;
  static constexpr std::chrono::seconds kExitGrace{2};
  // How long an NCCL kernel the hook timed waits for its call's event (nccl_gpu_join.h).
  static constexpr std::uint64_t kNcclKernelWait = 2'000'000'000;
  // The Python hot spots are made again at most this often (and at the end).
  static constexpr std::chrono::seconds kPythonRefresh{5};
  // The per-process call summaries are copied at most this often (and at the end).
  static constexpr std::chrono::seconds kProcessRefresh{5};
  // Processes whose probe cost is kept (exited ones go first when over).
  static constexpr std::size_t kMaxOverheadRows = 4096;
  static constexpr std::size_t kMaxExitedOverheadRows = 1024;  // of kMaxOverheadRows
  // How a process's exit is checked (default: process_alive, /proc); for tests.
  void set_process_alive(std::function<bool(std::uint32_t)> is_alive) { is_alive_ = std::move(is_alive); }
  // How a process's start is read for its host-wait share (default: /proc); for tests.
  void set_process_start(HostWaits::StartOf start_of) { waits_.set_start_of(std::move(start_of)); }
  // The clocks that stamp snapshots, series seconds and anomaly intervals (default: the
  // system's); tests fix them so that a snapshot is the same in every run.
  struct Clocks {
    std::function<std::chrono::system_clock::time_point()> wall = [] {
      return std::chrono::system_clock::now();
    };
    std::function<std::chrono::steady_clock::time_point()> steady = [] {
      return std::chrono::steady_clock::now();
    };
  };
  void set_clocks(Clocks clocks) { clocks_ = std::move(clocks); }
  // The age from which a waiting call in flight is listed ([hangs] min_age_s), from the
  // next scan on; and how a thread's life is checked (default: /proc), for tests.
  void set_inflight_min_age(std::chrono::nanoseconds age) {
    inflight_.set_min_age_ns(static_cast<std::uint64_t>(std::max<std::int64_t>(age.count(), 0)));
  }
  void set_thread_alive(InflightCalls::ThreadAlive alive) { inflight_.set_thread_alive(std::move(alive)); }
  // From what age a call in flight is a hang whatever it waits for ([hangs] hang_after_s; 0: never).
  void set_hang_after(std::chrono::nanoseconds age) {
    hangs_.set_hang_after_ns(static_cast<std::uint64_t>(std::max<std::int64_t>(age.count(), 0)));
  }
  // The Python sampler's rate, which the hot spots state (before the trace starts).
  void set_python_hz(std::uint32_t hz) { python_.set_hz(hz); }
  // What the Python profile keeps (before the trace starts): a window for the daemon.
  void set_python_limits(const PythonProfileLimits& limits) { python_.set_limits(limits); }

  void on_calls(std::span<const CallEvent> calls) override;
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) override;
  void on_gpu(const GpuSnapshot& snapshot) override;
  void on_host_waits(std::span<const HostWaitProcess> processes,
                     std::span<const HostWaitTimings> waits) override;
  void on_overhead(const OverheadReport& report) override;
  // Each scan of the calls in flight, and the hang diagnosis over it.
  void on_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns) override;
  void on_python_stacks(std::span<const PythonStack> stacks) override { python_.add(stacks); }
  void on_gpu_time(const GpuTimeBatch& batch) override;
  void on_tick(std::chrono::steady_clock::time_point now, const CounterValues& counters) override;
  void on_end(const CounterValues& counters) override;

  // The last published snapshot (nullptr before the first tick); any thread.
  std::shared_ptr<const AnalysisSnapshot> snapshot() const { return published_.get(); }
  const Published<AnalysisSnapshot>& published() const { return published_; }

 private:
  void publish(bool final, const CounterValues& counters, std::chrono::steady_clock::time_point now);
  std::uint64_t wall_ns() const {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(clocks_.wall().time_since_epoch()).count());
  }

  CallSummary calls_;
  GpuActivity gpu_;
  MemoryLedger memory_;
  KernelStats kernels_;
  GpuTimes gpu_times_;
  GpuWorkStats work_;
  NcclStats nccl_;
  NcclSkew nccl_skew_;
  WallClock span_clock_;  // the hook's spans (CLOCK_MONOTONIC) onto the calls' clock
  OpKernels ops_;
  std::function<bool(std::uint32_t)> is_alive_ = process_alive;
  Clocks clocks_;
  std::optional<GpuSnapshot> last_gpu_;
  RollupSeries series_;
  AnomalyDetector anomalies_;
  std::shared_ptr<const AnomalySummary> anomalies_published_;  // remade when it changed
  OverheadReport overhead_;
  std::map<std::uint32_t, ProcessOverhead> overhead_rows_;  // bounded: kMaxOverheadRows
  PythonProfile python_;
  std::shared_ptr<const PythonHotSpots> python_published_;
  std::chrono::steady_clock::time_point python_made_;  // when python_published_ was made
  HostWaits waits_;                                    // remade when samples came
  InflightCalls inflight_;                             // the last scan's
  HangDiagnosis hangs_;                                // at the last scan
  ProcessCalls by_process_;
  std::shared_ptr<const ProcessCallsView> by_process_published_;
  std::chrono::steady_clock::time_point by_process_made_;
  std::uint64_t sequence_ = 0;
  Published<AnalysisSnapshot> published_;
};

}  // namespace eacgm::analysis
