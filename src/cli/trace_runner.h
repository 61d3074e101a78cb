// The flow shared by `trace`, `run` and the default job: config, probe selection,
// target processes, the trace session, periodic status, and the final accounting.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/config.h"
#include "ingest/ring_reader.h"
#include "ingest/trace_session.h"
#include "core/gpu_sample.h"

namespace eacgm::cli {

struct TraceCommandOptions {
  std::vector<int> pids;
  std::vector<std::string> probes;   // catalog or spec names; empty: config or defaults
  double duration_s = 0;             // 0: until CMD exits or a signal
  std::vector<std::string> command;  // after `--`
  std::string btf_path;
  bool periodic_status = false;           // status lines on stderr while tracing
  std::vector<std::string> side_command;  // started beside the trace, not filtered (--demo)
  bool no_gpu = false;                    // --no-gpu: no NVML sampling beside the trace
};

// Where a trace's results go. Every callback runs on one thread at a time (the
// reader's while tracing, the caller's after it), so outputs need no locks.
struct TraceOutputs {
  ingest::EventSink events;
  // GPU snapshots (processes reduced to the traced ones), every gpu.interval_s and once
  // at the end; unset: no GPU sampling.
  std::function<void(const GpuSnapshot&)> on_gpu;
  // The final report, after the ring buffer and the GPU snapshots are drained.
  std::function<void(const ingest::TraceReport&)> on_end;
};

// Registers the options common to trace and run on a subcommand.
void add_trace_options(CLI::App& sub, CommandContext& ctx, TraceCommandOptions& opts);

// Runs the trace with a loaded configuration (see load_config). Returns the exit code:
// CMD's own when a command was traced.
int run_trace(const Config& config, const TraceCommandOptions& opts, TraceOutputs outputs);

// "events=.. drops=.. lost_exits=.. ..." for status lines and summaries.
std::string format_report(const ingest::TraceReport& r);

// Prints "eacgm: <message>" on stderr.
void print_error(const std::string& message);

}  // namespace eacgm::cli
