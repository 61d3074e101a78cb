// The `eacgm` command: parses the command line and dispatches to a subcommand.
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "cli/environment.h"
#include "cli/usage_errors.h"
#include "core/build_info.h"

namespace {

int run(int argc, char** argv) {
  using namespace eacgm::cli;
  apply_process_environment();
  CLI::App app{
      "eacgm: zero-instrumentation monitoring of GPU/AI workloads (CUDA, NCCL, PyTorch, Python) with eBPF "
      "and NVML"};
  app.set_version_flag("--version",
                       fmt::format("eacgm {} ({})", eacgm::build_version(), eacgm::build_commit()));
  app.require_subcommand(0, 1);
  CommandContext ctx;
  bool demo = false;
  app.add_option("--config", ctx.config_path, "configuration file (TOML)");
  app.add_flag("--demo", demo,
               "without a command: trace the bundled CUDA demo program and show its calls as text "
               "(eacgm serve --demo: in the web UI)");

  add_trace_command(app, ctx);
  add_run_command(app, ctx);
  add_probes_command(app, ctx);
  add_gpu_command(app, ctx);
  add_serve_command(app, ctx);
  add_govern_command(app, ctx);
  add_history_command(app, ctx);
  add_report_command(app, ctx);
  add_capture_command(app, ctx);
  add_flight_recorder_command(app, ctx);
  add_job_command(app, ctx);
  add_top_command(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return exit_for_parse_error(app, e);  // usage errors: one line, exit code 2
  }
  if (!app.get_subcommands().empty()) return ctx.exit_code;
  if (demo) return run_demo(ctx);
  // Tracing the whole machine is `eacgm trace --format text`, asked for by name.
  std::fprintf(stderr, "%s\n", usage_text(app).c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // Errors are reported where they happen; what still escapes (out of memory) ends
  // eacgm with one line instead of an abort.
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "eacgm: internal error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "eacgm: internal error\n");
  }
  return 70;  // EX_SOFTWARE
}
