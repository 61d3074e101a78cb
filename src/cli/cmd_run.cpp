// `eacgm run`: trace, then print a per-function summary (calls, errors, durations).
#include <cstdio>
#include <memory>
#include <mutex>

#include "analysis/call_summary.h"
#include "cli/commands.h"
#include "cli/trace_runner.h"
#include "export/summary_table.h"

namespace eacgm::cli {

void add_run_command(CLI::App& app, CommandContext& ctx) {
  auto opts = std::make_shared<TraceCommandOptions>();
  auto* sub = app.add_subcommand(
      "run", "trace (a command, pids, or everything), then print a per-function summary");
  add_trace_options(*sub, ctx, *opts);
  sub->footer("Example:\n  eacgm run -- python3 train.py");
  sub->final_callback([&ctx, opts] {
    auto summary = std::make_shared<analysis::CallSummary>();
    ingest::EventSink sink;
    // Only the reader thread adds; the summary is read after it has stopped.
    sink.on_call = [summary](const CallEvent& e) { summary->add(e); };
    ctx.exit_code = run_trace(ctx, *opts, std::move(sink), [&](const ingest::TraceReport& r) {
      std::fputs(exporting::render_table(*summary).c_str(), stdout);
      std::printf("accounting: %s\n", format_report(r).c_str());
      std::fflush(stdout);
    });
  });
}

}  // namespace eacgm::cli
