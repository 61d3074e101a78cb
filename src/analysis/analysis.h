// Analysis: one aggregator of the live analysis as the hub (live_analysis.h) sees it. It
// declares what it consumes (calls, counts, GPU passes, ...) and the snapshot parts it
// publishes; the hub hands it only the inputs it declared, all on the output thread, and
// asks it for its parts each tick and at the end. A new analysis is a file in
// analysis/live/ and one line in analysis/registry.cpp; nothing else changes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <typeindex>
#include <vector>

#include "analysis/analysis_settings.h"
#include "analysis/snapshot_parts.h"
#include "core/call_counts.h"
#include "core/call_event.h"
#include "core/gpu_sample.h"
#include "core/gpu_span.h"
#include "core/host_wait.h"
#include "core/inflight_call.h"
#include "core/probe_cost.h"
#include "core/python_stack.h"

namespace eacgm::analysis {

// The trace's streams an analysis may consume (Consumer's calls, one each).
enum class Input : std::uint16_t {
  kCalls = 1U << 0,         // per-call records
  kCounts = 1U << 1,        // always-on counts and sampled timings
  kGpu = 1U << 2,           // NVML sampling passes
  kHostWaits = 1U << 3,     // the host-wait tracer's waits
  kInflight = 1U << 4,      // scans of the calls in flight
  kOverhead = 1U << 5,      // the probes' estimated cost per process
  kPythonStacks = 1U << 6,  // sampled Python stacks
  kGpuTime = 1U << 7,       // what hooked processes timed on the GPU
  kTick = 1U << 8,          // the agent's tick (windows, exit sweeps)
  kEnd = 1U << 9,           // the end of the trace (everything is in)
};
class Inputs {
 public:
  constexpr Inputs() = default;
  constexpr Inputs(Input i) : bits_(static_cast<std::uint16_t>(i)) {}  // NOLINT: one input is a set
  constexpr Inputs operator|(Inputs o) const { return Inputs(static_cast<std::uint16_t>(bits_ | o.bits_)); }
  constexpr bool has(Input i) const { return (bits_ & static_cast<std::uint16_t>(i)) != 0; }

 private:
  constexpr explicit Inputs(std::uint16_t bits) : bits_(bits) {}
  std::uint16_t bits_ = 0;
};
constexpr Inputs operator|(Input a, Input b) { return Inputs(a) | Inputs(b); }

// When a delivery is handled: the hub reads its clocks once per delivery, so every
// analysis of one tick sees the same moment (tests fix the clocks).
struct Moment {
  std::chrono::steady_clock::time_point steady;
  std::chrono::system_clock::time_point wall;
  std::uint64_t wall_ns() const {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(wall.time_since_epoch()).count());
  }
};

// Analyses that keep state per process check this many of their processes for their exit
// each tick, and finalize a process seen gone for kExitGrace (its unfreed allocations
// become leaks ...); at the end every process found gone is finalized at once.
inline constexpr std::size_t kExitChecksPerTick = 512;
inline constexpr std::chrono::seconds kExitGrace{2};

// Hands each of `items` to `into.add`: the body of most analyses' inputs.
template <typename Into, typename Items>
void add_each(Into& into, const Items& items) {
  for (const auto& item : items) into.add(item);
}

// What an analysis says of itself when it is registered.
struct Declaration {
  std::string_view name;               // for messages and tests
  Inputs inputs;                       // what the hub hands it
  std::vector<std::type_index> parts;  // what its publish() puts into the snapshot
};

class Analysis {
 public:
  virtual ~Analysis() = default;
  virtual Declaration declaration() const = 0;

  // The job's settings, before the trace starts and after a daemon's reload.
  virtual void configure(const AnalysisSettings& settings) { (void)settings; }

  virtual void on_calls(std::span<const CallEvent> calls) { (void)calls; }
  virtual void on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings,
                         const Moment& now) {
    (void)counts;
    (void)timings;
    (void)now;
  }
  virtual void on_gpu(const GpuSnapshot& snapshot) { (void)snapshot; }
  virtual void on_host_waits(std::span<const HostWaitProcess> processes,
                             std::span<const HostWaitTimings> waits) {
    (void)processes;
    (void)waits;
  }
  virtual void on_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns,
                           const Moment& now) {
    (void)calls;
    (void)scan_mono_ns;
    (void)now;
  }
  virtual void on_overhead(const OverheadReport& report) { (void)report; }
  virtual void on_python_stacks(std::span<const PythonStack> stacks) { (void)stacks; }
  virtual void on_gpu_time(const GpuTimeBatch& batch) { (void)batch; }
  virtual void on_tick(const Moment& now) { (void)now; }
  // Every record is in: what waits for more (a process's exit, a kernel's call) is settled now.
  virtual void on_end(const Moment& now) { (void)now; }

  // Puts the analysis's parts into the snapshot being made (each tick, and once more,
  // `final`, after on_end).
  virtual void publish(SnapshotParts& parts, const Moment& now, bool final) = 0;
};

}  // namespace eacgm::analysis
