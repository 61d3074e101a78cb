// The agent under the CLI: options, signals, start-up errors as exit codes.
#include "cli/trace_runner.h"

#include <fmt/format.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "cli/environment.h"
#include "cli/usage_errors.h"

namespace eacgm::cli {
namespace {

std::atomic<int> g_signal{0};

void on_signal(int sig) { g_signal.store(sig); }

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

}  // namespace

void request_stop(int sig) { g_signal.store(sig); }

void print_error(const std::string& message) { std::fprintf(stderr, "eacgm: %s\n", message.c_str()); }

void print_command_error(std::string_view command, const std::string& message) {
  std::fprintf(stderr, "eacgm %.*s: %s\n", static_cast<int>(command.size()), command.data(), message.c_str());
}

void TraceFlags::apply() {
  read_trace_environment(request);
  request.mode = parse_trace_mode(mode);
  request.sample_gpus = !no_gpu;
  if (python_hz_option != nullptr && python_hz_option->count() > 0) request.python_hz = python_hz;
}

void add_python_sampling_options(CLI::App& sub, TraceFlags& flags, const std::string& hz_help,
                                 const std::string& folded_help) {
  flags.python_hz_option =
      sub.add_option("--python-hz", flags.python_hz, hz_help)->check(CLI::Range(0, 10000));
  sub.add_option("--folded", flags.folded, folded_help);
}

bool write_folded(const std::string& path, const analysis::PythonHotSpots& hot) {
  std::ofstream out(path);
  out << analysis::folded_text(hot);
  if (out.flush()) return true;
  print_error(fmt::format("cannot write folded stacks to {}: check the path and free space", path));
  return false;
}

void add_mode_option(CLI::App& sub, std::string& mode, const char* what) {
  sub.add_option(
         "--mode", mode,
         fmt::format("per-call (a record per call: arguments, exact durations) or always-on (counts at "
                     "entry, one trap per call, sampled durations; docs/overhead.md); default: {}",
                     what))
      ->check(CLI::IsMember({"per-call", "always-on"}));
}

void add_trace_options(CLI::App& sub, CommandContext& ctx, TraceFlags& flags) {
  agent::TraceRequest& r = flags.request;
  sub.add_option("--config", ctx.config_path, "configuration file (TOML, see docs/config.md)");
  sub.add_option("-p,--pid", r.pids, "trace only this process and its children (repeatable)");
  add_list_option(sub, "--probes", r.probes,
                  "catalogs or probe names, comma-separated (default: cuda,cuda_driver,nccl)");
  sub.add_option("--duration", r.duration_s, "stop after this many seconds")
      ->check(seconds_validator(true,
                                " (0: no limit, until the command or the --pid processes exit, or Ctrl-C)"));
  sub.add_option("--btf", r.btf_path, "kernel BTF file, for kernels without /sys/kernel/btf/vmlinux");
  sub.add_flag("--no-gpu", flags.no_gpu,
               "do not sample the GPUs through NVML while tracing (gpu.sample = false)");
  sub.add_option("--comm", r.comms,
                 "show only the calls of processes with this name (exact, as `ps -o comm` shows it; "
                 "repeatable); the others are counted in one line at the end");
  sub.add_option("command", r.command, "command to run and trace with its children (after --)");
  sub.positionals_at_end();
}

int run_trace(const agent::AgentConfig& config, const agent::TraceRequest& request,
              const agent::TraceConsumers& consumers) {
  auto agent = agent::Agent::start(agent::agent_options(request, config), consumers.head, print_error);
  if (!agent) {
    print_error(agent.error());
    return agent::exit_code_for(agent.error_kind());
  }
  // After start-up: the sampling thread has blocked every signal for itself.
  install_signal_handlers();
  int code = (*agent)->run(g_signal);
  if (consumers.filter && consumers.filter->left_out() > 0)
    print_error(consumers.filter->summary() + " (--comm)");
  return code;
}

}  // namespace eacgm::cli
