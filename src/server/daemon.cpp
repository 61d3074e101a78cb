// The daemon's parts in the order they depend on each other: the server and its
// counters, the stream's channel and producer, then the routes over the source.
#include "server/daemon.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "server/access_token.h"
#include "server/api_routes.h"
#include "server/capture_route.h"
#include "server/history_routes.h"
#include "server/job_capture_route.h"
#include "server/job_stacks.h"
#include "server/metrics_route.h"
#include "server/process_routes.h"
#include "server/standard_routes.h"
#include "server/summary_stream.h"
#include "server/web_routes.h"

namespace eacgm::server {

struct Daemon::Parts {
  DaemonOptions options;
  HttpServer http;
  CounterRegistry server_counters;  // the server's own, alive as long as it is
  std::shared_ptr<SseChannel> channel;
  std::shared_ptr<SummaryStream> stream;
  std::vector<std::string> web_paths;  // the web UI's files: served without a token
  std::shared_ptr<std::atomic<bool>> stopping = std::make_shared<std::atomic<bool>>(false);  // ends captures
};

std::size_t sse_clients_for(std::size_t max_clients) {
  return std::min<std::size_t>(SseChannel::Options{}.max_clients, max_clients / 2);
}

std::size_t captures_for(std::size_t max_clients) { return std::max<std::size_t>(1, max_clients / 4); }

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof(buf) - 1) == 0 ? std::string(buf) : std::string();
}

Daemon::Daemon(DaemonOptions options) : parts_(std::make_unique<Parts>()) {
  Parts& p = *parts_;
  p.options = std::move(options);
  DaemonOptions& o = p.options;
  if (!o.facts) o.facts = std::make_shared<sample::ProcFacts>();
  if (o.hostname.empty()) o.hostname = host_name();
  // A stream holds a worker for its life: streams take at most half the workers, so
  // scrapes and API calls always find one.
  p.channel =
      std::make_shared<SseChannel>(SseChannel::Options{.max_clients = sse_clients_for(o.serve.max_clients)});
  p.stream = std::make_shared<SummaryStream>(p.channel);
  if (o.start_time_seconds == 0) {
    o.start_time_seconds =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  }
  p.http.register_counters(p.server_counters);
  register_sse_counters(p.server_counters, *p.channel);

  MetricsOptions metrics = MetricsOptions::from(o.serve);
  metrics.hostname = o.hostname;
  metrics.start_time_seconds = o.start_time_seconds;
  metrics.mode = o.mode;
  metrics.facts = o.facts;
  metrics.pods = o.pods;
  metrics.pod_series = o.pod_series;
  metrics.store = o.store_stats;
  StandardRoutes standard;
  standard.write_metrics = [source = o.source, metrics,
                            counters = &p.server_counters](ExpositionWriter& out) {
    auto snap = source->latest();
    write_metrics(out, snap.get(), metrics, counters->read());
  };
  standard.not_ready_reason = [source = o.source]() -> std::string {
    return source->latest() ? "" : std::string(kNoSnapshotYet);
  };
  add_standard_routes(p.http, std::move(standard));

  exporting::ApiOptions api;
  api.max_processes = o.serve.max_process_series;
  api.rank_of_pid = [facts = o.facts](std::uint32_t pid) { return facts->rank(pid); };
  api.cmdline_of_pid = [facts = o.facts](std::uint32_t pid) { return facts->cmdline(pid); };
  api.process_alive = [facts = o.facts](std::uint32_t pid) { return facts->alive(pid); };
  api.workload_of_pid = [facts = o.facts](std::uint32_t pid) { return facts->workload(pid); };
  auto fleet_history = o.fleet_history ? o.fleet_history : o.history;
  std::shared_ptr<const HistoryForward> forward;
  std::shared_ptr<JobStacks> stacks;
  if (o.history && !o.history_node.empty()) {
    HistoryForwardOptions fo;
    fo.node = o.history_node;
    // A token file that cannot be read stops start() with its reason.
    if (!o.token_file.empty()) {
      if (auto token = load_token_file(o.token_file)) fo.token = *token;
    }
    JobStackOptions so;
    so.peer.node = fo.node;
    so.peer.token = fo.token;
    stacks = std::make_shared<JobStacks>(so, [fleet_history] {
      return fleet_history->query<history::AgentList>(
          history::HistoryQuery{}, [](history::Store& s, history::Tier) { return s.agents(); });
    });
    // The job's capture from the web UI's job page, through the same agents.
    add_job_capture_route(p.http, JobCaptureRouteParts{fleet_history, fo.token});
    forward = std::make_shared<HistoryForward>(std::move(fo), o.history, fleet_history);
  }
  add_api_routes(p.http, o.source, api, stacks);
  add_stream_route(p.http, p.channel);
  add_history_routes(p.http, o.history, o.report, fleet_history, std::move(forward));
  add_process_routes(p.http, o.source);
  p.web_paths = add_web_routes(p.http, web_assets());
  if (o.capture) {
    CaptureRouteParts capture{o.capture, o.source, o.facts, p.stopping};
    capture.max_running = captures_for(o.serve.max_clients);
    add_capture_route(p.http, std::move(capture));
  }
}

Daemon::~Daemon() { stop(); }

Status Daemon::start() {
  const DaemonOptions& o = parts_->options;
  ServerOptions so;
  so.address = o.listen.host;
  so.port = o.listen.port;
  so.token_file = o.token_file;
  so.max_clients = o.serve.max_clients;
  so.public_paths = {"/healthz", "/readyz"};
  so.public_paths.insert(so.public_paths.end(), parts_->web_paths.begin(), parts_->web_paths.end());
  so.log = o.log;
  return parts_->http.start(so);
}

void Daemon::stop() {
  parts_->stopping->store(true);
  parts_->channel->close();
  parts_->http.stop();
}

std::uint16_t Daemon::port() const { return parts_->http.port(); }

std::shared_ptr<Consumer> Daemon::stream() const { return parts_->stream; }

}  // namespace eacgm::server
