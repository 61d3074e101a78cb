// What `trace`, `run` and `eacgm --demo` share: their options (parsed into an
// agent::TraceRequest) and running the agent until the trace ends, with the signals a
// command line expects.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/trace_setup.h"
#include "analysis/python_profile.h"
#include "cli/commands.h"

namespace eacgm::cli {

// --mode and --python-hz as given, copied into the request by apply() (in the
// subcommand's final callback, once CLI11 has parsed them) with the environment's
// EACGM_DUTY_* overrides.
struct TraceFlags {
  agent::TraceRequest request;
  std::string mode;  // "per-call", "always-on", "" (not given)
  std::uint32_t python_hz = 0;
  CLI::Option* python_hz_option = nullptr;  // whether --python-hz was given
  std::string folded;                       // --folded FILE
  bool no_gpu = false;                      // --no-gpu
  void apply();
};

// Registers --mode on a subcommand; `what` describes its default.
void add_mode_option(CLI::App& sub, std::string& mode, const char* what);
// --python-hz N and --folded FILE, as `run` and `trace` take them.
void add_python_sampling_options(CLI::App& sub, TraceFlags& flags, const std::string& hz_help,
                                 const std::string& folded_help);
// Registers the options common to trace and run on a subcommand.
void add_trace_options(CLI::App& sub, CommandContext& ctx, TraceFlags& flags);

// Writes the folded stacks to `path`; false, having said why, when it cannot.
bool write_folded(const std::string& path, const analysis::PythonHotSpots& hot);

// Runs the agent with a loaded configuration until the trace ends, feeding
// `consumers.head`. Returns the exit code: CMD's own when a command was traced. With
// --comm, a line at the end counts the calls of the other processes.
int run_trace(const agent::AgentConfig& config, const agent::TraceRequest& request,
              const agent::TraceConsumers& consumers);

// Ends the running trace as the signal `sig` would (any thread; async-signal-safe).
void request_stop(int sig);

// Prints "eacgm: <message>" on stderr.
void print_error(const std::string& message);
// Prints "eacgm <command>: <message>" on stderr (a message of one command's).
void print_command_error(std::string_view command, const std::string& message);

}  // namespace eacgm::cli
