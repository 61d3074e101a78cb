// Agent: one running trace as a library object. It selects the probe specs, starts a
// traced command at its start gate, loads and attaches the probes, samples the GPUs
// beside the trace, runs the control loop (discovery, status, end conditions) and
// stops in order: detach, drain the ring buffer, last GPU pass, the consumers' end.
// `eacgm trace` and `eacgm run` are thin commands over it; everything they output is a
// Consumer.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent_config.h"
#include "agent/duty_cycle.h"
#include "agent/launched_command.h"
#include "agent/trace_environment.h"
#include "core/consumer.h"
#include "core/counter_registry.h"
#include "core/result.h"
#include "ingest/trace_session.h"
#include "sample/cgroup_scope.h"

namespace eacgm::sample {
class GpuFeed;
class SnapshotMailbox;
}  // namespace eacgm::sample

namespace eacgm::agent {

class BudgetController;
class CaptureRecorder;

struct AgentOptions {
  AgentConfig config;
  std::vector<std::string> probes;        // catalog or spec names; empty: config or defaults
  std::vector<int> pids;                  // trace these and their children
  std::vector<std::string> command;       // run and trace this command (after `--`)
  double duration_s = 0;                  // 0: until CMD exits, the pids are gone, or a stop
  std::string btf_path;                   // custom kernel BTF
  bool periodic_status = false;           // status lines every trace.status_interval_s
  std::vector<std::string> side_command;  // started beside the trace, not filtered (--demo)
  bool sample_gpus = true;                // NVML sampling beside the trace (gpu.sample too)
  bool command_stdout_to_stderr = false;  // the command's stdout goes to our stderr
  std::uint32_t python_hz = 0;            // Python stack samples per second per CPU; 0: none
  bool host_waits = false;                // time futex and poll-family waits (the host-wait tracer)
  // From the user's environment, read by the program's edge (the command line, the Python
  // module): $PATH, where `command` is found; $EACGM_NVML_LIBRARY ("": the driver's NVML).
  std::string search_path = kDefaultSearchPath;
  std::string nvml_library;
  DutyOverrides duty;  // the environment's EACGM_DUTY_*, over [trace]'s
  // Polled by the control loop (about every 50 ms, on run()'s thread): true ends the
  // trace as a stop would, with exit code 0 (a daemon reloading its configuration).
  std::function<bool()> should_end;
  // On-demand captures (a daemon's): given the session's switch while the trace runs.
  std::shared_ptr<CaptureRecorder> capture;
};

class Agent {
 public:
  using Notice = std::function<void(const std::string&)>;

  // Everything that can fail at start-up fails here, before the command runs: a bad
  // probe name or pid or a missing symbol (ErrorKind::kUsage), a command that cannot
  // be started (kLaunch), BPF or attach failures (kFailure). Notices made meanwhile
  // are held and printed by run(), so a failure reads as one line.
  static Result<std::unique_ptr<Agent>> start(AgentOptions options, std::shared_ptr<Consumer> consumer,
                                              Notice notice);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Releases the command and runs until it exits, the traced pids are gone, the
  // duration passes or `stop_signal` becomes non-zero; then stops in order and hands
  // the final counters to the consumer. Returns the exit code: the command's own, or
  // 128 + the signal. Call once.
  int run(const std::atomic<int>& stop_signal);

  // Every counter of the trace (the accounting line, metrics); readable from any thread.
  const CounterRegistry& counters() const { return counters_; }
  ingest::TraceSession& session() { return *session_; }
  // The traced command's pid, or -1.
  int command_pid() const { return child_ ? child_->pid() : -1; }

 private:
  Agent(AgentOptions options, std::shared_ptr<Consumer> consumer, Notice notice);
  struct DutyPlan;
  // start()'s steps, in order: the targets, the trace's options, the always-on budget,
  // the session, the user's specs against what it found, the GPU feed.
  Status start_up();
  Status check_target_pids();
  void fill_trace_options(std::vector<ProbeSpec> specs);
  Status start_budget(DutyPlan& duty);
  Status start_session(bool sample_gpus, DutyPlan duty);
  Status check_user_probes();
  void start_gpu_feed();
  void release_notices();
  void say(const std::string& message);
  void drain_gpu();
  std::string ready_line() const;
  void stop_everything();

  AgentOptions options_;
  std::shared_ptr<Consumer> consumer_;
  std::shared_ptr<BudgetController> budget_;  // always-on mode: in front of consumer_
  Notice notice_;
  bool notices_live_ = false;
  std::vector<std::string> held_notices_;
  std::shared_ptr<const sample::CgroupScope> scope_;  // [trace] cgroup; null: none
  ingest::TraceOptions trace_options_;
  CounterRegistry counters_;
  std::optional<LaunchedCommand> child_;
  std::optional<LaunchedCommand> side_;
  std::shared_ptr<sample::SnapshotMailbox> mailbox_;
  std::unique_ptr<sample::GpuFeed> gpu_feed_;
  std::unique_ptr<ingest::TraceSession> session_;
  // Always-on with a budget: attaches and detaches the cycled probes through session_,
  // so it is stopped before it (stop_everything) and declared after it.
  std::shared_ptr<DutyCycle> duty_;
  std::vector<std::string> unmatched_;  // warnings for user specs whose library matched nothing
  std::atomic<std::uint64_t> unmatched_count_{0};
  std::chrono::steady_clock::time_point started_;
  bool ran_ = false;
};

// Maps a start-up error to the exit code of `eacgm trace/run` (2 usage, 127 launch, 1).
int exit_code_for(ErrorKind kind);

}  // namespace eacgm::agent
