// The flow shared by `trace`, `run` and the default job: config, probe selection,
// target processes, the trace session, periodic status, and the final accounting.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "ingest/ring_reader.h"
#include "ingest/trace_session.h"

namespace eacgm::cli {

struct TraceCommandOptions {
  std::vector<int> pids;
  std::vector<std::string> probes;   // catalog or spec names; empty: config or defaults
  double duration_s = 0;             // 0: until CMD exits or a signal
  std::vector<std::string> command;  // after `--`
  std::string btf_path;
  bool periodic_status = false;      // status lines on stderr while tracing
  std::vector<std::string> side_command;  // started beside the trace, not filtered (--demo)
};

// Registers the options common to trace and run on a subcommand.
void add_trace_options(CLI::App& sub, CommandContext& ctx, TraceCommandOptions& opts);

// Runs the trace; `on_end` sees the final report after the ring buffer is drained.
// Returns the exit code: CMD's own when a command was traced.
int run_trace(const CommandContext& ctx, const TraceCommandOptions& opts, ingest::EventSink sink,
              const std::function<void(const ingest::TraceReport&)>& on_end);

// "events=.. drops=.. lost_exits=.. ..." for status lines and summaries.
std::string format_report(const ingest::TraceReport& r);

// Prints "eacgm: <message>" on stderr.
void print_error(const std::string& message);

}  // namespace eacgm::cli
