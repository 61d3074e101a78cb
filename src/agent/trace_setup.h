// The one place a job's trace is set up: from what the job asks (TraceRequest) and the
// configuration, the probe specs, the mode, the Python sampling rate, host waits, the
// agent's options and the consumers the trace feeds. `eacgm trace`, `run` and `serve`
// (and anything else that runs the agent) set up here, so each job differs from the
// others only where its TraceJob says.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent.h"
#include "agent/agent_config.h"
#include "agent/capture_recorder.h"
#include "agent/trace_environment.h"
#include "analysis/comm_filter.h"
#include "analysis/live_analysis.h"
#include "analysis/python_profile.h"
#include "core/consumer.h"
#include "core/result.h"
#include "core/trace_mode.h"

namespace eacgm::agent {

enum class TraceJob : std::uint8_t {
  kTrace,  // every call to an output (JSON Lines, text, a timeline); per call by default
  kRun,    // a report at the end: the analysis, Python hot spots, host waits; always-on by default
  kServe,  // the node agent: the analysis for the daemon's routes, a Python window; always-on
};

struct TraceRequest {
  TraceJob job = TraceJob::kTrace;
  std::vector<std::string> probes;         // catalog or spec names; empty: the config's, or the defaults
  std::vector<int> pids;                   // trace these and their children
  std::vector<std::string> command;        // run and trace this command
  double duration_s = 0;                   // 0: until the command exits, the pids are gone, or a stop
  std::string btf_path;                    // a kernel BTF file
  bool periodic_status = false;            // status lines while tracing
  std::vector<std::string> side_command;   // started beside the trace, not filtered (the demo)
  bool sample_gpus = true;                 // false: no NVML sampling (--no-gpu)
  bool command_stdout_to_stderr = false;   // the command's stdout goes to our stderr
  std::vector<std::string> comms;          // only these process names' calls reach the consumers
  std::optional<TraceMode> mode;           // unset: [trace] mode, else the job's default
  std::optional<std::uint32_t> python_hz;  // unset: [python] sample_hz
  bool python_stacks = false;              // kTrace: sample Python stacks too (for folded stacks)
  std::string search_path = kDefaultSearchPath;  // $PATH (AgentOptions::search_path)
  std::string nvml_library;                      // $EACGM_NVML_LIBRARY (AgentOptions::nvml_library)
  DutyOverrides duty;                            // the environment's EACGM_DUTY_*, read by the caller
};

TraceMode trace_mode(const TraceRequest& request, const AgentConfig& config);
// Python stack samples per second per CPU; 0 when the job does not sample.
std::uint32_t python_hz(const TraceRequest& request, const AgentConfig& config);
// Whether the host-wait tracer runs: [trace] host_waits, else on for `run` only.
bool host_waits(const TraceRequest& request, const AgentConfig& config);
AgentOptions agent_options(const TraceRequest& request, const AgentConfig& config);

// What the trace feeds, made once per job (a daemon keeps them across reloads).
struct TraceConsumers {
  std::shared_ptr<analysis::LiveAnalysis> analysis;  // kRun, kServe: the aggregators
  std::shared_ptr<analysis::PythonProfile> python;   // kTrace with python_stacks: the stacks
  std::shared_ptr<analysis::CommFilter> filter;      // with comms: what it left out
  std::shared_ptr<Consumer> head;                    // what the agent is given
  std::shared_ptr<CaptureRecorder> capture;          // kServe: on-demand captures
};
// `output` (may be null) is the job's own consumer: the event stream, the daemon's live
// stream. `analysis`: for kRun and kServe, the one to feed (a daemon makes it first, for
// its routes); null: a new one. `capture`: for kServe, the recorder the daemon's capture
// route asks (null: a new one).
TraceConsumers make_consumers(const TraceRequest& request, const AgentConfig& config,
                              std::shared_ptr<Consumer> output,
                              std::shared_ptr<analysis::LiveAnalysis> analysis = nullptr,
                              std::shared_ptr<CaptureRecorder> capture = nullptr);
// The analysis follows `config`'s [python] settings (a daemon's reload; before a trace).
void configure_analysis(analysis::LiveAnalysis& analysis, const TraceRequest& request,
                        const AgentConfig& config);

}  // namespace eacgm::agent
