// `eacgm run`: trace, then print a per-function summary (calls, errors, durations) and
// what the GPUs and the traced processes on them did meanwhile.
#include <cstdio>
#include <memory>
#include <mutex>

#include "analysis/call_summary.h"
#include "analysis/gpu_activity.h"
#include "cli/commands.h"
#include "cli/trace_runner.h"
#include "core/config_parse.h"
#include "export/gpu_activity_table.h"
#include "export/summary_table.h"

namespace eacgm::cli {

void add_run_command(CLI::App& app, CommandContext& ctx) {
  auto opts = std::make_shared<TraceCommandOptions>();
  auto* sub =
      app.add_subcommand("run", "trace (a command, pids, or everything), then print a per-function summary");
  add_trace_options(*sub, ctx, *opts);
  sub->footer("Example:\n  eacgm run -- python3 train.py");
  sub->final_callback([&ctx, opts] {
    auto config = load_config(ctx.config_path);
    if (!config) {
      print_error(config.error());
      ctx.exit_code = 2;
      return;
    }
    auto summary = std::make_shared<analysis::CallSummary>();
    auto activity = std::make_shared<analysis::GpuActivity>();
    TraceOutputs out;
    // One thread at a time adds (see TraceOutputs); both are read after the trace.
    out.events.on_call = [summary, activity](const CallEvent& e) {
      summary->add(e);
      activity->add(e);
    };
    out.on_gpu = [activity](const GpuSnapshot& s) { activity->add(s); };
    out.on_end = [summary, activity](const ingest::TraceReport& r) {
      std::fputs(exporting::render_table(*summary).c_str(), stdout);
      std::fputs(exporting::render_gpu_activity(*activity).c_str(), stdout);
      std::printf("accounting: %s\n", format_report(r).c_str());
      std::fflush(stdout);
    };
    ctx.exit_code = run_trace(*config, *opts, std::move(out));
  });
}

}  // namespace eacgm::cli
