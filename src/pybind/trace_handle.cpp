#include "pybind/trace_handle.h"

#include <pthread.h>

#include <csignal>

#include "export/api_json.h"
#include "node/node_config.h"

namespace eacgm::pybind {

Result<std::unique_ptr<TraceHandle>> TraceHandle::start(const TraceArgs& args) {
  auto parsed = node::parse_config(args.config_text, "<eacgm>");
  if (!parsed) return make_error(ErrorKind::kUsage, parsed.error());
  agent::AgentConfig& config = parsed->agent;
  if (args.host_waits) config.trace.host_waits = *args.host_waits;

  agent::TraceRequest request;
  request.job = agent::TraceJob::kRun;
  request.probes = args.probes;
  request.pids = args.pids;
  request.command = args.command;
  request.duration_s = args.duration_s;
  request.sample_gpus = args.sample_gpus;
  request.python_hz = args.python_hz;
  request.search_path = args.search_path;
  request.nvml_library = args.nvml_library;
  request.duty = args.duty;
  if (!args.mode.empty()) {
    auto mode = parse_trace_mode(args.mode);
    if (!mode) {
      return make_error(ErrorKind::kUsage,
                        "mode \"" + args.mode + "\" is not one of \"per-call\", \"always-on\"");
    }
    request.mode = mode;
  }

  std::unique_ptr<TraceHandle> handle(new TraceHandle());
  handle->queue_ = std::make_shared<CallQueue>(args.capacity);
  handle->consumers_ = agent::make_consumers(request, config, handle->queue_);
  auto* raw = handle.get();
  auto agent = agent::Agent::start(agent::agent_options(request, config), handle->consumers_.head,
                                   [raw](const std::string& notice) {
                                     std::lock_guard lock(raw->notices_mu_);
                                     raw->notices_.push_back(notice);
                                   });
  if (!agent) return std::move(agent).take_error();
  handle->agent_ = std::move(*agent);
  handle->command_pid_ = handle->agent_->command_pid();
  handle->thread_ = std::thread([raw] {
    // Signals belong to Python's main thread.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    raw->exit_code_ = raw->agent_->run(raw->stop_);
    raw->queue_->finish();
    raw->finished_.store(true);
  });
  return handle;
}

void TraceHandle::finish_thread() {
  std::call_once(joined_, [this] {
    if (thread_.joinable()) thread_.join();
  });
}

void TraceHandle::stop() {
  stop_.store(SIGINT);
  finish_thread();
}

void TraceHandle::wait() { finish_thread(); }

TraceHandle::~TraceHandle() { stop(); }

std::string TraceHandle::report_json() const {
  if (!consumers_.analysis) return "";
  auto snap = consumers_.analysis->snapshot();
  if (!snap) return "";
  return exporting::run_report_json(*snap, exporting::ApiOptions{});
}

std::vector<std::string> TraceHandle::take_notices() {
  std::lock_guard lock(notices_mu_);
  std::vector<std::string> out;
  out.swap(notices_);
  return out;
}

}  // namespace eacgm::pybind
