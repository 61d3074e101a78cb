// The fleet simulation's exposition side: the /metrics of a busy 8-GPU node with 50 pods
// (fleet_node.h), rendered by the daemon's own code (server::write_metrics), measured
// alone, and served for many simulated nodes at once to a real Prometheus.
//   eacgm_bench_fleet_metrics measure [--renders 40]
//     series per scrape (pod-labelled, as [kubernetes] process_series = "auto" has it,
//     and per pid), bytes and render time; the series by family.
//   eacgm_bench_fleet_metrics serve --port P --nodes N [--seconds S]
//     one HTTP server (server::HttpServer) answering /metrics?node=I for I < N, each
//     scrape rendered for its node (its hostname label) from one analysis fed a second
//     of calls every second; at the end, the scrapes served and their render times.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/counter_registry.h"
#include "core/prometheus_text.h"
#include "fleet_node.h"
#include "server/http_server.h"
#include "server/metrics_route.h"
#include "server/serve_config.h"

namespace {

using namespace eacgm;
using Clock = std::chrono::steady_clock;

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

server::MetricsOptions options(const std::string& hostname, bool pod_series) {
  server::MetricsOptions m = server::MetricsOptions::from(server::ServeConfig{});
  m.hostname = hostname;
  m.start_time_seconds = 1.79e9;
  m.mode = [] { return std::string("always-on"); };
  m.facts = std::make_shared<const fleet::FleetFacts>();
  m.pod_series = pod_series;
  return m;
}

std::string render(const analysis::AnalysisSnapshot& snap, const server::MetricsOptions& m,
                   const CounterValues& server_counters) {
  ExpositionWriter out(ExpositionFormat::kPrometheusText);
  server::write_metrics(out, &snap, m, server_counters);
  return out.finish();
}

// Samples (series) of a text exposition, in all and by family (a histogram's _bucket,
// _sum and _count count under its name).
std::map<std::string, std::size_t> series_by_family(const std::string& body, std::size_t& total) {
  std::map<std::string, std::size_t> by;
  total = 0;
  std::size_t at = 0;
  while (at < body.size()) {
    std::size_t eol = body.find('\n', at);
    if (eol == std::string::npos) eol = body.size();
    if (eol > at && body[at] != '#') {
      ++total;
      std::string name = body.substr(at, body.find_first_of("{ ", at) - at);
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        const std::string s = suffix;
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
          name.resize(name.size() - s.size());
          break;
        }
      }
      ++by[name];
    }
    at = eol + 1;
  }
  return by;
}

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

// A node 30 s into its life (30 seconds of calls, 30 NVML passes).
std::unique_ptr<fleet::SyntheticNode> warm_node() {
  auto node = std::make_unique<fleet::SyntheticNode>();
  const auto now = std::chrono::system_clock::now();
  for (int s = 30; s > 0; --s) node->advance(now - std::chrono::seconds(s));
  return node;
}

int measure(int renders) {
  auto node = warm_node();
  const auto snap = node->snapshot();
  CounterRegistry server_counters;
  server::HttpServer http;  // never started: its counters, as the daemon registers them
  http.register_counters(server_counters);
  std::printf("| labels | series per scrape | bytes per scrape | render ms p50 / p95 |\n|---|---|---|---|\n");
  std::map<std::string, std::size_t> pod_families;
  for (const bool pod_series : {true, false}) {
    const auto m = options("gpu-node-0000", pod_series);
    std::vector<double> ms;
    std::string body;
    for (int i = 0; i < renders; ++i) {
      const auto t0 = Clock::now();
      body = render(*snap, m, server_counters.read());
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::size_t total = 0;
    auto by = series_by_family(body, total);
    if (pod_series) pod_families = by;
    std::printf("| %s | %zu | %zu | %.2f / %.2f |\n",
                pod_series ? "pod (process_series = \"auto\")" : "pid (process_series = \"pid\")", total,
                body.size(), pct(ms, 0.5), pct(ms, 0.95));
  }
  std::vector<std::pair<std::size_t, std::string>> top;
  top.reserve(pod_families.size());
  for (const auto& [name, n] : pod_families) top.emplace_back(n, name);
  std::sort(top.rbegin(), top.rend());
  std::printf("\nlargest families (pod labels):");
  for (std::size_t i = 0; i < top.size() && i < 8; ++i)
    std::printf(" %s %zu;", top[i].second.c_str(), top[i].first);
  std::printf(" %zu families\n", top.size());
  return 0;
}

int serve(std::uint16_t port, int nodes, int seconds) {
  auto node = warm_node();
  server::HttpServer http;
  CounterRegistry server_counters;
  http.register_counters(server_counters);
  std::vector<server::MetricsOptions> per_node;
  per_node.reserve(static_cast<std::size_t>(nodes));
  for (int n = 0; n < nodes; ++n) per_node.push_back(options(fmt::format("gpu-node-{:04}", n), true));
  std::mutex stats_mutex;
  std::vector<double> render_ms;
  std::uint64_t bytes = 0;
  http.route("/metrics", [&](const server::Request& req) {
    const auto which = req.param("node");
    const int n = which ? std::atoi(which->c_str()) : -1;
    if (n < 0 || n >= nodes) return server::Response::json_error(404, "no such node");
    const auto t0 = Clock::now();
    server::Response r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = render(*node->snapshot(), per_node[static_cast<std::size_t>(n)], server_counters.read());
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    const std::lock_guard<std::mutex> lock(stats_mutex);
    render_ms.push_back(ms);
    bytes += r.body.size();
    return r;
  });
  server::ServerOptions so;
  so.port = port;
  so.max_clients = 16;
  // One kept-alive connection per simulated node, as Prometheus holds one per target.
  so.max_connections = static_cast<std::size_t>(nodes) + 64;
  if (auto st = http.start(so); !st) {
    std::fprintf(stderr, "fleet: %s\n", st.error().c_str());
    return 1;
  }
  std::printf("serving %d nodes on 127.0.0.1:%u/metrics?node=I\n", nodes, http.port());
  std::fflush(stdout);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  const auto end = Clock::now() + std::chrono::seconds(seconds);
  auto next = Clock::now();
  while (!g_stop && Clock::now() < end) {
    next += std::chrono::seconds(1);
    node->advance(std::chrono::system_clock::now());
    std::this_thread::sleep_until(next);
  }
  http.stop();
  const std::lock_guard<std::mutex> lock(stats_mutex);
  double total_ms = 0;
  for (double v : render_ms) total_ms += v;
  std::printf("scrapes served: %zu, %.0f bytes each, render ms p50 %.2f p95 %.2f, %.1f s rendering\n",
              render_ms.size(), render_ms.empty() ? 0.0 : static_cast<double>(bytes) / render_ms.size(),
              pct(render_ms, 0.5), pct(render_ms, 0.95), total_ms / 1000);
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string usage = fmt::format(
      "usage: {0} measure [--renders N]\n       {0} serve --port P --nodes N [--seconds S]\n", argv[0]);
  if (argc < 2) {
    std::fputs(usage.c_str(), stderr);
    return 2;
  }
  const std::string mode = argv[1];
  int renders = 40, nodes = 0, seconds = 3600;
  long port = -1;
  for (int i = 2; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "fleet: %s needs a value\n", a.c_str());
      return 2;
    }
    const long v = std::atol(argv[i + 1]);
    if (a == "--renders") {
      renders = static_cast<int>(v);
    } else if (a == "--nodes") {
      nodes = static_cast<int>(v);
    } else if (a == "--seconds") {
      seconds = static_cast<int>(v);
    } else if (a == "--port") {
      port = v;
    } else {
      std::fprintf(stderr, "fleet: unknown option %s\n%s", a.c_str(), usage.c_str());
      return 2;
    }
  }
  if (mode == "measure" && renders > 0) return measure(renders);
  if (mode == "serve" && nodes > 0 && port >= 0 && port < 65536)
    return serve(static_cast<std::uint16_t>(port), nodes, seconds);
  std::fputs(usage.c_str(), stderr);
  return 2;
} catch (const std::exception& e) {
  std::fprintf(stderr, "fleet: %s\n", e.what());
  return 1;
}
