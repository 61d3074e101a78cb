// LiveAnalysis: the hub of the registered analyses (analysis/registry.cpp) as one Consumer
// on the output thread. Each input goes to the analyses that declared it, in registration
// order; each tick and at the end every analysis puts its parts into a new immutable
// AnalysisSnapshot, published for readers on any thread. The hub knows no analysis by
// name: adding one touches neither this file nor the snapshot.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/analysis_snapshot.h"
#include "analysis/environment.h"
#include "core/consumer.h"
#include "core/published.h"

namespace eacgm::analysis {

// Makes one analysis; it reads the hub's environment through `env` for its life.
using AnalysisFactory = std::unique_ptr<Analysis> (*)(const Environment& env);

// The built-in analyses, in the order they see each input (analysis/registry.cpp).
std::span<const AnalysisFactory> builtin_analyses();

class LiveAnalysis final : public Consumer {
 public:
  explicit LiveAnalysis(std::span<const AnalysisFactory> analyses = builtin_analyses());
  ~LiveAnalysis() override;
  LiveAnalysis(const LiveAnalysis&) = delete;
  LiveAnalysis& operator=(const LiveAnalysis&) = delete;

  // The job's settings (before the trace starts; a daemon's reload, between traces).
  void configure(const AnalysisSettings& settings);

  // What the analyses ask of the machine; tests replace parts of it, before feeding.
  Environment& environment() { return *env_; }
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
  void set_clocks(Clocks clocks) {
    env_->wall = std::move(clocks.wall);
    env_->steady = std::move(clocks.steady);
  }
  void set_process_alive(std::function<bool(std::uint32_t)> is_alive) {
    env_->process_alive = std::move(is_alive);
  }
  void set_thread_alive(std::function<bool(std::uint32_t, std::uint32_t)> alive) {
    env_->thread_alive = std::move(alive);
  }
  void set_process_start(decltype(Environment::process_start) start_of) {
    env_->process_start = std::move(start_of);
  }
  // Where the other nodes' NCCL ranks are read from (before the trace starts).
  void set_fleet_reports(decltype(Environment::fleet_reports) reports) {
    env_->fleet_reports = std::move(reports);
  }

  // What each registered analysis declared, in registration order.
  std::vector<Declaration> declarations() const;

  void on_calls(std::span<const CallEvent> calls) override;
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) override;
  void on_gpu(const GpuSnapshot& snapshot) override;
  void on_host_waits(std::span<const HostWaitProcess> processes,
                     std::span<const HostWaitTimings> waits) override;
  void on_overhead(const OverheadReport& report) override;
  void on_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns) override;
  void on_python_stacks(std::span<const PythonStack> stacks) override;
  void on_gpu_time(const GpuTimeBatch& batch) override;
  void on_tick(std::chrono::steady_clock::time_point now, const CounterValues& counters) override;
  void on_end(const CounterValues& counters) override;

  // The last published snapshot (nullptr before the first tick); any thread.
  std::shared_ptr<const AnalysisSnapshot> snapshot() const { return published_.get(); }
  const Published<AnalysisSnapshot>& published() const { return published_; }

 private:
  Moment moment() const { return Moment{env_->steady(), env_->wall()}; }
  void publish(bool final, const CounterValues& counters, const Moment& now);
  const std::vector<Analysis*>& taking(Input input) const;

  std::unique_ptr<Environment> env_;  // before analyses_: they hold a reference to it
  std::vector<std::unique_ptr<Analysis>> analyses_;
  // Per input (its bit's index), the analyses that declared it, in registration order.
  std::vector<std::vector<Analysis*>> by_input_;
  std::uint64_t sequence_ = 0;
  Published<AnalysisSnapshot> published_;
};

}  // namespace eacgm::analysis
