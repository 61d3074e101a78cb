// What `trace`, `run` and the default job share: their options, and running the agent
// with a consumer until the trace ends.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/python_profile.h"
#include "cli/commands.h"
#include "core/config.h"
#include "core/consumer.h"

namespace eacgm::cli {

struct TraceCommandOptions {
  std::vector<int> pids;
  std::vector<std::string> probes;   // catalog or spec names; empty: config or defaults
  double duration_s = 0;             // 0: until CMD exits or a signal
  std::vector<std::string> command;  // after `--`
  std::string btf_path;
  bool periodic_status = false;                  // status lines on stderr while tracing
  std::vector<std::string> side_command;         // started beside the trace, not filtered (--demo)
  bool no_gpu = false;                           // --no-gpu: no NVML sampling beside the trace
  bool command_stdout_to_stderr = false;         // the event stream is on our stdout
  std::vector<std::string> comms;                // --comm: show only these process names
  std::string mode;                              // --mode: "per-call", "always-on", "" (config or default)
  TraceMode default_mode = TraceMode::kPerCall;  // the command's own, under config and flag
  std::optional<std::uint32_t> python_hz;        // --python-hz; unset: [python] sample_hz (run only)
  bool python_sampling = false;                  // the command samples Python stacks (run)
  bool host_waits = false;                       // the command reports host waits (run), unless
                                                 // [trace] host_waits = false
};

// The Python sampling rate a command runs with: none unless it samples, else its flag,
// else the config file's.
std::uint32_t chosen_python_hz(const TraceCommandOptions& opts, const Config& config);

// --python-hz N and --folded FILE, as `run` and `trace` take them.
struct PythonSamplingFlags {
  std::uint32_t hz = 0;
  CLI::Option* hz_option = nullptr;  // whether --python-hz was given
  std::string folded;
  // Copies a given --python-hz into `opts` (in the subcommand's final callback).
  void apply(TraceCommandOptions& opts) const;
};
void add_python_sampling_options(CLI::App& sub, PythonSamplingFlags& flags, const std::string& hz_help,
                                 const std::string& folded_help);
// Writes the folded stacks to `path`; false, having said why, when it cannot.
bool write_folded(const std::string& path, const analysis::PythonHotSpots& hot);

// The mode a command runs in: its --mode flag, else the config file's, else its own default.
TraceMode chosen_mode(const std::string& flag, std::optional<TraceMode> configured, TraceMode fallback);
// Registers --mode on a subcommand; `what` describes its default.
void add_mode_option(CLI::App& sub, std::string& mode, const char* what);

// Registers the options common to trace and run on a subcommand.
void add_trace_options(CLI::App& sub, CommandContext& ctx, TraceCommandOptions& opts);

// Runs the agent with a loaded configuration (see load_config) until the trace ends;
// `consumer` gets every call and GPU sample, and the final counters. Returns the exit
// code: CMD's own when a command was traced. With `comms`, only those processes' calls
// reach `consumer`, and a line at the end counts the others.
int run_trace(const Config& config, const TraceCommandOptions& opts, std::shared_ptr<Consumer> consumer);

// Prints "eacgm: <message>" on stderr.
void print_error(const std::string& message);

}  // namespace eacgm::cli
