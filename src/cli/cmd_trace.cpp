// `eacgm trace`: stream every traced call as JSON Lines, text or a Perfetto timeline; and
// `eacgm --demo`, the same in text with the bundled demo beside it.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/trace_runner.h"
#include "core/byte_size.h"
#include "export/event_stream.h"
#include "export/perfetto_trace.h"
#include "node/node_config.h"

namespace eacgm::cli {
namespace {

struct StreamFlags {
  TraceFlags trace;
  std::string format = "jsonl";
  std::string output;
  std::string max_size = "1GiB";
};

// Exit status when events were lost on the way out (a write failed): EX_IOERR.
constexpr int kOutputFailed = 74;
// Exit status when the reader of the output went away: 128 + SIGPIPE, as a shell
// reports a program that SIGPIPE ended.
constexpr int kReaderGone = 128 + SIGPIPE;

int trace_to(const CommandContext& ctx, StreamFlags f) {
  auto loaded = node::load_config(ctx.config_path);
  if (!loaded) {
    print_error(loaded.error());
    return 2;
  }
  const agent::AgentConfig& config = loaded->agent;
  auto max_size = parse_byte_size(f.max_size);
  if (!max_size) {
    print_error("--max-size: " + max_size.error());
    return 2;
  }
  FILE* out = stdout;
  std::unique_ptr<FILE, int (*)(FILE*)> file(nullptr, &std::fclose);
  if (!f.output.empty() && f.output != "-") {
    file.reset(std::fopen(f.output.c_str(), "w"));
    if (!file) {
      print_error(fmt::format("cannot write {}: {}", f.output, std::strerror(errno)));
      return 2;
    }
    out = file.get();
  } else {
    // The traced command's own output never interleaves with the event stream.
    f.trace.request.command_stdout_to_stderr = true;
  }
  auto on_limit = [](std::uint64_t limit) {
    print_error(
        fmt::format("output limit of {} reached: further events are counted, not written "
                    "(--max-size 0 for no limit)",
                    format_byte_size(limit)));
  };
  std::shared_ptr<Consumer> stream;
  exporting::LineOutput* output = nullptr;
  std::shared_ptr<exporting::PerfettoTrace> timeline;
  if (f.format == "perfetto") {
    timeline = std::make_shared<exporting::PerfettoTrace>(out, *max_size, on_limit);
    output = &timeline->output();
    stream = timeline;
  } else {
    // Text shows the GPUs with the status lines' rhythm (never more often than sampled).
    const double text_gpu_s = std::max(config.trace.status_interval_s, config.gpu.interval_s);
    auto lines = std::make_shared<exporting::EventStream>(
        out,
        f.format == "jsonl" ? exporting::EventStream::Format::kJsonLines
                            : exporting::EventStream::Format::kText,
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(text_gpu_s)),
        *max_size, on_limit);
    output = &lines->output();
    stream = lines;
  }
  // The reader of the stream went away (`eacgm trace | head`): the trace ends as on
  // Ctrl-C, and eacgm exits as a program killed by SIGPIPE would.
  output->set_on_reader_gone([] { request_stop(SIGPIPE); });
  // Python stacks are sampled only for --folded: nothing else would show them.
  if (f.trace.python_hz_option != nullptr && f.trace.python_hz_option->count() > 0 &&
      f.trace.folded.empty()) {
    print_error("--python-hz: only with --folded FILE (trace writes the sampled stacks there)");
    return 2;
  }
  f.trace.apply();
  agent::TraceRequest& request = f.trace.request;
  request.python_stacks = !f.trace.folded.empty();
  if (request.python_stacks && agent::python_hz(request, config) == 0) {
    print_error("--folded: Python sampling is off (--python-hz 0 or [python] sample_hz = 0)");
    return 2;
  }
  auto consumers = agent::make_consumers(request, config, stream);
  int code = run_trace(config, request, consumers);
  if (consumers.python && !write_folded(f.trace.folded, consumers.python->hot_spots()) && code == 0) code = 1;
  if (output->lines_not_written() > 0) {
    print_error(fmt::format("{} {} not written: the output reached --max-size {}",
                            output->lines_not_written(), timeline ? "events" : "lines",
                            format_byte_size(*max_size)));
  }
  if (timeline && timeline->calls_unnamed() > 0) {
    print_error(
        fmt::format("{} calls of threads past the timeline's naming limits (their tracks show ids only)",
                    timeline->calls_unnamed()));
  }
  if (output->reader_gone()) code = kReaderGone;
  if (output->write_errors() > 0) {
    print_error(fmt::format("{} writes to the output failed (disk full?); exit status {}",
                            output->write_errors(), kOutputFailed));
    code = kOutputFailed;
  }
  return code;
}

}  // namespace

void add_trace_command(CLI::App& app, CommandContext& ctx) {
  auto flags = std::make_shared<StreamFlags>();
  auto* sub = app.add_subcommand("trace",
                                 "stream traced calls (JSON Lines, text or a Perfetto timeline) until "
                                 "CMD exits, --duration passes, or Ctrl-C");
  add_trace_options(*sub, ctx, flags->trace);
  add_mode_option(*sub, flags->trace.mode, "per-call");
  sub->add_option("--format", flags->format,
                  "jsonl (default), text, or perfetto (a timeline in the Chrome/Perfetto JSON trace format: "
                  "open it in ui.perfetto.dev or chrome://tracing)")
      ->check(CLI::IsMember({"jsonl", "text", "perfetto"}));
  sub->add_option("-o,--output", flags->output, "write events to FILE instead of stdout");
  sub->add_option("--max-size", flags->max_size,
                  "stop writing events past this size (whole lines or events; e.g. 500M, 2GiB; 0: no limit)")
      ->capture_default_str();
  add_python_sampling_options(
      *sub, flags->trace,
      "with --folded: Python stack samples per second on each CPU (default 99, [python] sample_hz)",
      "also sample the stacks of traced Python processes and write them to FILE at the end as folded "
      "stacks (one \"frames count\" line each: flamegraph.pl, speedscope, inferno)");
  sub->footer(
      "Examples:\n"
      "  eacgm trace -- python3 train.py          trace a command and its children\n"
      "  eacgm trace --pid 1234 --duration 10     trace a running process for 10 s\n"
      "  eacgm trace --format text                trace every CUDA process on the machine\n"
      "  eacgm trace --format perfetto -o trace.json -- python3 train.py\n"
      "                                           a timeline for ui.perfetto.dev\n"
      "Event schema: docs/events.md");
  sub->final_callback([&ctx, flags] {
    flags->trace.request.periodic_status = flags->format == "text";
    ctx.exit_code = trace_to(ctx, *flags);
  });
}

std::vector<std::string> demo_command() {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string dir = n > 0 ? std::string(self, static_cast<std::size_t>(n)) : std::string("./eacgm");
  dir = dir.substr(0, dir.rfind('/'));
  return {dir + "/eacgm-demo", "--loop"};
}

int run_demo(const CommandContext& ctx) {
  StreamFlags f;
  f.format = "text";
  f.trace.request.periodic_status = true;
  f.trace.request.side_command = demo_command();
  // The demo's calls; what other processes on the machine call is counted in one
  // line at the end instead of drowning them.
  f.trace.request.comms = {"eacgm-demo"};
  return trace_to(ctx, f);
}

}  // namespace eacgm::cli
