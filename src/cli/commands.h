// The subcommands of `eacgm`; each file src/cli/cmd_*.cpp adds one to the CLI.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace eacgm::cli {

// Shared by every subcommand: the config file and the exit code to return.
struct CommandContext {
  std::string config_path;
  int exit_code = 0;
};

void add_trace_command(CLI::App& app, CommandContext& ctx);
void add_run_command(CLI::App& app, CommandContext& ctx);
void add_probes_command(CLI::App& app, CommandContext& ctx);
void add_gpu_command(CLI::App& app, CommandContext& ctx);
void add_serve_command(CLI::App& app, CommandContext& ctx);
void add_govern_command(CLI::App& app, CommandContext& ctx);
void add_history_command(CLI::App& app, CommandContext& ctx);
void add_report_command(CLI::App& app, CommandContext& ctx);
void add_capture_command(CLI::App& app, CommandContext& ctx);
void add_flight_recorder_command(CLI::App& app, CommandContext& ctx);
void add_job_command(CLI::App& app, CommandContext& ctx);
void add_top_command(CLI::App& app, CommandContext& ctx);

// `eacgm --demo`: the bundled CUDA demo started beside a trace of its calls, in text.
int run_demo(const CommandContext& ctx);
// The bundled demo program beside this binary, looping: `eacgm --demo`, `serve --demo`.
std::vector<std::string> demo_command();

}  // namespace eacgm::cli
