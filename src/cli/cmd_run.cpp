// `eacgm run`: trace, then print a per-function summary (calls, errors, durations), what
// the GPUs and the traced processes on them did meanwhile, NCCL bandwidth and arrival
// skew, and the memory the processes allocated and leaked; as tables, or with --json as
// one JSON document (docs/report.md).
#include <cstdio>
#include <memory>

#include "analysis/live_analysis.h"
#include "cli/commands.h"
#include "cli/trace_runner.h"
#include "core/config_parse.h"
#include "export/api_json.h"
#include "export/gpu_activity_table.h"
#include "export/gpu_work_table.h"
#include "export/memory_table.h"
#include "export/nccl_table.h"
#include "export/overhead_report.h"
#include "export/summary_table.h"

namespace eacgm::cli {

void add_run_command(CLI::App& app, CommandContext& ctx) {
  auto opts = std::make_shared<TraceCommandOptions>();
  auto* sub =
      app.add_subcommand("run", "trace (a command, pids, or everything), then print a per-function summary");
  add_trace_options(*sub, ctx, *opts);
  opts->default_mode = TraceMode::kAlwaysOn;
  add_mode_option(*sub, opts->mode, "always-on");
  auto json = std::make_shared<bool>(false);
  sub->add_flag(
      "--json", *json,
      "print one JSON document (functions, gpus, processes, memory, gpu_work, nccl, ops, accounting; "
      "docs/report.md) instead of the tables; the traced command's stdout goes to stderr");
  sub->footer(
      "Example:\n  eacgm run -- python3 train.py\n  eacgm run --json -- python3 train.py > report.json");
  sub->final_callback([&ctx, opts, json] {
    if (*json) opts->command_stdout_to_stderr = true;
    auto config = load_config(ctx.config_path);
    if (!config) {
      print_error(config.error());
      ctx.exit_code = 2;
      return;
    }
    auto analysis = std::make_shared<analysis::LiveAnalysis>();
    ctx.exit_code = run_trace(*config, *opts, analysis);
    // The final snapshot: published after the last calls and samples were in.
    if (auto snap = analysis->snapshot(); snap && snap->final) {
      if (*json) {
        std::fputs(exporting::run_report_json(*snap, exporting::ApiOptions{}).c_str(), stdout);
        std::fflush(stdout);
        return;
      }
      std::fputs(exporting::render_table(snap->calls).c_str(), stdout);
      std::fputs(exporting::render_gpu_work(snap->work).c_str(), stdout);
      std::fputs(exporting::render_nccl_table(snap->nccl, snap->nccl_skew).c_str(), stdout);
      std::fputs(exporting::render_gpu_activity(snap->gpu).c_str(), stdout);
      std::fputs(exporting::render_memory_table(snap->memory).c_str(), stdout);
      std::fputs(exporting::render_overhead(snap->overhead).c_str(), stdout);
      std::printf("accounting: %s\n", snap->counters.accounting_line().c_str());
      std::fflush(stdout);
    }
  });
}

}  // namespace eacgm::cli
