// The hub: inputs to the analyses that declared them, and the snapshot each tick.
#include "analysis/live_analysis.h"

#include <bit>

namespace eacgm::analysis {
namespace {

constexpr std::size_t kInputs = 10;  // Input's bits

std::size_t index_of(Input input) {
  return static_cast<std::size_t>(std::countr_zero(static_cast<std::uint16_t>(input)));
}

}  // namespace

LiveAnalysis::LiveAnalysis(std::span<const AnalysisFactory> analyses)
    : env_(std::make_unique<Environment>(Environment::machine())), by_input_(kInputs) {
  for (AnalysisFactory make : analyses) {
    auto made = make(*env_);
    const Inputs inputs = made->declaration().inputs;
    for (std::size_t i = 0; i < kInputs; ++i) {
      if (inputs.has(static_cast<Input>(1U << i))) by_input_[i].push_back(made.get());
    }
    analyses_.push_back(std::move(made));
  }
}

LiveAnalysis::~LiveAnalysis() = default;

const std::vector<Analysis*>& LiveAnalysis::taking(Input input) const { return by_input_[index_of(input)]; }

std::vector<Declaration> LiveAnalysis::declarations() const {
  std::vector<Declaration> out;
  out.reserve(analyses_.size());
  for (const auto& a : analyses_) out.push_back(a->declaration());
  return out;
}

void LiveAnalysis::configure(const AnalysisSettings& settings) {
  for (auto& a : analyses_) a->configure(settings);
}

void LiveAnalysis::on_calls(std::span<const CallEvent> calls) {
  for (Analysis* a : taking(Input::kCalls)) a->on_calls(calls);
}

void LiveAnalysis::on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) {
  const Moment now = moment();
  for (Analysis* a : taking(Input::kCounts)) a->on_counts(counts, timings, now);
}

void LiveAnalysis::on_gpu(const GpuSnapshot& snapshot) {
  for (Analysis* a : taking(Input::kGpu)) a->on_gpu(snapshot);
}

void LiveAnalysis::on_host_waits(std::span<const HostWaitProcess> processes,
                                 std::span<const HostWaitTimings> waits) {
  for (Analysis* a : taking(Input::kHostWaits)) a->on_host_waits(processes, waits);
}

void LiveAnalysis::on_overhead(const OverheadReport& report) {
  for (Analysis* a : taking(Input::kOverhead)) a->on_overhead(report);
}

void LiveAnalysis::on_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns) {
  const Moment now = moment();
  for (Analysis* a : taking(Input::kInflight)) a->on_inflight(calls, scan_mono_ns, now);
}

void LiveAnalysis::on_python_stacks(std::span<const PythonStack> stacks) {
  for (Analysis* a : taking(Input::kPythonStacks)) a->on_python_stacks(stacks);
}

void LiveAnalysis::on_gpu_time(const GpuTimeBatch& batch) {
  for (Analysis* a : taking(Input::kGpuTime)) a->on_gpu_time(batch);
}

void LiveAnalysis::on_tick(std::chrono::steady_clock::time_point now, const CounterValues& counters) {
  const Moment at{now, env_->wall()};
  for (Analysis* a : taking(Input::kTick)) a->on_tick(at);
  publish(false, counters, at);
}

// Every record is in by now (the ring buffer was drained).
void LiveAnalysis::on_end(const CounterValues& counters) {
  const Moment at = moment();
  for (Analysis* a : taking(Input::kEnd)) a->on_end(at);
  publish(true, counters, at);
}

// Each analysis hands over immutable parts: readers get a consistent view that the
// output thread never touches again.
void LiveAnalysis::publish(bool final, const CounterValues& counters, const Moment& now) {
  auto snap = std::make_shared<AnalysisSnapshot>();
  snap->time = now.wall;
  snap->sequence = ++sequence_;
  snap->final = final;
  snap->counters = counters;
  for (auto& a : analyses_) a->publish(snap->parts, now, final);
  published_.publish(std::move(snap));
}

}  // namespace eacgm::analysis
