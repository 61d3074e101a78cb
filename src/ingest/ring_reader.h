// The one reader thread of the BPF ring buffer: sleeps in epoll until the kernel
// wakes it (or the poll timeout passes), decodes each record, passes calls through
// the enricher chain and hands them to the consumer in batches. It is the output
// thread: between rounds it runs the agent's round hook (GPU mailbox, ticks) and
// flushes the consumer, so consumers see everything on this one thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/call_event.h"
#include "core/consumer.h"
#include "core/counter_registry.h"
#include "core/result.h"
#include "ingest/call_batcher.h"
#include "ingest/count_drain.h"
#include "ingest/enricher.h"
#include "ingest/gpu_time_rings.h"
#include "ingest/hook_calls.h"
#include "ingest/host_wait_drain.h"
#include "ingest/inflight_drain.h"
#include "ingest/python_stacks.h"
#include "ingest/record_decoder.h"
#include "ingest/stuck_stacks.h"

struct ring_buffer;

namespace eacgm::ingest {

struct ReaderHooks {
  // Discovery hints; `stopped`: the kernel stopped the process until it is scanned
  // (the receiver must send SIGCONT). Runs on the reader thread: hand it over.
  std::function<void(std::uint32_t pid, bool exec, bool stopped)> on_hint;
  // After each round's calls, before the consumer flushes (on the reader thread).
  std::function<void()> on_round;
  // Problems worth one line (a failing poll), each kind once.
  std::function<void(const std::string&)> notice;
};

struct ReaderOptions {
  int poll_timeout_ms = 100;
  std::chrono::milliseconds tick = std::chrono::seconds(1);
  // How often the enrichers' per-process state is checked against live processes.
  std::chrono::milliseconds sweep = std::chrono::seconds(5);
};

class RingReader {
 public:
  // `counts`: the always-on maps to drain at each tick (nullptr: none); must outlive
  // the reader.
  static Result<std::unique_ptr<RingReader>> create(int ringbuf_fd, const probe::ProbeTable& table,
                                                    EnricherChain chain, std::shared_ptr<Consumer> consumer,
                                                    ReaderHooks hooks, ReaderOptions options,
                                                    CountSource* counts = nullptr);
  ~RingReader();
  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;

  // Declares the reader's and the enrichers' counters (before start()); the registry,
  // which must outlive the reader, is read at each tick for the consumer.
  void register_counters(CounterRegistry& registry);
  // Also reads the Python sampler's ring buffer (before start()): its samples are named
  // by `decoder` and handed to the consumer after each round.
  Status add_python_samples(int ringbuf_fd, std::unique_ptr<PythonStackDecoder> decoder);
  // Also drains the host-wait tracer's histograms at each tick (before start()); the
  // drain must outlive the reader.
  void add_host_waits(HostWaitDrain* drain) { waits_ = drain; }
  // Also reads the waiting calls in flight at each tick and at the end (before start()),
  // naming their probes from `table`; the source must outlive the reader.
  void add_inflight(InflightSource* source, const probe::ProbeTable& table);
  // Also reads the Python stacks of the threads stuck in those calls (after
  // add_python_samples, whose decoder names them; before start()).
  void add_stuck_stacks(PythonProcessLookup processes, StuckStackOptions options);
  // Also reads the hooks' GPU-time rings after each round (before start()); `rings` must
  // outlive the reader.
  void add_gpu_time(GpuTimeRings* rings) { gpu_rings_ = rings; }
  void start();
  // Drains what the kernel has queued, then stops the thread.
  void stop();
  DecodeCounters counters() const;

 private:
  RingReader(const probe::ProbeTable& table, EnricherChain chain, std::shared_ptr<Consumer> consumer,
             ReaderHooks hooks, ReaderOptions options);
  static int on_record(void* ctx, void* data, std::size_t size);
  static int on_python_sample(void* ctx, void* data, std::size_t size);
  void deliver_python_stacks();
  void loop();
  void end_round();
  void publish_counters();
  // `forget_gone`: also deletes the keys of the processes found gone before the read.
  void drain_counts(bool forget_gone = false);
  void drain_waits();
  void drain_inflight();
  void drain_gpu_time();

  ring_buffer* rb_ = nullptr;
  CallBatcher batcher_;
  std::unique_ptr<CountDrain> counts_;
  std::vector<CallCount> count_batch_;
  std::vector<CallTimings> timing_batch_;
  HostWaitDrain* waits_ = nullptr;
  std::vector<HostWaitProcess> wait_process_batch_;
  std::vector<HostWaitTimings> wait_batch_;
  std::unique_ptr<InflightDrain> inflight_;
  GpuTimeRings* gpu_rings_ = nullptr;
  GpuTimeBatch gpu_batch_;
  HookCalls hook_calls_;
  std::vector<CallCount> hook_counts_;
  std::vector<CallTimings> hook_timings_;
  std::vector<CallEvent> hook_events_;
  std::chrono::steady_clock::time_point next_gpu_scan_{};
  std::vector<InflightCall> inflight_batch_;
  std::unique_ptr<PythonStackDecoder> python_;
  std::unique_ptr<StuckStacks> stuck_;     // uses python_
  std::vector<PythonStack> python_batch_;  // reused: its first python_count_ stacks are this round's
  std::size_t python_count_ = 0;
  ReaderHooks hooks_;
  ReaderOptions options_;
  std::chrono::steady_clock::time_point next_tick_{}, next_sweep_{};
  bool poll_error_noticed_ = false;
  const CounterRegistry* registry_ = nullptr;  // read at each tick for the consumer
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::atomic<std::uint64_t> calls_{0}, hints_{0}, malformed_{0}, unknown_{0}, poll_errors_{0},
      forgotten_pids_{0}, counted_calls_{0}, sampled_calls_{0}, sampled_held_calls_{0}, count_keys_{0},
      python_samples_{0}, python_unnamed_{0}, python_reread_{0}, python_in_calls_{0}, host_waits_{0},
      wait_processes_{0}, in_flight_{0}, stuck_read_{0}, stuck_unknown_{0}, stuck_unreadable_{0};
};

}  // namespace eacgm::ingest
