// The agent `eacgm top` runs itself: serve's trace and routes without its store.
#include "cli/local_agent.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "agent/capture_recorder.h"
#include "agent/facts_reader.h"
#include "agent/reloading_trace.h"
#include "analysis/live_analysis.h"
#include "node/node_config.h"
#include "sample/process_facts.h"
#include "server/daemon.h"

namespace eacgm::cli {

namespace {
constexpr auto kReadyWithin = std::chrono::seconds(60);
}  // namespace

Result<std::unique_ptr<LocalAgent>> LocalAgent::start(const std::string& config_path) {
  agent::TraceRequest request;
  request.job = agent::TraceJob::kServe;
  request.duty = agent::duty_overrides(std::getenv);
  auto config = node::load_checked_config(config_path, request.probes);
  if (!config) return make_error(config.error_kind(), config.error());
  const agent::AgentConfig agent_config = node::daemon_agent_config(*config);

  std::unique_ptr<LocalAgent> self(new LocalAgent());
  LocalAgent* raw = self.get();
  auto facts = std::make_shared<sample::ProcFacts>(nullptr);
  auto analysis = std::make_shared<analysis::LiveAnalysis>();
  auto capture = std::make_shared<agent::CaptureRecorder>();
  server::DaemonOptions o;
  o.listen = server::ListenAddress{"127.0.0.1", 0};
  o.serve = config->serve;
  o.facts = facts;
  o.source = std::make_shared<server::LiveSnapshots>(analysis);
  o.capture = capture;
  o.log = [raw](std::string_view line) { raw->notice(std::string(line)); };
  const TraceMode mode = agent::trace_mode(request, agent_config);
  o.mode = [mode] { return std::string(trace_mode_name(mode)); };
  self->daemon_ = std::make_unique<server::Daemon>(std::move(o));

  agent::ReloadingTrace trace;
  trace.reload_config = [config_path, probes = request.probes]() -> Result<agent::AgentConfig> {
    auto fresh = node::load_checked_config(config_path, probes);
    if (!fresh) return std::move(fresh).take_error();
    return node::daemon_agent_config(std::move(*fresh));
  };
  trace.request = request;
  trace.notice = [raw](const std::string& line) { raw->notice(line); };
  trace.consumers = agent::make_consumers(request, agent_config, self->daemon_->stream(), analysis, capture);
  trace.consumers.head = agent::with_facts_first(facts, std::move(trace.consumers.head));
  if (auto st = self->daemon_->start(); !st) return make_error(st.error());

  self->trace_thread_ = std::thread([raw, trace = std::move(trace), config = agent_config]() mutable {
    agent::run_reloading(std::move(config), trace, raw->stop_, raw->reload_);
    raw->trace_ended_.store(true);
  });
  const auto deadline = std::chrono::steady_clock::now() + kReadyWithin;
  while (!analysis->snapshot()) {
    if (self->trace_ended_.load() || std::chrono::steady_clock::now() > deadline) {
      const std::string said = self->last_notice();
      const std::string why = said.empty() ? std::string("its trace ended") : said;
      self->stop();
      return make_error(self->trace_ended_.load() ? why : "its probes were not ready within 60 s: " + why);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return self;
}

LocalAgent::~LocalAgent() { stop(); }

void LocalAgent::stop() {
  stop_.store(1);
  if (trace_thread_.joinable()) trace_thread_.join();
  if (daemon_) daemon_->stop();
}

std::string LocalAgent::url() const {
  return fmt::format("http://127.0.0.1:{}", daemon_ ? daemon_->port() : 0);
}

std::string LocalAgent::last_notice() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_notice_;
}

void LocalAgent::notice(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  last_notice_ = line;
}

}  // namespace eacgm::cli
