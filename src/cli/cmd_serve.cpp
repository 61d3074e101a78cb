// `eacgm serve`: the node agent. Traces every process on the machine, samples the GPUs,
// keeps the analysis current and serves it over HTTP (/metrics, /api/v1, a live stream)
// until SIGTERM or SIGINT; SIGHUP reloads the configuration.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "agent/agent.h"
#include "analysis/live_analysis.h"
#include "cli/commands.h"
#include "cli/query_params.h"
#include "cli/serve_python_routes.h"
#include "cli/trace_runner.h"
#include "core/config_parse.h"
#include "export/api_json.h"
#include "export/call_metrics.h"
#include "export/dcgm_metrics.h"
#include "export/metrics_table.h"
#include "export/python_metrics.h"
#include "probe/catalog.h"
#include "sample/container_id.h"
#include "server/http_server.h"
#include "server/standard_routes.h"
#include "server/summary_stream.h"

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
  std::string token_file;
  std::vector<std::string> probes;
  std::string btf_path;
  bool no_gpu = false;
  std::string mode;
};

// Rank labels from /proc/PID/environ, read once per pid (HTTP threads share it).
class RankCache {
 public:
  RankInfo get(std::uint32_t pid) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = cache_.find(pid); it != cache_.end()) return it->second;
    if (cache_.size() >= 4096) cache_.clear();
    auto r = read_rank_info(static_cast<pid_t>(pid));
    return cache_[pid] = r ? *r : RankInfo{};
  }

 private:
  std::mutex mutex_;
  std::map<std::uint32_t, RankInfo> cache_;
};

std::string cmdline_of(std::uint32_t pid) {
  std::ifstream in(fmt::format("/proc/{}/cmdline", pid), std::ios::binary);
  std::string s(4096, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<std::size_t>(in.gcount()));
  while (!s.empty() && s.back() == '\0') s.pop_back();
  for (char& c : s) {
    if (c == '\0') c = ' ';
  }
  return s;
}

std::string hostname() {
  char buf[256] = {};
  return gethostname(buf, sizeof(buf) - 1) == 0 ? std::string(buf) : std::string();
}

// The whole configuration is checked before the running trace is touched: a bad new
// file leaves the old one running.
Result<Config> load_checked(const std::string& path, const ServeFlags& flags) {
  auto config = load_config(path);
  if (!config) return config;
  std::vector<std::string> names = flags.probes;
  if (names.empty()) names = config->catalogs.empty() ? probe::default_catalog_names() : config->catalogs;
  if (flags.probes.empty()) {
    for (const auto& s : config->probes) names.push_back(s.name);
  }
  if (auto specs = probe::select_specs(names, config->probes); !specs) {
    return make_error(ErrorKind::kUsage, specs.error());
  }
  return config;
}

int serve(const CommandContext& ctx, const ServeFlags& flags) {
  auto config = load_checked(ctx.config_path, flags);
  if (!config) {
    print_error(config.error());
    return 2;
  }
  const ServeConfig sc = config->serve;  // listening is fixed for the daemon's life
  auto listen = server::parse_listen_address(flags.listen.empty() ? sc.listen : flags.listen);
  if (!listen) {
    print_error("--listen: " + listen.error());
    return 2;
  }

  auto analysis = std::make_shared<analysis::LiveAnalysis>();
  auto channel = std::make_shared<server::SseChannel>();
  auto consumers = std::make_shared<ConsumerList>();
  consumers->add(analysis);
  consumers->add(std::make_shared<server::SummaryStream>(channel));
  auto ranks = std::make_shared<RankCache>();
  const double started =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();

  server::HttpServer http;
  CounterRegistry server_counters;  // the server's own, alive as long as it is
  http.register_counters(server_counters);
  server::register_sse_counters(server_counters, *channel);

  exporting::GpuMetricsOptions gpu_opts;
  gpu_opts.hostname = hostname();
  gpu_opts.rank_of_pid = [ranks](std::uint32_t pid) { return ranks->get(pid); };
  exporting::CallMetricsOptions call_opts;
  call_opts.max_function_series = sc.max_function_series;
  call_opts.max_process_series = sc.max_process_series;
  call_opts.max_histogram_series = sc.max_histogram_series;
  call_opts.rank_of_pid = gpu_opts.rank_of_pid;
  exporting::ApiOptions api_opts;
  api_opts.max_processes = sc.max_process_series;
  api_opts.rank_of_pid = gpu_opts.rank_of_pid;
  api_opts.cmdline_of_pid = cmdline_of;
  api_opts.process_alive = analysis::process_alive;
  api_opts.container_of_pid = read_container_id;
  const bool dcgm = sc.dcgm_metrics;

  server::StandardRoutes routes;
  routes.write_metrics = [=, &server_counters](exporting::ExpositionWriter& out) {
    auto snap = analysis->snapshot();
    if (snap && snap->last_gpu) {
      if (dcgm) exporting::append_gpu_metrics(out, *snap->last_gpu, gpu_opts);
      exporting::append_process_metrics(out, *snap->last_gpu, gpu_opts);
    }
    if (snap) {
      exporting::append_call_metrics(out, *snap, call_opts);
      if (snap->python) exporting::append_python_metrics(out, *snap->python);
      exporting::append_counters(out, snap->counters);
    }
    exporting::append_agent_metrics(out, started);
    exporting::append_counters(out, server_counters.read());
  };
  routes.not_ready_reason = [analysis]() -> std::string {
    return analysis->snapshot() ? "" : "no snapshot yet (the trace is starting)";
  };
  server::add_standard_routes(http, routes);
  auto json_route = [&](const char* path,
                        const std::function<std::string(const analysis::AnalysisSnapshot&)>& body) {
    http.route(path, [analysis, body](const server::Request&) {
      auto snap = analysis->snapshot();
      if (!snap) return server::Response::json_error(503, "no snapshot yet (the trace is starting)");
      return server::Response::json(body(*snap));
    });
  };
  json_route("/api/v1/gpus", exporting::api_gpus);
  json_route("/api/v1/functions", exporting::api_functions);
  json_route("/api/v1/counters", exporting::api_counters);
  json_route("/api/v1/memory", exporting::api_memory);
  json_route("/api/v1/kernels",
             [](const analysis::AnalysisSnapshot& s) { return exporting::api_kernels(s); });
  json_route("/api/v1/nccl", exporting::api_nccl);
  json_route("/api/v1/processes", [api_opts](const analysis::AnalysisSnapshot& s) {
    return exporting::api_processes(s, api_opts);
  });
  json_route("/api/v1/anomalies", exporting::api_anomalies);
  add_python_routes(http, analysis);
  http.route("/api/v1/series", [analysis](const server::Request& req) {
    std::uint64_t window = 900;
    if (auto w = req.param("window")) {
      auto v = parse_number(*w, 1, 3600);
      if (!v) return server::Response::json_error(400, "window: a whole number of seconds from 1 to 3600");
      window = *v;
    }
    auto snap = analysis->snapshot();
    if (!snap) return server::Response::json_error(503, "no snapshot yet (the trace is starting)");
    return server::Response::json(exporting::api_series(*snap, window));
  });
  http.route("/api/v1/stream", [channel](const server::Request& req) {
    server::SseChannel::Filter filter;
    if (auto calls = req.param("calls")) {
      if (*calls != "0" && *calls != "1") return server::Response::json_error(400, "calls: 0 or 1");
      filter.tagged = *calls == "1";
    }
    auto pid = pid_param(req);
    if (!pid) return server::Response::json_error(400, pid.error());
    if (*pid) {
      if (!filter.tagged) return server::Response::json_error(400, "pid: only with calls=1");
      filter.tag = **pid;
    }
    filter.max_tagged_per_second = server::SummaryStream::kCallsPerSecond;
    return server::event_stream(*channel, filter);
  });

  server::ServerOptions so;
  so.address = listen->host;
  so.port = listen->port;
  so.token_file = flags.token_file.empty() ? sc.token_file : flags.token_file;
  so.max_clients = sc.max_clients;
  so.public_paths = {"/healthz", "/readyz"};
  so.log = [](std::string_view line) { print_error(std::string(line)); };
  if (auto st = http.start(so); !st) {
    print_error(st.error());
    return 2;
  }
  print_error(fmt::format("serving on http://{}:{} (/metrics, /api/v1/..., /api/v1/stream)", listen->host,
                          http.port()));

  install_serve_signals();
  int code = 0;
  while (true) {
    agent::AgentOptions ao;
    ao.config = *config;
    ao.config.trace.rescan_interval_s = config->serve.rescan_interval_s;
    ao.config.trace.mode = chosen_mode(flags.mode, config->trace.mode, TraceMode::kAlwaysOn);
    ao.probes = flags.probes;
    ao.btf_path = flags.btf_path;
    ao.sample_gpus = !flags.no_gpu;
    ao.host_waits = config->trace.host_waits.value_or(false);
    // Python stacks of the last minutes, bounded; between traces (a reload) no sample
    // is being added.
    ao.python_hz = config->python.sample_hz;
    analysis->set_python_hz(ao.python_hz);
    analysis->set_python_limits(analysis::python_profile_limits(config->python, true));
    // SIGHUP: a new configuration that checks out ends this trace and starts the next;
    // a bad one is reported and the running trace goes on.
    auto next = std::make_shared<std::optional<Config>>();
    ao.should_end = [&ctx, &flags, next] {
      if (!g_reload.exchange(false)) return false;
      auto fresh = load_checked(ctx.config_path, flags);
      if (!fresh) {
        print_error("reload failed, keeping the running configuration: " + fresh.error());
        return false;
      }
      *next = std::move(*fresh);
      return true;
    };
    auto agent = agent::Agent::start(std::move(ao), consumers, print_error);
    if (!agent) {
      print_error(agent.error());
      code = agent::exit_code_for(agent.error_kind());
      break;
    }
    (*agent)->run(g_stop);
    if (g_stop.load() != 0 || !next->has_value()) break;
    if (next->value().serve.listen != sc.listen || next->value().serve.token_file != sc.token_file) {
      print_error("reload: [serve] listen and token_file apply at the next start");
    }
    config = std::move(next->value());
    print_error("configuration reloaded; tracing restarted");
  }
  channel->close();
  http.stop();
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
  sub->add_option("--probes", flags->probes, "catalogs or probe names, comma-separated")->delimiter(',');
  sub->add_option("--btf", flags->btf_path, "kernel BTF file, for kernels without /sys/kernel/btf/vmlinux");
  sub->add_flag("--no-gpu", flags->no_gpu, "do not sample the GPUs through NVML");
  add_mode_option(*sub, flags->mode, "always-on");
  sub->footer(
      "Examples:\n"
      "  eacgm serve                                   metrics on http://127.0.0.1:9977/metrics\n"
      "  eacgm serve --listen 0.0.0.0:9977 --token-file /etc/eacgm/token\n"
      "Routes: docs/api.md; metrics: docs/metrics.md");
  sub->final_callback([&ctx, flags] { ctx.exit_code = serve(ctx, *flags); });
}

}  // namespace eacgm::cli
