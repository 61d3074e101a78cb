// Consumer: the one interface of everything that takes what a trace sees (batches of
// traced calls, GPU snapshots, host waits, the calls in flight, ticks, flushes). Every call comes from the
// one output thread (the ring-buffer reader while tracing, the caller's after it), so consumers need no
// locks; a ConsumerList hands each call to its members in order.
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "core/call_counts.h"
#include "core/call_event.h"
#include "core/counter_registry.h"
#include "core/gpu_sample.h"
#include "core/gpu_span.h"
#include "core/host_wait.h"
#include "core/inflight_call.h"
#include "core/probe_cost.h"
#include "core/python_stack.h"

namespace eacgm {

class Consumer {
 public:
  virtual ~Consumer() = default;
  // Calls decoded in one round of the reader, in ring-buffer order.
  virtual void on_calls(std::span<const CallEvent> calls) { (void)calls; }
  // Always-on mode: what counted probes saw since the last delivery (about once a
  // second, before the tick): calls per (process, probe, handle), sampled durations.
  virtual void on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) {
    (void)counts;
    (void)timings;
  }
  // One GPU sampling pass, processes already reduced to the traced ones.
  virtual void on_gpu(const GpuSnapshot& snapshot) { (void)snapshot; }
  // Futex and poll-family waits of traced processes since the last delivery (the
  // host-wait tracer, when it runs; about once a second, before the tick), and the
  // processes first seen waiting, or seen exiting, since then.
  virtual void on_host_waits(std::span<const HostWaitProcess> processes,
                             std::span<const HostWaitTimings> waits) {
    (void)processes;
    (void)waits;
  }
  // The waiting calls in flight when the kernel's table was read at `scan_mono_ns`
  // (CLOCK_MONOTONIC): every one of them, in no order, about once a second before the
  // tick, and once more at the end.
  virtual void on_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns) {
    (void)calls;
    (void)scan_mono_ns;
  }
  // The probes' estimated cost per traced process (agent/budget_controller.h), once a
  // tick just before on_tick, and once more before on_end.
  virtual void on_overhead(const OverheadReport& report) { (void)report; }
  // Python stacks sampled since the last delivery (the Python sampler, when it runs).
  virtual void on_python_stacks(std::span<const PythonStack> stacks) { (void)stacks; }
  // What hooked processes timed on the GPU and counted since the last delivery (after
  // each reader round, when there is any).
  virtual void on_gpu_time(const GpuTimeBatch& batch) { (void)batch; }
  // About once a second (the agent's tick), with the agent's counters read on this
  // thread: publish snapshots, roll windows.
  virtual void on_tick(std::chrono::steady_clock::time_point now, const CounterValues& counters) {
    (void)now;
    (void)counters;
  }
  // After each reader round: write out what is buffered.
  virtual void flush() {}
  // Once, after the last calls and samples, with the final counters.
  virtual void on_end(const CounterValues& counters) { (void)counters; }
};

// A consumer in front of another (a filter, the budget): every call goes on to `inner`
// unless the derived class overrides it, so that a call added to Consumer reaches the
// consumers behind it without each wrapper having to name it.
class ForwardingConsumer : public Consumer {
 public:
  explicit ForwardingConsumer(std::shared_ptr<Consumer> inner) : inner_(std::move(inner)) {}

  void on_calls(std::span<const CallEvent> calls) override { inner_->on_calls(calls); }
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) override {
    inner_->on_counts(counts, timings);
  }
  void on_gpu(const GpuSnapshot& snapshot) override { inner_->on_gpu(snapshot); }
  void on_host_waits(std::span<const HostWaitProcess> processes,
                     std::span<const HostWaitTimings> waits) override {
    inner_->on_host_waits(processes, waits);
  }
  void on_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns) override {
    inner_->on_inflight(calls, scan_mono_ns);
  }
  void on_overhead(const OverheadReport& report) override { inner_->on_overhead(report); }
  void on_python_stacks(std::span<const PythonStack> stacks) override { inner_->on_python_stacks(stacks); }
  void on_gpu_time(const GpuTimeBatch& batch) override { inner_->on_gpu_time(batch); }
  void on_tick(std::chrono::steady_clock::time_point now, const CounterValues& counters) override {
    inner_->on_tick(now, counters);
  }
  void flush() override { inner_->flush(); }
  void on_end(const CounterValues& counters) override { inner_->on_end(counters); }

 protected:
  std::shared_ptr<Consumer> inner_;
};

class ConsumerList final : public Consumer {
 public:
  void add(std::shared_ptr<Consumer> consumer) { members_.push_back(std::move(consumer)); }
  bool empty() const { return members_.empty(); }

  void on_calls(std::span<const CallEvent> calls) override {
    for (auto& m : members_) m->on_calls(calls);
  }
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) override {
    for (auto& m : members_) m->on_counts(counts, timings);
  }
  void on_gpu(const GpuSnapshot& snapshot) override {
    for (auto& m : members_) m->on_gpu(snapshot);
  }
  void on_host_waits(std::span<const HostWaitProcess> processes,
                     std::span<const HostWaitTimings> waits) override {
    for (auto& m : members_) m->on_host_waits(processes, waits);
  }
  void on_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns) override {
    for (auto& m : members_) m->on_inflight(calls, scan_mono_ns);
  }
  void on_overhead(const OverheadReport& report) override {
    for (auto& m : members_) m->on_overhead(report);
  }
  void on_python_stacks(std::span<const PythonStack> stacks) override {
    for (auto& m : members_) m->on_python_stacks(stacks);
  }
  void on_gpu_time(const GpuTimeBatch& batch) override {
    for (auto& m : members_) m->on_gpu_time(batch);
  }
  void on_tick(std::chrono::steady_clock::time_point now, const CounterValues& counters) override {
    for (auto& m : members_) m->on_tick(now, counters);
  }
  void flush() override {
    for (auto& m : members_) m->flush();
  }
  void on_end(const CounterValues& counters) override {
    for (auto& m : members_) m->on_end(counters);
  }

 private:
  std::vector<std::shared_ptr<Consumer>> members_;
};

}  // namespace eacgm
