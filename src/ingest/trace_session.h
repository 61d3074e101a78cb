// A running trace: BPF loaded, libraries discovered and attached, the reader
// thread delivering events. The CLI and (later) the agent daemon drive it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/consumer.h"
#include "core/counter_registry.h"
#include "core/duty_window.h"
#include "core/probe_spec.h"
#include "core/result.h"
#include "ingest/gpu_time_rings.h"
#include "ingest/process_maps.h"
#include "ingest/python_calls.h"
#include "ingest/python_process.h"
#include "ingest/ring_reader.h"
#include "ingest/trace_config.h"
#include "probe/attacher.h"
#include "probe/bpf_tracer.h"
#include "probe/host_wait_tracer.h"
#include "probe/probe_table.h"
#include "probe/py_sampler.h"

namespace eacgm::ingest {

struct TraceOptions {
  TraceConfig config;
  std::vector<ProbeSpec> specs;
  bool filter_pids = false;  // trace only `pids` and their children
  // [trace] cgroup: the subtree's directory (an open descriptor; -1: none) and whether a
  // process is in it now (for the Python processes sampled).
  int scope_cgroup_fd = -1;
  std::function<bool(std::uint32_t pid)> in_scope;
  bool stop_on_load = false;    // hold them at loader hints until attached
  bool track_in_flight = true;  // [hangs] in_flight
  std::vector<int> pids;
  std::set<int> never_stop;  // of `pids`: never held (and neither are their children)
  std::string btf_path;
  // [python] file_filter: a glob on the source file of the Python calls paired from the
  // python catalog's records ("" all).
  std::string python_file_filter;
  // Python stack sampling: samples per second on each CPU of the traced Python
  // processes' on-CPU threads; 0: none.
  std::uint32_t python_hz = 0;
  // With Python sampling: the threads of sampled processes in a waiting call this old get
  // their Python stack read ([hangs] min_age_s; ingest/stuck_stacks.h).
  double stuck_stack_min_age_s = 5.0;
  // Time the traced processes' futex and poll-family waits (the host-wait tracer).
  bool host_waits = false;
};

// Everything counted during a trace; nothing is lost silently.
struct TraceReport {
  std::uint64_t events = 0;
  std::uint64_t ringbuf_drops = 0;
  std::uint64_t lost_exits = 0;           // entries never followed by an exit
  std::uint64_t orphan_exits = 0;         // exits whose entry was seen but not kept (too deep)
  std::uint64_t exits_before_attach = 0;  // exits of calls entered before the attach
  std::uint64_t too_deep = 0;             // calls not traced: a thread had too many open
  std::uint64_t read_faults = 0;
  std::uint64_t malformed = 0;
  std::uint64_t unknown_probe = 0;
  probe::AttachStats attach;
};

class TraceSession {
 public:
  using Notice = std::function<void(const std::string&)>;
  // Loads the BPF side, starts the reader thread (which hands calls to `consumer` and
  // runs `on_round` after each round) and attaches what exists now. The session's
  // counters go into `registry`, which must outlive it.
  static Result<std::unique_ptr<TraceSession>> start(const TraceOptions& options,
                                                     std::shared_ptr<Consumer> consumer,
                                                     std::function<void()> on_round, Notice notice,
                                                     CounterRegistry& registry);
  ~TraceSession();

  // Records each call of `pid` to the counted probes (an on-demand capture) instead of
  // counting it, or counts again (BpfTracer::set_capture_pid).
  Status set_capture(std::uint32_t pid, bool captured);
  // Attaches a command's executable before it runs (USDT probes in the interpreter
  // itself, such as python3.11's, would otherwise miss its start).
  void scan_executable(const std::string& path);
  // Handles discovery hints and periodic rescans for up to `budget`; returns early
  // when `wake()` is called.
  void service(std::chrono::milliseconds budget);
  void wake();
  // Drains the ring buffer and stops the reader; the session can then be reported.
  void stop();
  TraceReport report() const;
  const probe::ProbeTable& probes() const { return table_; }

  // Run-time probe control (any thread; errors once the session is stopped).
  // Entries of each attached probe (probe id -> hits) while enabled, every process
  // counted, whether or not the pid filter traces it.
  std::map<std::uint32_t, std::uint64_t> probe_hits() const;
  // Mutes (or unmutes) one attached probe by id: it neither records nor counts.
  Status set_probe_muted(std::uint32_t probe_id, bool muted);
  // Mutes (or unmutes) every attached probe of this display name (and ones attached
  // later); an error when none has it.
  Status set_probe_muted(const std::string& function, bool muted);
  // Times one call in 2^shift per CPU of one counted probe (the budget controller; the
  // output thread, also while the session stops).
  Status set_probe_sample_shift(std::uint32_t probe_id, std::uint8_t shift);
  // The budget's duty cycle: attaches the cycled counted probes and opens the window in
  // which they count (true), or closes it and detaches them (false). `moved` gets each
  // move of the window (switching, then open or off) as it happens: the close before
  // the slow detach, the open after the attach.
  using WindowMoved = std::function<void(std::chrono::steady_clock::time_point at, DutyWindow state)>;
  Status set_cycled_attached(bool attached, const WindowMoved& moved);
  // Closes the duty window for good, before stop() detaches every probe (one by one: the
  // other probes' calls of that time must not count as made inside it); when it closed.
  Result<std::chrono::steady_clock::time_point> close_duty_window();
  // When process `pid` ended, if the trace saw it end.
  std::optional<std::chrono::steady_clock::time_point> process_exit(std::uint32_t pid) const;
  // Detaches a library file's probes (not attached again while it is the same file).
  Status detach_library(const std::string& path);
  // The library files considered, attached or not.
  std::vector<probe::AttachedFileInfo> libraries() const;

 private:
  TraceSession(const TraceOptions& options, Notice notice);
  // Sets the duty window's state in the kernel; when it was set.
  Result<std::chrono::steady_clock::time_point> move_duty_window(DutyWindow state);
  struct Hint {
    std::uint32_t pid;
    bool stopped;
    bool exec;
  };
  void on_hint(std::uint32_t pid, bool stopped, bool exec);
  static void resume(const std::deque<Hint>& hints);
  void rescan();
  // Python stack sampling: whether a process runs an interpreter to sample (at its
  // hints and rescans), and forgetting the ones that are gone.
  void check_python(std::uint32_t pid, bool exec);
  void rescan_python(const std::vector<int>& targets);
  void start_python_sampling(RingReader& reader);
  // Loads the host-wait tracer; without it, tracing goes on and says why.
  void start_host_waits();
  void register_counters(CounterRegistry& registry);
  void publish_attach_counts();

  TraceOptions options_;
  Notice notice_;
  probe::ProbeTable table_;
  std::unique_ptr<probe::BpfTracer> bpf_;
  std::unique_ptr<probe::Attacher> attacher_;
  std::unique_ptr<CountSource> count_source_;     // always-on maps; before reader_, which reads them
  std::unique_ptr<probe::PySampler> py_sampler_;  // null: no Python sampling; before reader_, which reads it
  // The host-wait tracer and its drain (null: none); before reader_, which drains them.
  std::unique_ptr<probe::HostWaitTracer> wait_tracer_;
  std::unique_ptr<BpfHostWaitSource> wait_source_;
  std::unique_ptr<HostWaitDrain> wait_drain_;
  std::unique_ptr<GpuTimeRings> gpu_rings_;          // the hooks' GPU time; before reader_, which reads it
  std::unique_ptr<InflightSource> inflight_source_;  // the calls in flight; before reader_, which reads it
  std::unique_ptr<RingReader> reader_;
  PythonProcessFinder py_finder_;
  enum class PyState { kNotYet, kSampled, kUnsupported };
  std::map<std::uint32_t, PyState> py_processes_;  // checked processes (the attaching thread's)
  std::set<std::string> py_said_;                  // problems said once
  std::atomic<std::uint64_t> py_sampled_{0};
  // Mappings of hinted processes, for names of processes gone before their records are read.
  std::shared_ptr<ProcessMapsCache> remembered_maps_ = std::make_shared<ProcessMapsCache>();
  // Attach counts as last published by the thread that attaches, for readers anywhere.
  std::atomic<std::uint64_t> probes_{0}, libraries_{0}, attach_failures_{0}, unresolved_{0},
      files_forgotten_{0};

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Hint> hints_;
  bool woken_ = false;
  std::chrono::steady_clock::time_point next_rescan_;
  std::atomic<bool> stopped_{false};
  std::atomic<std::uint64_t> final_pending_{0};
  probe::AttachStats final_attach_;
};

}  // namespace eacgm::ingest
