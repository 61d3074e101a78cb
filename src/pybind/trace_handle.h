// TraceHandle: one trace run for Python. It starts the agent as `eacgm run` would (the
// analysis behind `run --json`, plus a CallQueue for the calls), runs it on a thread of
// its own, and stops it in order. Nothing here touches Python: the bindings
// (python_module.cpp) call it with the GIL released.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent.h"
#include "agent/trace_environment.h"
#include "agent/trace_setup.h"
#include "core/result.h"
#include "pybind/call_queue.h"

namespace eacgm::pybind {

struct TraceArgs {
  std::string config_text;          // TOML ([[probe]]s, catalogs, sections); "" defaults
  std::vector<std::string> probes;  // catalog or spec names; empty: the config's
  std::vector<int> pids;
  std::vector<std::string> command;
  std::string mode;  // "per-call", "always-on"
  double duration_s = 0;
  bool sample_gpus = true;
  std::optional<std::uint32_t> python_hz;  // unset: the config's [python] sample_hz
  std::optional<bool> host_waits;          // unset: on, as `eacgm run`
  std::size_t capacity = std::size_t{1} << 22;
  std::string search_path = agent::kDefaultSearchPath;  // $PATH, read by the module
  std::string nvml_library;                             // $EACGM_NVML_LIBRARY, read by the module
  agent::DutyOverrides duty;                            // EACGM_DUTY_*, read by the module
};

class TraceHandle {
 public:
  // Everything that can fail at start-up fails here: the error's kind says whether the
  // request was wrong (kUsage), the command could not start (kLaunch) or BPF failed.
  static Result<std::unique_ptr<TraceHandle>> start(const TraceArgs& args);
  ~TraceHandle();
  TraceHandle(const TraceHandle&) = delete;
  TraceHandle& operator=(const TraceHandle&) = delete;

  CallQueue& queue() { return *queue_; }
  // Asks the trace to end (a traced command gets SIGTERM) and waits for it; idempotent.
  void stop();
  // Waits for the trace to end by itself (the command exits, the duration passes).
  void wait();
  bool running() const { return !finished_.load(); }
  // The traced command's exit code (128 + signal), or 0 without a command; -1 while running.
  int exit_code() const { return finished_.load() ? exit_code_ : -1; }
  int command_pid() const { return command_pid_; }
  // The `eacgm run --json` document of the last snapshot (the final one after the end);
  // "" before the first.
  std::string report_json() const;
  // The agent's notices (warnings, the ready line) since the last call.
  std::vector<std::string> take_notices();

 private:
  TraceHandle() = default;
  void finish_thread();

  std::shared_ptr<CallQueue> queue_;
  agent::TraceConsumers consumers_;
  std::unique_ptr<agent::Agent> agent_;
  std::thread thread_;
  std::atomic<int> stop_{0};
  std::atomic<bool> finished_{false};
  int exit_code_ = 0;
  int command_pid_ = -1;
  std::mutex notices_mu_;
  std::vector<std::string> notices_;
  std::once_flag joined_;
};

}  // namespace eacgm::pybind
