// Trace orchestration for the CLI.
#include "cli/trace_runner.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>

#include "cli/launched_command.h"
#include "probe/catalog.h"
#include "sample/gpu_feed.h"
#include "sample/process_tree.h"
#include "sample/snapshot_mailbox.h"

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

bool process_exists(int pid) {
  struct stat st {};
  return pid > 0 && stat(fmt::format("/proc/{}", pid).c_str(), &st) == 0;
}

// Running (not a zombie waiting for its parent to reap it).
bool process_alive(int pid) {
  auto stat = pid > 0 ? read_proc_stat(static_cast<std::uint32_t>(pid)) : std::nullopt;
  return stat && stat->state != 'Z';
}

// GPU sampling beside the trace; without NVML, one notice and nullptr.
std::unique_ptr<GpuFeed> start_gpu_feed(const GpuConfig& gpu, const ingest::TraceOptions& to,
                                        const std::shared_ptr<SnapshotMailbox>& mailbox,
                                        const ingest::TraceSession::Notice& notice) {
  GpuFeedOptions fo;
  fo.interval =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(gpu.interval_s));
  fo.filter_processes = to.filter_pids;
  fo.roots = to.pids;
  auto feed = GpuFeed::start(fo, mailbox);
  if (!feed) {
    notice(fmt::format("no GPU metrics: {}; tracing goes on (--no-gpu silences this)", feed.error()));
    return nullptr;
  }
  return std::move(*feed);
}

// "; sampling 2 GPUs every 1 s" for the ready line.
std::string gpu_scope(const GpuFeed& feed, const GpuConfig& gpu) {
  return fmt::format("; sampling {} GPU{} every {} s", feed.gpu_count(), feed.gpu_count() == 1 ? "" : "s",
                     gpu.interval_s);
}

// " gpu_passes=N[ gpu_skipped=N][ gpu_dropped=N]" for the accounting line.
std::string format_gpu_counts(const GpuFeed& feed, const SnapshotMailbox& mailbox) {
  std::string out = fmt::format(" gpu_passes={}", feed.passes());
  if (feed.skipped_deadlines() > 0) out += fmt::format(" gpu_skipped={}", feed.skipped_deadlines());
  if (mailbox.dropped() > 0) out += fmt::format(" gpu_dropped={}", mailbox.dropped());
  return out;
}

}  // namespace

void print_error(const std::string& message) { std::fprintf(stderr, "eacgm: %s\n", message.c_str()); }

std::string format_report(const ingest::TraceReport& r) {
  std::string out = fmt::format(
      "events={} drops={} lost_exits={} orphan_exits={} read_faults={} probes={} libraries={} "
      "attach_failures={} unresolved={}",
      r.events, r.ringbuf_drops, r.lost_exits, r.orphan_exits, r.read_faults, r.attach.probes,
      r.attach.libraries, r.attach.attach_failures, r.attach.unresolved);
  if (r.too_deep > 0) out += fmt::format(" too_deep={}", r.too_deep);
  if (r.kernel_names.from_memory + r.kernel_names.unreadable > 0) {
    out += fmt::format(" names_from_memory={} names_unreadable={}", r.kernel_names.from_memory,
                       r.kernel_names.unreadable);
  }
  if (r.python.calls + r.python.filtered > 0) {
    out += fmt::format(" python_calls={} python_unpaired={} python_filtered={}", r.python.calls,
                       r.python.unpaired, r.python.filtered);
  }
  if (r.python.unreturned > 0) out += fmt::format(" python_unreturned={}", r.python.unreturned);
  if (r.python.orphan_returns > 0) {
    out += fmt::format(" python_orphan_returns={}", r.python.orphan_returns);
  }
  return out;
}

void add_trace_options(CLI::App& sub, CommandContext& ctx, TraceCommandOptions& opts) {
  sub.add_option("--config", ctx.config_path, "configuration file (TOML, see docs/config.md)");
  sub.add_option("-p,--pid", opts.pids, "trace only this process and its children (repeatable)");
  sub.add_option("--probes", opts.probes,
                 "catalogs or probe names, comma-separated (default: cuda,cuda_driver,nccl)")
      ->delimiter(',');
  sub.add_option("--duration", opts.duration_s, "stop after this many seconds")
      ->check(CLI::NonNegativeNumber);
  sub.add_option("--btf", opts.btf_path, "kernel BTF file, for kernels without /sys/kernel/btf/vmlinux");
  sub.add_flag("--no-gpu", opts.no_gpu,
               "do not sample the GPUs through NVML while tracing (gpu.sample = false)");
  sub.add_option("command", opts.command, "command to run and trace with its children (after --)");
  sub.positionals_at_end();
}

int run_trace(const Config& config, const TraceCommandOptions& opts, TraceOutputs outputs) {
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::string> names = opts.probes;
  if (names.empty()) names = config.catalogs.empty() ? probe::default_catalog_names() : config.catalogs;
  if (opts.probes.empty()) {
    for (const auto& s : config.probes) names.push_back(s.name);
  }
  auto specs = probe::select_specs(names, config.probes);
  if (!specs) {
    print_error(specs.error());
    return 2;
  }
  for (int pid : opts.pids) {
    if (!process_exists(pid)) {
      print_error(fmt::format("no such process: {} (check the --pid value; `ps` lists processes)", pid));
      return 2;
    }
  }

  std::optional<LaunchedCommand> child;
  if (!opts.command.empty()) {
    auto c = LaunchedCommand::spawn(opts.command);
    if (!c) {
      print_error(c.error());
      return 127;
    }
    child.emplace(std::move(*c));
  }

  ingest::TraceOptions to;
  to.config = config.trace;
  to.specs = std::move(*specs);
  to.filter_pids = !opts.pids.empty() || child.has_value();
  to.stop_on_load = child.has_value();
  to.pids = opts.pids;
  if (child) to.pids.push_back(child->pid());
  to.btf_path = opts.btf_path;
  to.python = config.python;

  // Start-up notices wait until start-up has succeeded, so that a failure reads as
  // one line.
  struct Notices {
    bool live = false;
    std::vector<std::string> held;
  };
  auto notices = std::make_shared<Notices>();
  auto notice = [notices](const std::string& msg) {
    if (notices->live) {
      std::fprintf(stderr, "eacgm: %s\n", msg.c_str());
    } else {
      notices->held.push_back(msg);
    }
  };
  auto release_notices = [notices] {
    for (const auto& m : notices->held) std::fprintf(stderr, "eacgm: %s\n", m.c_str());
    notices->held.clear();
    notices->live = true;
  };
  // GPU snapshots wait in the mailbox until the reader thread, between two batches of
  // calls, hands them on: calls and samples reach the outputs from one thread.
  const bool sample_gpus = outputs.on_gpu && config.gpu.sample && !opts.no_gpu;
  auto mailbox = std::make_shared<SnapshotMailbox>();
  auto drain_gpu = [mailbox, on_gpu = outputs.on_gpu] {
    for (const GpuSnapshot& snap : mailbox->take()) on_gpu(snap);
  };
  if (sample_gpus) {
    outputs.events.on_idle = [drain_gpu, on_idle = std::move(outputs.events.on_idle)] {
      drain_gpu();
      if (on_idle) on_idle();
    };
  }
  auto session = ingest::TraceSession::start(to, std::move(outputs.events), notice);
  if (!session) {
    print_error(session.error());
    return 1;
  }
  auto& s = **session;
  // Probes inside the command's own executable (python3.11's USDT notes) are attached
  // before it starts, not after its exec is noticed.
  if (child) {
    if (auto exe = find_executable(opts.command[0])) s.scan_executable(*exe);
  }
  // A user's spec whose library is here but whose symbol is not is a typo, not a
  // library that may load later.
  for (const auto& spec : config.probes) {
    const auto& stats = s.report().attach;
    auto missing = stats.unresolved_in.find(spec.name);
    if (missing != stats.unresolved_in.end() && !stats.resolved_specs.count(spec.name)) {
      print_error(
          fmt::format("probe \"{}\": symbol \"{}\" not found in {} (check the name with `nm -D {}`, or use "
                      "`pattern` for a glob)",
                      spec.name, spec.symbol, missing->second, missing->second));
      return 2;
    }
  }
  // Started before the signal handlers: the sampling thread blocks every signal.
  std::unique_ptr<GpuFeed> gpu_feed;
  if (sample_gpus) gpu_feed = start_gpu_feed(config.gpu, to, mailbox, notice);
  install_signal_handlers();
  release_notices();
  {
    auto r = s.report();
    std::string scope = "all processes";
    if (to.filter_pids) {
      scope.clear();
      for (int pid : to.pids) scope += (scope.empty() ? "pid " : ", ") + std::to_string(pid);
      scope += " and children";
    }
    auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    notice(fmt::format("tracing {} ({} probes in {} library files, ready in {} ms){}", scope, r.attach.probes,
                       r.attach.libraries, ms.count(), gpu_feed ? gpu_scope(*gpu_feed, config.gpu) : ""));
  }

  std::optional<LaunchedCommand> side;
  if (!opts.side_command.empty()) {
    auto c = LaunchedCommand::spawn(opts.side_command);
    if (c && c->release()) side.emplace(std::move(*c));
    if (!c) print_error(c.error());
  }
  if (child) {
    if (auto st = child->release(); !st) {
      s.stop();
      print_error(st.error());
      return 127;
    }
  }

  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto next_status = start + std::chrono::duration<double>(config.trace.status_interval_s);
  int exit_code = 0;
  while (true) {
    s.service(std::chrono::milliseconds(50));
    if (child && child->poll_exit()) {
      exit_code = child->exit_code();
      break;
    }
    // Like `strace -p`: tracing given pids ends when they are all gone.
    if (!child && !opts.pids.empty() && std::none_of(opts.pids.begin(), opts.pids.end(), process_alive)) {
      break;
    }
    if (int sig = g_signal.load()) {
      if (child) {
        kill(child->pid(), SIGTERM);
        for (int i = 0; i < 40 && !child->poll_exit(); ++i) s.service(std::chrono::milliseconds(50));
        if (!child->poll_exit()) child->kill_and_reap();
        exit_code = child->exit_code();
      } else {
        exit_code = 128 + sig;
      }
      break;
    }
    auto now = Clock::now();
    if (opts.duration_s > 0 && now - start >= std::chrono::duration<double>(opts.duration_s)) break;
    if (opts.periodic_status && config.trace.status_interval_s > 0 && now >= next_status) {
      notice("status " + format_report(s.report()));
      next_status = now + std::chrono::duration<double>(config.trace.status_interval_s);
    }
    if (side) side->poll_exit();
  }
  if (side) side->kill_and_reap();
  // The last GPU pass goes into the mailbox before the reader's final drain.
  if (gpu_feed) gpu_feed->stop();
  s.stop();
  if (sample_gpus) drain_gpu();  // what the reader's last round did not take
  auto report = s.report();
  for (const auto& m : report.attach.failure_messages) notice("attach failed: " + m);
  std::string gpu_counts;
  if (gpu_feed) {
    if (!gpu_feed->failure().empty()) notice("GPU sampling stopped early: " + gpu_feed->failure());
    gpu_counts = format_gpu_counts(*gpu_feed, *mailbox);
  }
  notice("done " + format_report(report) + gpu_counts);
  if (outputs.on_end) outputs.on_end(report);
  return exit_code;
}

}  // namespace eacgm::cli
