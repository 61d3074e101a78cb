// The node agent's wiring: the configuration, pods, facts, analysis, history, captures,
// the daemon and the reloading trace, made once in create() and run by run().
#include "node/node_agent.h"

#include <fmt/format.h>

#include <mutex>
#include <optional>
#include <utility>

#include "agent/capture_recorder.h"
#include "analysis/job_verdict.h"
#include "analysis/live_analysis.h"
#include "core/published.h"
#include "core/trace_mode.h"
#include "history/history_setup.h"
#include "node/facts_reader.h"
#include "node/memory_trim.h"
#include "node/node_config.h"
#include "node/reloading_trace.h"
#include "sample/process_facts.h"
#include "server/daemon.h"

namespace eacgm::node {

struct NodeAgent::Parts {
  NodeOptions options;  // its notice keeps the last line too
  mutable std::mutex notice_mu;
  std::string last_notice;
  NodeConfig config;    // the whole file, as the running trace started from it
  NodeConfig reloaded;  // as the last reload read it (the reload's thread only)
  server::ListenAddress listen;
  // The mode for eacgm_build_info: a reload may change it (HTTP threads read it).
  std::shared_ptr<std::atomic<TraceMode>> mode;
  std::optional<history::HistorySetup> history;
  std::shared_ptr<history::HistoryWriter> writer;
  std::shared_ptr<history::FleetShipper> shipper;  // with a fleet store
  std::shared_ptr<history::FleetLink> link;        // with any store
  std::shared_ptr<analysis::LiveAnalysis> analysis;
  std::unique_ptr<server::Daemon> daemon;
  ReloadingTrace trace;
};

namespace {

Error usage(const std::string& message) { return make_error(ErrorKind::kUsage, message); }

void say(const NodeOptions& o, const std::string& line) {
  if (o.notice) o.notice(line);
}

// Pods and jobs of the traced processes (docs/kubernetes.md): ids from /proc always,
// names and GPU assignment from the kubelet when [kubernetes] enabled and a source is given.
std::shared_ptr<sample::PodDirectory> make_pods(const NodeOptions& o, const sample::KubernetesConfig& k8s) {
  if (!k8s.enabled || !o.pod_source) return nullptr;
  sample::PodDirectoryOptions po;
  po.log_root = k8s.log_root;
  po.refresh = std::chrono::milliseconds(static_cast<std::int64_t>(k8s.refresh_s * 1000));
  auto notice = o.notice;
  return std::make_shared<sample::PodDirectory>(o.pod_source(k8s.pod_resources_socket), po,
                                                [notice](const std::string& line) {
                                                  if (notice) notice(line);
                                                });
}

// The history: a writer thread over the analysis's snapshots. A store named by the user
// must open; the default one may not (the agent then serves without history).
Status open_history(NodeAgent::Parts& p, std::shared_ptr<const sample::ProcessFacts> facts,
                    server::DaemonOptions& d) {
  const NodeOptions& o = p.options;
  auto setup = history::resolve_history(p.config.store, o.store, o.node_name, o.fleet_store);
  if (!setup) {
    const bool fleet = setup.error().find("fleet store") != std::string::npos;
    const char* where = fleet ? (o.fleet_store.empty() ? "[store] fleet_url: " : "--fleet-store: ")
                              : (o.store.empty() ? "[store] url: " : "--store: ");
    return usage(where + setup.error());
  }
  if (!*setup) return {};
  (*setup)->idle_threshold = p.config.report.idle_threshold;
  const history::HistorySetup& hs = **setup;
  auto analysis = p.analysis;
  auto notice = o.notice;
  auto made = history::make_history_writer(
      hs, [analysis] { return analysis->snapshot(); },
      [notice](const std::string& line) {
        if (notice) notice(line);
      },
      std::move(facts));
  if (!made) {
    if (hs.url_given) return usage(made.error());
    say(o, made.error() + "; serving without history (set --store or [store] url; \"off\" to silence)");
    return {};
  }
  p.history = hs;
  p.writer = std::move(made).value();
  auto mode = p.mode;
  p.writer->set_mode([mode] { return std::string(trace_mode_name(mode->load())); });
  // The agent's heartbeat and the job's ranks on other nodes, through the fleet link's
  // connection to the fleet's store (its agent URL is set once the port is bound).
  p.link = history::make_fleet_link(
      hs, [analysis] { return analysis->snapshot(); },
      [notice](const std::string& line) {
        if (notice) notice(line);
      },
      "");
  auto fleet = std::make_shared<Published<analysis::FleetReports>>();
  p.link->set_fleet_sink(
      [fleet](std::shared_ptr<const analysis::FleetReports> reports) { fleet->publish(std::move(reports)); });
  p.analysis->set_fleet_reports([fleet] { return fleet->get(); });
  d.history_node = hs.options.node;
  // A connection per worker of the server: no history request waits for another.
  d.history = std::make_shared<history::HistoryReader>(hs.url, hs.options.retention, d.serve.max_clients);
  // The agents' list is in the fleet store when the node has one (two connections: a
  // rarely asked list).
  if (!hs.fleet_url.empty())
    d.fleet_history = std::make_shared<history::HistoryReader>(hs.fleet_url, hs.options.retention, 2);
  // With a fleet store the node keeps its own and ships its rollups and facts there
  // (history/fleet_shipper.h), right after each maintenance of its own.
  p.shipper = history::make_fleet_shipper(hs, [notice](const std::string& line) {
    if (notice) notice(line);
  });
  if (p.shipper) p.writer->set_after_maintain([s = p.shipper] { s->ship_soon(); });
  d.store_stats = [w = p.writer, s = p.shipper, l = p.link] {
    history::StoreStats stats = w->stats();
    if (s) stats.fleet = s->stats();
    stats.link = l->stats();
    return stats;
  };
  d.report = p.config.report;
  return {};
}

// Where other machines reach the agent's API: the flag, [serve] advertise_url, else the
// listen address, a wildcard one (no machine reaches 0.0.0.0) as the host's name.
std::string advertised_url(const NodeOptions& o, const server::ServeConfig& serve,
                           const server::ListenAddress& listen, std::uint16_t port) {
  if (!o.advertise_url.empty()) return o.advertise_url;
  if (!serve.advertise_url.empty()) return serve.advertise_url;
  const bool wildcard = listen.host.empty() || listen.host == "0.0.0.0" || listen.host == "::";
  return "http://" + server::host_port(wildcard ? history::host_name() : listen.host, port);
}

// What the trace feeds: the analysis, the live stream and captures, behind the facts'
// first read; and freed memory handed back, for a long-running agent.
agent::TraceConsumers make_node_consumers(const NodeAgent::Parts& p, std::shared_ptr<Consumer> stream,
                                          std::shared_ptr<agent::CaptureRecorder> capture,
                                          std::shared_ptr<const sample::ProcessFacts> facts) {
  auto consumers = agent::make_consumers(p.options.request, p.config.agent, std::move(stream), p.analysis,
                                         std::move(capture));
  consumers.head = with_facts_first(std::move(facts), std::move(consumers.head));
  if (p.options.trim_memory && !MemoryTrim::jemalloc()) {
    MemoryTrim::map_large_blocks();
    auto with_trim = std::make_shared<ConsumerList>();
    with_trim->add(std::move(consumers.head));
    with_trim->add(std::make_shared<MemoryTrim>());
    consumers.head = std::move(with_trim);
  }
  return consumers;
}

}  // namespace

Result<std::unique_ptr<NodeAgent>> NodeAgent::create(NodeOptions options) {
  auto parts = std::make_unique<Parts>();
  Parts& p = *parts;
  p.options = std::move(options);
  p.options.request.job = agent::TraceJob::kServe;
  p.options.notice = [&p, outer = std::move(p.options.notice)](const std::string& line) {
    {
      std::lock_guard<std::mutex> lock(p.notice_mu);
      p.last_notice = line;
    }
    if (outer) outer(line);
  };
  const NodeOptions& o = p.options;
  auto config = load_checked_config(o.config_path, o.request.probes);
  if (!config) return usage(config.error());
  p.config = std::move(*config);
  auto listen = server::parse_listen_address(o.listen.empty() ? p.config.serve.listen : o.listen);
  if (!listen) return usage("--listen: " + listen.error());
  if (auto st = server::check_advertise_url(o.advertise_url); !st)
    return usage("--advertise-url: " + st.error());
  p.listen = *listen;
  p.reloaded = p.config;
  p.mode = std::make_shared<std::atomic<TraceMode>>(agent::trace_mode(o.request, p.config.agent));

  auto pods = make_pods(o, p.config.kubernetes);
  auto facts = std::make_shared<sample::ProcFacts>(pods);
  p.analysis = std::make_shared<analysis::LiveAnalysis>();
  server::DaemonOptions d;
  d.facts = facts;
  d.pods = pods;
  d.pod_series = p.config.kubernetes.process_series == "auto";
  d.listen = p.listen;
  d.token_file = o.token_file.value_or(p.config.serve.token_file);
  d.serve = p.config.serve;
  d.log = [notice = o.notice](std::string_view line) {
    if (notice) notice(std::string(line));
  };
  d.mode = [mode = p.mode] { return std::string(trace_mode_name(mode->load())); };
  d.source = std::make_shared<server::LiveSnapshots>(p.analysis);
  if (o.history) {
    if (auto st = open_history(p, facts, d); !st) return std::move(st).take_error();
  }
  auto capture = std::make_shared<agent::CaptureRecorder>();
  d.capture = capture;
  p.daemon = std::make_unique<server::Daemon>(std::move(d));

  // A reload reads the whole file: the agent gets its part as a daemon runs it, and the
  // node's sections that wait for the next start are said.
  p.trace.reload_config = [&p]() -> Result<agent::AgentConfig> {
    auto fresh = load_checked_config(p.options.config_path, p.options.request.probes);
    if (!fresh) return std::move(fresh).take_error();
    p.reloaded = std::move(*fresh);
    return daemon_agent_config(p.reloaded);
  };
  p.trace.request = o.request;
  p.trace.notice = o.notice;
  p.trace.consumers = make_node_consumers(p, p.daemon->stream(), capture, facts);
  p.trace.on_reload = [&p](const agent::AgentConfig&, const agent::AgentConfig& after) {
    p.mode->store(agent::trace_mode(p.options.request, after));
    if (p.writer) p.writer->flush_soon();  // what was kept so far is on disk before the new config
    for (const std::string& line : next_start_changes(p.config, p.reloaded)) say(p.options, line);
    p.config = p.reloaded;
  };
  if (auto st = p.daemon->start(); !st) return std::move(st).take_error();
  if (p.link) p.link->set_agent_url(advertised_url(o, p.config.serve, p.listen, p.daemon->port()));
  return std::unique_ptr<NodeAgent>(new NodeAgent(std::move(parts)));
}

NodeAgent::NodeAgent(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

NodeAgent::~NodeAgent() { stop(); }

int NodeAgent::run(const std::atomic<int>& stop, std::atomic<bool>& reload) {
  Parts& p = *parts_;
  if (p.writer) p.writer->start();
  if (p.shipper) p.shipper->start();
  if (p.link) p.link->start();
  const int code = run_reloading(daemon_agent_config(p.config), p.trace, stop, reload);
  if (p.link) p.link->stop();
  if (p.writer) p.writer->stop();    // the final snapshot's interval and the spool
  if (p.shipper) p.shipper->stop();  // and its facts to the fleet store
  p.daemon->stop();
  return code;
}

Status NodeAgent::run_in_background(std::chrono::seconds ready_within) {
  thread_ = std::thread([this] {
    run(stop_, reload_);
    ended_.store(true);
  });
  const auto deadline = std::chrono::steady_clock::now() + ready_within;
  while (!parts_->analysis->snapshot()) {
    if (ended_.load() || std::chrono::steady_clock::now() > deadline) {
      const bool ended = ended_.load();
      stop();
      const std::string said = last_notice();
      const std::string why = said.empty() ? std::string("its trace ended") : said;
      if (ended) return make_error(why);
      return make_error(fmt::format("its probes were not ready within {} s: {}", ready_within.count(), why));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return {};
}

void NodeAgent::stop() {
  stop_.store(1);
  if (thread_.joinable()) thread_.join();
  if (parts_ && parts_->daemon) parts_->daemon->stop();
}

std::uint16_t NodeAgent::port() const { return parts_->daemon->port(); }

std::string NodeAgent::url() const {
  return "http://" + server::host_port(parts_->listen.host, parts_->daemon->port());
}

std::string NodeAgent::history_line() const {
  const Parts& p = *parts_;
  if (!p.writer || !p.history) return "";
  std::string line = fmt::format("keeping history in {} (node {}, every {} s)", p.writer->description(),
                                 p.history->options.node,
                                 std::chrono::duration<double>(p.history->options.interval).count());
  if (p.shipper)
    line += fmt::format("; its rollups and facts go to the fleet store {}", p.shipper->description());
  return line;
}

std::shared_ptr<const analysis::AnalysisSnapshot> NodeAgent::snapshot() const {
  return parts_->analysis->snapshot();
}

Result<std::unique_ptr<NodeAgent>> start_in_background(NodeOptions options,
                                                       std::chrono::seconds ready_within) {
  auto agent = NodeAgent::create(std::move(options));
  if (!agent) return agent;
  if (auto st = (*agent)->run_in_background(ready_within); !st) return std::move(st).take_error();
  return agent;
}

std::string NodeAgent::last_notice() const {
  std::lock_guard<std::mutex> lock(parts_->notice_mu);
  return parts_->last_notice;
}

}  // namespace eacgm::node
