// The agent's start-up, control loop and shutdown order.
#include "agent/agent.h"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

#include "agent/budget_controller.h"
#include "agent/capture_recorder.h"
#include "agent/trace_environment.h"
#include "agent/trace_setup.h"
#include "core/agent_counters.h"
#include "core/proc_stat.h"
#include "probe/always_on.h"
#include "probe/attacher.h"
#include "probe/catalog.h"
#include "probe/trap_calibration.h"
#include "sample/gpu_feed.h"
#include "sample/process_tree.h"
#include "sample/snapshot_mailbox.h"

namespace eacgm::agent {
namespace {

// A --pid value: positive, so it names one process (never a group).
bool pid_exists(int pid) { return pid > 0 && process_exists(static_cast<std::uint32_t>(pid)); }
// Still running (not a zombie waiting for its parent to reap it).
bool pid_alive(int pid) { return pid > 0 && process_alive(static_cast<std::uint32_t>(pid)); }

std::chrono::nanoseconds seconds(double s) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(s));
}

// The specs counted in `unresolved`, each with a library that matched its pattern but
// lacks its symbol (a version without that function): at most 8 named.
std::string unresolved_line(const probe::AttachStats& stats) {
  std::string line = "unresolved, by spec (a library its pattern matched lacks its symbol):";
  std::size_t named = 0;
  for (const auto& [spec, library] : stats.unresolved_in) {
    if (named++ == 8) {
      line += fmt::format(" and {} more", stats.unresolved_in.size() - 8);
      break;
    }
    line += fmt::format("{} {} ({})", named == 1 ? "" : ",", spec, library);
  }
  return line + " (`eacgm probes --check` lists each spec's files)";
}

}  // namespace

int exit_code_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUsage:
      return 2;
    case ErrorKind::kLaunch:
      return 127;
    case ErrorKind::kFailure:
      break;
  }
  return 1;
}

Agent::Agent(AgentOptions options, std::shared_ptr<Consumer> consumer, Notice notice)
    : options_(std::move(options)),
      consumer_(consumer ? std::move(consumer) : std::make_shared<ConsumerList>()),
      notice_(std::move(notice)),
      mailbox_(std::make_shared<sample::SnapshotMailbox>()),
      started_(std::chrono::steady_clock::now()) {}

Agent::~Agent() { stop_everything(); }

void Agent::say(const std::string& message) {
  if (notices_live_) {
    if (notice_) notice_(message);
  } else {
    held_notices_.push_back(message);
  }
}

void Agent::release_notices() {
  notices_live_ = true;
  for (const auto& m : held_notices_) {
    if (notice_) notice_(m);
  }
  held_notices_.clear();
}

// GPU snapshots wait in the mailbox until the reader thread, between two rounds of
// calls, hands them on: calls and samples reach the consumer from one thread.
void Agent::drain_gpu() {
  for (const GpuSnapshot& snap : mailbox_->take()) consumer_->on_gpu(snap);
}

Result<std::unique_ptr<Agent>> Agent::start(AgentOptions options, std::shared_ptr<Consumer> consumer,
                                            Notice notice) {
  std::unique_ptr<Agent> a(new Agent(std::move(options), std::move(consumer), std::move(notice)));
  if (auto st = a->start_up(); !st) {
    a->stop_everything();
    return std::move(st).take_error();
  }
  return a;
}

// What the always-on budget decided for the duty cycle, held until the session exists.
struct Agent::DutyPlan {
  bool cycle = false;  // the budget may detach the cycled probes part of the time
  DutyCycle::Options options;
  std::shared_ptr<std::FILE> log;  // the budget's ([trace] duty_log)
};

Status Agent::start_up() {
  const AgentConfig& config = options_.config;
  auto specs = select_probe_specs(config, options_.probes);
  if (!specs) return std::move(specs).take_error();
  if (auto st = check_target_pids(); !st) return st;
  if (!options_.command.empty()) {
    auto c =
        LaunchedCommand::spawn(options_.command, options_.search_path, options_.command_stdout_to_stderr);
    if (!c) return make_error(ErrorKind::kLaunch, c.error());
    child_.emplace(std::move(*c));
  }
  fill_trace_options(std::move(*specs));

  DutyPlan duty;
  if (config.trace.mode == TraceMode::kAlwaysOn) {
    if (auto st = start_budget(duty); !st) return st;
  }
  const bool sample_gpus = options_.sample_gpus && config.gpu.sample;
  if (auto st = start_session(sample_gpus, std::move(duty)); !st) return st;
  // Probes inside the command's own executable (python3.11's USDT notes) are attached
  // before it starts, not after its exec is noticed.
  if (child_) {
    if (auto exe = find_executable(options_.command[0], options_.search_path))
      session_->scan_executable(*exe);
  }
  if (auto st = check_user_probes(); !st) return st;
  if (sample_gpus) start_gpu_feed();
  if (options_.capture) {
    ingest::TraceSession* ts = session_.get();
    options_.capture->set_switch([ts](std::uint32_t pid, bool armed) { return ts->set_capture(pid, armed); });
  }
  return {};
}

Status Agent::check_target_pids() {
  for (int pid : options_.pids) {
    if (!pid_exists(pid)) {
      return make_error(
          ErrorKind::kUsage,
          fmt::format("no such process: {} (check the --pid value; `ps` lists processes)", pid));
    }
    if (auto stat = read_proc_stat(static_cast<std::uint32_t>(pid)); stat && stat->kernel_thread()) {
      return make_error(ErrorKind::kUsage,
                        fmt::format("pid {} is a kernel thread: it has no user code to trace (check the "
                                    "--pid value; `ps` lists processes)",
                                    pid));
    }
    if (pid == 1) {
      say("--pid 1 follows init and every process it forks: the whole machine (as without --pid), "
          "children started from now on included");
    }
  }
  return {};
}

void Agent::fill_trace_options(std::vector<ProbeSpec> specs) {
  const AgentConfig& config = options_.config;
  auto& to = trace_options_;
  to.config = config.trace;
  to.specs = std::move(specs);
  if (!config.python.usdt_durations) {
    for (auto& s : to.specs) s.usdt_gate = UsdtGate::kNone;
  }
  to.filter_pids = !options_.pids.empty() || child_.has_value();
  // Launched commands and --pid targets are held at loader hints until attached; a
  // target whose stop another process would see (a shell's foreground job, a process
  // under a debugger) is not, and what that costs is said.
  to.stop_on_load = to.filter_pids;
  to.track_in_flight = options_.config.hangs.in_flight;
  to.pids = options_.pids;
  for (int pid : options_.pids) {
    if (auto why = sample::stop_hazard(static_cast<std::uint32_t>(pid))) {
      to.never_stop.insert(pid);
      say(
          fmt::format("pid {} is not held at library loads ({}): calls it makes right after loading a "
                      "library, before eacgm has attached to it, are not traced",
                      pid, *why));
    }
  }
  if (child_) to.pids.push_back(child_->pid());
  to.btf_path = options_.btf_path;
  to.python_file_filter = config.python.file_filter;
  to.python_hz = options_.python_hz;
  to.stuck_stack_min_age_s = config.hangs.min_age_s;
  to.host_waits = options_.host_waits;
}

// Always-on: the probes' cost per process, estimated from calibrated trap costs and
// kept within the budget (agent/budget_controller.h).
Status Agent::start_budget(DutyPlan& duty) {
  const AgentConfig& config = options_.config;
  TrapCosts costs;
  if (config.trace.calibrate) {
    auto measured = probe::calibrate_traps();
    if (measured) {
      costs = *measured;
    } else {
      say(fmt::format("probe costs not calibrated ({}): no overhead estimates, sample rates stay fixed",
                      measured.error()));
    }
  }
  BudgetOptions bo;
  bo.budget = config.trace.budget;
  bo.adapt = config.trace.budget > 0 && costs.measured;
  duty.cycle = bo.adapt && config.trace.duty_cycle;
  if (duty.cycle) {
    ingest::TraceConfig measuring = config.trace;
    if (auto st = apply_duty_overrides(options_.duty, measuring); !st) return st;
    duty.options.fixed_fraction = measuring.duty_fraction;
    auto switches = open_log(measuring.duty_switch_log, "[trace] duty_switch_log or EACGM_DUTY_SWITCHES");
    if (!switches) return std::move(switches).take_error();
    if (*switches) duty.options.on_switch = DutyCycle::switch_logger(std::move(*switches));
    auto log = open_log(measuring.duty_log, "[trace] duty_log or EACGM_DUTY_LOG");
    if (!log) return std::move(log).take_error();
    duty.log = std::move(*log);
  }
  bo.base_shift = static_cast<std::uint8_t>(std::min<std::uint32_t>(config.trace.sample_shift, 31));
  bo.is_pinned = [pinned = std::set<std::string>(config.trace.pinned.begin(), config.trace.pinned.end())](
                     const ProbeInfo& p) { return probe::pinned_probe(p, pinned); };
  const auto self = process_cpu(static_cast<std::uint32_t>(getpid()));
  budget_ = std::make_shared<BudgetController>(
      consumer_, costs, bo, [](std::uint32_t pid) { return process_cpu(pid); }, self ? self->start_ns : 0.0);
  consumer_ = budget_;
  BudgetController* b = budget_.get();
  counters_.add(agent_counter("budget_shift_raises"), [b] { return b->raises(); });
  counters_.add(agent_counter("budget_shift_lowers"), [b] { return b->lowers(); });
  return {};
}

Status Agent::start_session(bool sample_gpus, DutyPlan duty) {
  std::function<void()> on_round;
  if (sample_gpus) on_round = [this] { drain_gpu(); };
  auto session = ingest::TraceSession::start(
      trace_options_, consumer_, std::move(on_round), [this](const std::string& m) { say(m); }, counters_);
  if (!session) return std::move(session).take_error();
  session_ = std::move(*session);
  if (!budget_) return {};
  ingest::TraceSession* ts = session_.get();
  budget_->set_actuator([ts](std::uint32_t probe_id, std::uint8_t shift) {
    return ts->set_probe_sample_shift(probe_id, shift);
  });
  if (duty.cycle) {
    duty_ = std::make_shared<DutyCycle>(
        [ts](bool attached, const DutyCycle::Counting& moved) {
          return ts->set_cycled_attached(attached, moved);
        },
        std::move(duty.options));
    budget_->set_duty_cycle(
        duty_, [ts](std::uint32_t pid) { return ts->process_exit(pid); }, std::move(duty.log));
    DutyCycle* d = duty_.get();
    counters_.add(agent_counter("duty_switches"), [d] { return d->switches(); });
    counters_.add(agent_counter("duty_failures"), [d] { return d->failures(); });
  }
  return {};
}

Status Agent::check_user_probes() {
  const AgentConfig& config = options_.config;
  // A user's spec whose library is here but whose symbol is not is a typo, not a
  // library that may load later.
  for (const auto& spec : config.probes) {
    const auto& stats = session_->report().attach;
    auto missing = stats.unresolved_in.find(spec.name);
    if (missing != stats.unresolved_in.end() && !stats.resolved_specs.count(spec.name)) {
      return make_error(
          ErrorKind::kUsage,
          fmt::format("probe \"{}\": symbol \"{}\" not found in {} (check the name with `nm -D {}`, "
                      "or use `pattern` for a glob)",
                      spec.name, spec.symbol, missing->second, missing->second));
    }
  }
  // A user's spec whose library matches no file is said at start (and in the summary),
  // not left to trace nothing.
  unmatched_ = probe::unmatched_library_warnings(
      config.probes, session_->report().attach,
      trace_options_.filter_pids ? probe::TraceScope::kTargets : probe::TraceScope::kWholeMachine);
  for (const auto& w : unmatched_) say("warning: " + w);
  unmatched_count_.store(unmatched_.size(), std::memory_order_relaxed);
  counters_.add(agent_counter("unmatched_probes"),
                [this] { return unmatched_count_.load(std::memory_order_relaxed); });
  return {};
}

void Agent::start_gpu_feed() {
  const AgentConfig& config = options_.config;
  sample::GpuFeedOptions fo;
  fo.interval = seconds(config.gpu.interval_s);
  fo.filter_processes = trace_options_.filter_pids;
  fo.roots = trace_options_.pids;
  fo.nvml_library = options_.nvml_library;
  fo.gpm = config.gpu.profiling;
  auto feed = sample::GpuFeed::start(fo, mailbox_);
  if (!feed) {
    say(fmt::format("no GPU metrics: {}; tracing goes on (--no-gpu silences this)", feed.error()));
    return;
  }
  gpu_feed_ = std::move(*feed);
  sample::GpuFeed* f = gpu_feed_.get();
  sample::SnapshotMailbox* mb = mailbox_.get();
  counters_.add(agent_counter("gpu_passes"), [f] { return f->passes(); });
  counters_.add(agent_counter("gpu_skipped"), [f] { return f->skipped_deadlines(); });
  counters_.add(agent_counter("gpu_dropped"), [mb] { return mb->dropped(); });
}

std::string Agent::ready_line() const {
  const auto& to = trace_options_;
  std::string scope = "all processes";
  if (to.filter_pids) {
    scope.clear();
    for (int pid : to.pids) scope += (scope.empty() ? "pid " : ", ") + std::to_string(pid);
    scope += " and children";
  }
  auto values = counters_.read();
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_);
  std::string gpus;
  if (gpu_feed_) {
    gpus = fmt::format("; sampling {} GPU{} every {} s", gpu_feed_->gpu_count(),
                       gpu_feed_->gpu_count() == 1 ? "" : "s", options_.config.gpu.interval_s);
    // Said once: without GPM, SM and tensor activity are not measured on those GPUs.
    const std::size_t gpm = gpu_feed_->gpm_count();
    if (!options_.config.gpu.profiling) {
      gpus += " (profiling counters off: [gpu] profiling = false)";
    } else if (gpm < gpu_feed_->gpu_count()) {
      gpus += fmt::format(" ({} without GPM profiling counters: no SM, tensor or DRAM activity)",
                          gpu_feed_->gpu_count() - gpm);
    }
  }
  return fmt::format("tracing {} ({} probes in {} library files, ready in {} ms){}", scope,
                     values.get("probes"), values.get("libraries"), ms.count(), gpus);
}

int Agent::run(const std::atomic<int>& stop_signal) {
  if (ran_) return 1;
  ran_ = true;
  auto& s = *session_;
  release_notices();
  say(ready_line());

  if (!options_.side_command.empty()) {
    auto c = LaunchedCommand::spawn(options_.side_command, options_.search_path);
    if (c && c->release()) side_.emplace(std::move(*c));
    if (!c) say(c.error());
  }
  if (child_) {
    if (auto st = child_->release(); !st) {
      stop_everything();
      say(st.error());
      return 127;
    }
  }

  using Clock = std::chrono::steady_clock;
  const auto& config = options_.config;
  auto start = Clock::now();
  auto next_status = start + seconds(config.trace.status_interval_s);
  int exit_code = 0;
  while (true) {
    s.service(std::chrono::milliseconds(50));
    if (child_ && child_->poll_exit()) {
      exit_code = child_->exit_code();
      break;
    }
    // Like `strace -p`: tracing given pids ends when they are all gone.
    if (!child_ && !options_.pids.empty() &&
        std::none_of(options_.pids.begin(), options_.pids.end(), pid_alive)) {
      break;
    }
    if (int sig = stop_signal.load()) {
      if (child_) {
        kill(child_->pid(), SIGTERM);
        for (int i = 0; i < 40 && !child_->poll_exit(); ++i) s.service(std::chrono::milliseconds(50));
        if (!child_->poll_exit()) child_->kill_and_reap();
        exit_code = child_->exit_code();
      } else {
        exit_code = 128 + sig;
      }
      break;
    }
    if (options_.should_end && options_.should_end()) break;
    auto now = Clock::now();
    if (options_.duration_s > 0 && now - start >= seconds(options_.duration_s)) break;
    if (options_.periodic_status && config.trace.status_interval_s > 0 && now >= next_status) {
      say("status " + counters_.read().accounting_line());
      next_status = now + seconds(config.trace.status_interval_s);
    }
    if (side_) side_->poll_exit();
  }
  stop_everything();
  auto report = s.report();
  for (const auto& m : report.attach.failure_messages) say("attach failed: " + m);
  if (gpu_feed_ && !gpu_feed_->failure().empty()) say("GPU sampling stopped early: " + gpu_feed_->failure());
  // In the summary: the count (unmatched_probes), and the warnings again only when they
  // changed since start-up (a library that loaded meanwhile).
  auto still = probe::unmatched_library_warnings(
      options_.config.probes, report.attach,
      trace_options_.filter_pids ? probe::TraceScope::kTargets : probe::TraceScope::kWholeMachine);
  unmatched_count_.store(still.size(), std::memory_order_relaxed);
  if (still != unmatched_) {
    for (const auto& w : still) say("warning: " + w);
  }
  auto values = counters_.read();
  say("done " + values.accounting_line());
  if (!report.attach.unresolved_in.empty()) say(unresolved_line(report.attach));
  consumer_->on_end(values);
  return exit_code;
}

// Shutdown order: the side command, the last GPU pass (into the mailbox before the
// reader's final drain), then detach and drain the ring buffer, then what the
// reader's last round did not take from the mailbox.
void Agent::stop_everything() {
  if (options_.capture) options_.capture->set_switch(nullptr);  // before the session goes
  if (side_) {
    side_->kill_and_reap();
    side_.reset();
  }
  if (gpu_feed_) gpu_feed_->stop();
  if (duty_) {
    // Attached for the last counts, up to the moment the trace starts detaching.
    duty_->stop();
    if (session_) {
      if (auto closed = session_->close_duty_window()) duty_->mark(*closed, DutyWindow::kSwitching);
    }
  }
  if (session_) session_->stop();
  if (gpu_feed_) drain_gpu();
  if (child_ && !ran_) child_->kill_and_reap();
}

}  // namespace eacgm::agent
