// `eacgm serve`: the node agent. Traces every process on the machine, samples the GPUs,
// keeps the analysis current and serves it over HTTP (/metrics, /api/v1, a live stream)
// until SIGTERM or SIGINT; SIGHUP reloads the configuration.
#include <fmt/format.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "agent/facts_reader.h"
#include "agent/memory_trim.h"
#include "agent/reloading_trace.h"
#include "cli/commands.h"
#include "cli/trace_runner.h"
#include "cli/usage_errors.h"
#include "history/history_setup.h"
#include "kubelet/pod_resources_client.h"
#include "node/node_config.h"
#include "sample/pod_directory.h"
#include "sample/process_facts.h"
#include "server/daemon.h"

namespace eacgm::cli {
namespace {

std::atomic<int> g_stop{0};
std::atomic<bool> g_reload{false};

void on_stop(int sig) { g_stop.store(sig); }
void on_reload(int) { g_reload.store(true); }

void install_serve_signals() {
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_stop;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sa.sa_handler = on_reload;
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

struct ServeFlags {
  std::string listen;
  std::string store;
  std::string node;
  std::string token_file;
  std::string mode;
  bool no_gpu = false;
  bool demo = false;
  agent::TraceRequest request;
};

int serve(const CommandContext& ctx, ServeFlags& flags) {
  agent::TraceRequest& request = flags.request;
  request.job = agent::TraceJob::kServe;
  request.mode = parse_trace_mode(flags.mode);
  request.sample_gpus = !flags.no_gpu;
  request.duty = agent::duty_overrides(std::getenv);
  if (flags.demo) request.side_command = demo_command();
  auto config = node::load_checked_config(ctx.config_path, request.probes);
  if (!config) {
    print_error(config.error());
    return 2;
  }
  const server::ServeConfig sc = config->serve;  // listening is fixed for the daemon's life
  auto listen = server::parse_listen_address(flags.listen.empty() ? sc.listen : flags.listen);
  if (!listen) {
    print_error("--listen: " + listen.error());
    return 2;
  }

  auto history_setup = history::resolve_history(config->store, flags.store, flags.node);
  if (!history_setup) {
    print_error((flags.store.empty() ? "[store] url: " : "--store: ") + history_setup.error());
    return 2;
  }

  agent::ReloadingTrace trace;
  trace.request = request;
  trace.notice = print_error;
  // The whole file as the running trace started from it, and as a reload read it: the
  // agent gets its part, and the node's sections that wait for the next start are said.
  auto running = std::make_shared<node::NodeConfig>(*config);
  auto reloaded = std::make_shared<node::NodeConfig>(*config);
  trace.reload_config = [path = ctx.config_path, probes = request.probes,
                         reloaded]() -> Result<agent::AgentConfig> {
    auto fresh = node::load_checked_config(path, probes);
    if (!fresh) return std::move(fresh).take_error();
    *reloaded = std::move(*fresh);
    return node::daemon_agent_config(*reloaded);
  };
  const agent::AgentConfig agent_config = node::daemon_agent_config(*config);
  // The mode for eacgm_build_info: a reload may change it (HTTP threads read it).
  auto mode = std::make_shared<std::atomic<TraceMode>>(agent::trace_mode(request, agent_config));
  std::shared_ptr<history::HistoryWriter> writer;
  trace.on_reload = [mode, request, &writer, running, reloaded](const agent::AgentConfig&,
                                                                const agent::AgentConfig& after) {
    mode->store(agent::trace_mode(request, after));
    if (writer) writer->flush_soon();  // what was kept so far is on disk before the new config
    for (const std::string& line : node::next_start_changes(*running, *reloaded)) print_error(line);
    *running = *reloaded;
  };
  // Pods and jobs of the traced processes (docs/kubernetes.md): ids from /proc always,
  // names and GPU assignment from the kubelet when [kubernetes] enabled.
  std::shared_ptr<sample::PodDirectory> pods;
  if (config->kubernetes.enabled) {
    sample::PodDirectoryOptions po;
    po.log_root = config->kubernetes.log_root;
    po.refresh = std::chrono::milliseconds(static_cast<std::int64_t>(config->kubernetes.refresh_s * 1000));
    pods = std::make_shared<sample::PodDirectory>(
        kubelet::pod_resources_source(config->kubernetes.pod_resources_socket), po,
        [](const std::string& line) { print_error(line); });
  }
  auto facts = std::make_shared<sample::ProcFacts>(pods);
  server::DaemonOptions daemon_options;
  daemon_options.facts = facts;
  daemon_options.pods = pods;
  daemon_options.pod_series = config->kubernetes.process_series == "auto";
  daemon_options.listen = *listen;
  daemon_options.token_file = flags.token_file.empty() ? sc.token_file : flags.token_file;
  daemon_options.serve = sc;
  daemon_options.log = [](std::string_view line) { print_error(std::string(line)); };
  daemon_options.mode = [mode] { return std::string(trace_mode_name(mode->load())); };
  // The daemon's routes read the analysis's snapshots; the trace feeds it and the stream.
  auto analysis = std::make_shared<analysis::LiveAnalysis>();
  daemon_options.source = std::make_shared<server::LiveSnapshots>(analysis);
  // The history: a writer thread over the same snapshots; a store named by the user
  // must open, the default one may not (the agent then serves without history).
  if (*history_setup) {
    const history::HistorySetup& hs = **history_setup;
    auto made = history::make_history_writer(
        hs, [analysis] { return analysis->snapshot(); }, [](const std::string& line) { print_error(line); },
        facts);
    if (!made) {
      if (hs.url_given) {
        print_error(made.error());
        return 2;
      }
      print_error(made.error() +
                  "; serving without history (set --store or [store] url; \"off\" to silence)");
    } else {
      writer = std::move(made).value();
      writer->set_mode([mode] { return std::string(trace_mode_name(mode->load())); });
      daemon_options.history = std::make_shared<history::HistoryReader>(hs.url, hs.options.retention);
      daemon_options.store_stats = [w = writer] { return w->stats(); };
    }
  }
  auto capture = std::make_shared<agent::CaptureRecorder>();
  daemon_options.capture = capture;
  server::Daemon daemon(std::move(daemon_options));
  trace.consumers = agent::make_consumers(request, agent_config, daemon.stream(), analysis, capture);
  trace.consumers.head = agent::with_facts_first(facts, std::move(trace.consumers.head));
  {
    // A daemon's freed memory goes back to the system (churn: BENCHMARKS.md).
    auto with_trim = std::make_shared<ConsumerList>();
    with_trim->add(std::move(trace.consumers.head));
    with_trim->add(std::make_shared<agent::MemoryTrim>());
    trace.consumers.head = std::move(with_trim);
  }
  if (auto st = daemon.start(); !st) {
    print_error(st.error());
    return 2;
  }
  print_error(fmt::format("serving on http://{} (/metrics, /api/v1/..., /api/v1/stream)",
                          server::host_port(listen->host, daemon.port())));
  print_error(fmt::format("web UI: http://{}/", server::host_port(listen->host, daemon.port())));
  if (writer) {
    print_error(fmt::format("keeping history in {} (node {}, every {} s)", writer->description(),
                            (*history_setup)->options.node,
                            std::chrono::duration<double>((*history_setup)->options.interval).count()));
    writer->start();
  }

  install_serve_signals();
  const int code = agent::run_reloading(agent_config, trace, g_stop, g_reload);
  if (writer) writer->stop();  // the final snapshot's interval and the spool
  daemon.stop();
  if (code == 0) print_error("stopped");
  return code;
}

}  // namespace

void add_serve_command(CLI::App& app, CommandContext& ctx) {
  auto flags = std::make_shared<ServeFlags>();
  auto* sub =
      app.add_subcommand("serve",
                         "the node agent: trace every process, sample the GPUs, serve Prometheus metrics "
                         "and a JSON API until SIGTERM (SIGHUP reloads the config)");
  sub->add_option("--config", ctx.config_path, "configuration file (TOML, see docs/config.md)");
  sub->add_option(
      "--listen", flags->listen,
      "HOST:PORT to serve on (default [serve] listen, 127.0.0.1:9977); not loopback needs a token");
  sub->add_option("--token-file", flags->token_file,
                  "file holding the bearer token every request must carry (mode 0600)");
  add_list_option(*sub, "--probes", flags->request.probes, "catalogs or probe names, comma-separated");
  sub->add_option("--btf", flags->request.btf_path,
                  "kernel BTF file, for kernels without /sys/kernel/btf/vmlinux");
  sub->add_flag("--no-gpu", flags->no_gpu, "do not sample the GPUs through NVML");
  sub->add_flag("--demo", flags->demo,
                "also start the bundled CUDA demo program (eacgm-demo) beside the agent");
  sub->add_option("--store", flags->store,
                  "where to keep the history: sqlite:PATH (default sqlite:/var/lib/eacgm/eacgm.db), "
                  "postgresql://..., or off");
  sub->add_option("--node", flags->node, "this node's name in the store (default the host name)");
  add_mode_option(*sub, flags->mode, "always-on");
  sub->footer(
      "Examples:\n"
      "  eacgm serve                                   metrics on http://127.0.0.1:9977/metrics\n"
      "  eacgm serve --listen 0.0.0.0:9977 --token-file /etc/eacgm/token\n"
      "  eacgm serve --demo                            the web UI on http://127.0.0.1:9977/ with the demo\n"
      "Routes: docs/api.md; metrics: docs/metrics.md");
  sub->final_callback([&ctx, flags] { ctx.exit_code = serve(ctx, *flags); });
}

}  // namespace eacgm::cli
