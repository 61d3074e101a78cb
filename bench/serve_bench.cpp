// `eacgm serve` costs per snapshot: the /metrics render (every family, as
// cmd_serve.cpp writes it, in both formats), the /api/v1 documents, and the snapshot
// publication the output thread does each second (LiveAnalysis::on_tick copying the
// aggregators). The snapshot is a large node's: 8 GPUs with every field set, 200 GPU
// processes, and calls of every spec of every built-in catalog from 200 pids with
// durations spread over 6 decades. Targets (BENCHMARKS.md): /metrics <= 10 ms, <= 1 MiB.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "analysis/live_analysis.h"
#include "core/agent_counters.h"
#include "core/counter_registry.h"
#include "core/prometheus_text.h"
#include "export/api_json.h"
#include "export/call_metrics.h"
#include "export/dcgm_metrics.h"
#include "export/metrics_table.h"
#include "probe/catalog.h"
#include "server/http_server.h"
#include "server/metrics_route.h"
#include "server/sse_channel.h"

namespace {

using namespace eacgm;

constexpr unsigned kGpus = 8;
constexpr std::uint32_t kPids = 200;
constexpr std::uint32_t kFirstPid = 40000;
constexpr int kCallsPerPidAndFunction = 4;
constexpr int kPasses = 30;  // sampling passes seen before the snapshot

DeviceSample device(unsigned i, std::uint64_t pass) {
  DeviceSample d;
  d.index = i;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-6f3c2a1e-" + std::to_string(1000 + i) + "-4b7d-9e2f-0123456789ab";
  d.pci_bus_id = "00000000:" + std::to_string(18 + i) + ":00.0";
  d.utilization_gpu_percent = static_cast<std::uint32_t>((37 * i + pass) % 101);
  d.utilization_memory_percent = static_cast<std::uint32_t>((11 * i + pass) % 101);
  d.memory_total_bytes = 85520809984ull;
  d.memory_used_bytes = 40000000000ull + i * 1000000ull + pass;
  d.memory_free_bytes = *d.memory_total_bytes - *d.memory_used_bytes;
  d.memory_reserved_bytes = 536870912ull;
  d.temperature_gpu_celsius = 40 + i;
  d.temperature_memory_celsius = 50 + i;
  d.power_usage_milliwatts = static_cast<std::uint32_t>(300000 + 1000 * i + pass);
  d.power_limit_milliwatts = 700000;
  d.energy_total_millijoules = 123456789000ull + pass * 300000ull;
  d.clock_sm_mhz = 1980;
  d.clock_memory_mhz = 2619;
  d.fan_speed_percent = 30;
  d.encoder_utilization_percent = 0;
  d.decoder_utilization_percent = 1;
  d.pcie_tx_bytes_per_second = 123456789ull;
  d.pcie_rx_bytes_per_second = 987654321ull;
  d.pcie_replay_total = 2;
  d.nvlink_tx_bytes_total = 1234567890123ull + pass;
  d.nvlink_rx_bytes_total = 2234567890123ull + pass;
  d.ecc_corrected_volatile_total = 3;
  d.ecc_uncorrected_volatile_total = 0;
  d.remapped_rows_correctable = 1;
  d.remapped_rows_uncorrectable = 0;
  d.remapped_rows_pending = false;
  d.remapped_rows_failure = false;
  d.clock_event_reasons = 1;
  d.xid_errors_total = i == 0 ? 1 : 0;
  d.last_xid = 31;
  return d;
}

GpuSnapshot gpu_pass(std::uint64_t pass) {
  GpuSnapshot s;
  s.sequence = pass;
  s.time = std::chrono::system_clock::now();
  s.pass_cpu_time = std::chrono::microseconds(900);
  s.system.driver_version = "580.159.04";
  s.system.cuda_driver_version = 13000;
  for (unsigned i = 0; i < kGpus; ++i) s.devices.push_back(device(i, pass));
  for (std::uint32_t p = 0; p < kPids; ++p) {
    ProcessSample ps;
    ps.pid = kFirstPid + p;
    ps.gpu_index = p % kGpus;
    ps.gpu_uuid = s.devices[ps.gpu_index].uuid;
    ps.name = "python3";
    ps.container_id = std::string(64, static_cast<char>('a' + p % 6));
    ps.compute = true;
    ps.used_memory_bytes = 1000000000ull + p * 4096ull;
    ps.sm_utilization_percent = (p + static_cast<std::uint32_t>(pass)) % 101;
    ps.memory_utilization_percent = p % 50;
    ps.encoder_utilization_percent = 0;
    ps.decoder_utilization_percent = 0;
    s.processes.push_back(std::move(ps));
  }
  return s;
}

// One ProbeInfo per spec of every built-in catalog (a pattern spec, such as torch's
// bindings, counts once under its spec name), then, up to `functions`, torch ops as the
// torch catalog's patterns resolve them on a real libtorch_python (3728 probes with
// cuda,cuda_driver,nccl,torch on the device, BENCHMARKS.md "Start-up").
std::vector<std::shared_ptr<const ProbeInfo>> catalog_probes(std::size_t functions) {
  std::vector<std::shared_ptr<const ProbeInfo>> out;
  std::uint32_t id = 0;
  const ProbeSpec* torch_pattern = nullptr;
  for (const auto& catalog : probe::builtin_catalogs()) {
    for (const auto& spec : catalog.specs) {
      auto p = std::make_shared<ProbeInfo>();
      p->id = id++;
      p->function = spec.name;
      p->symbol = spec.symbol;
      p->library = "/usr/lib/x86_64-linux-gnu/" + spec.library;
      p->spec = spec;
      out.push_back(std::move(p));
      if (spec.symbol_is_pattern && spec.domain == "torch") torch_pattern = &spec;
    }
  }
  for (std::size_t i = 0; out.size() < functions && torch_pattern != nullptr; ++i) {
    auto p = std::make_shared<ProbeInfo>();
    p->id = id++;
    p->function = "aten_op_" + std::to_string(i) + "_";
    p->symbol = "THPVariable_" + p->function;
    p->library = "/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_python.so";
    p->spec = *torch_pattern;
    out.push_back(std::move(p));
  }
  return out;
}

CounterRegistry& agent_counters() {
  static CounterRegistry registry;
  static bool filled = false;
  if (!filled) {
    std::uint64_t v = 1000;
    for (const auto& c : agent_counter_table()) {
      const std::uint64_t value = v++;
      registry.add(agent_counter(c.key), [value] { return value; });
    }
    filled = true;
  }
  return registry;
}

struct Node {
  std::shared_ptr<analysis::LiveAnalysis> analysis = std::make_shared<analysis::LiveAnalysis>();
  std::size_t functions = 0;
  std::uint64_t events = 0;
};

// Fills a LiveAnalysis the way the output thread does: calls in batches, a sampling
// pass every so often, then one tick to publish. `functions`: at least every catalog
// spec (0: just those).
Node& node(std::size_t functions) {
  static std::map<std::size_t, Node> nodes;
  if (auto it = nodes.find(functions); it != nodes.end()) return it->second;
  Node& node = nodes[functions];
  const auto probes = catalog_probes(functions);
  node.functions = probes.size();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> decades(3.0, 9.0);  // 1 us .. 1 s
  std::vector<CallEvent> batch;
  std::uint64_t ts = 1'700'000'000'000'000'000ull;
  int pass = 0;
  for (std::uint32_t p = 0; p < kPids; ++p) {
    for (const auto& probe : probes) {
      for (int k = 0; k < kCallsPerPidAndFunction; ++k) {
        CallEvent e;
        e.ts_ns = ts += 1000;
        e.pid = kFirstPid + p;
        e.tid = e.pid;
        std::snprintf(e.comm.data(), e.comm.size(), "python3");
        e.probe = probe;
        e.has_exit = probe->spec.with_exit;
        e.dur_ns = e.has_exit ? static_cast<std::uint64_t>(std::pow(10.0, decades(rng))) : 0;
        e.ret = (rng() % 50 == 0) ? static_cast<std::int64_t>(1 + rng() % 4) : 0;
        e.nested = probe->spec.domain == "cuda_driver" && k % 2 == 0;
        batch.push_back(std::move(e));
      }
    }
    node.events += batch.size();
    node.analysis->on_calls(batch);
    batch.clear();
    if (p % (kPids / kPasses + 1) == 0) node.analysis->on_gpu(gpu_pass(static_cast<std::uint64_t>(pass++)));
  }
  node.analysis->on_gpu(gpu_pass(static_cast<std::uint64_t>(pass)));
  node.analysis->on_tick(std::chrono::steady_clock::now(), agent_counters().read());
  return node;
}

// Rank labels as the daemon's cache answers them after the first scrape (here a
// constant), and a command line for every process.
class BenchFacts final : public sample::ProcessFacts {
 public:
  sample::RankInfo rank(std::uint32_t pid) const override {
    sample::RankInfo r;
    r.rank = pid % 64;
    r.local_rank = pid % 8;
    r.world_size = 64;
    return r;
  }
  std::string cmdline(std::uint32_t) const override { return "python3 train.py --config big.yaml"; }
  std::optional<std::string> container(std::uint32_t) const override { return std::nullopt; }
  bool alive(std::uint32_t) const override { return true; }
};

// The daemon's /metrics (server/metrics_route.h) and API options.
struct Renderer {
  server::MetricsOptions metrics_opts = server::MetricsOptions::from(server::ServeConfig{});
  exporting::ApiOptions api_opts;
  server::HttpServer http;  // never started: its counters, as the daemon registers them
  server::SseChannel channel;
  CounterRegistry server_counters;

  Renderer() {
    auto facts = std::make_shared<const BenchFacts>();
    metrics_opts.hostname = "gpu-node-17";
    metrics_opts.start_time_seconds = 1.7e9;
    metrics_opts.facts = facts;
    api_opts.rank_of_pid = [facts](std::uint32_t pid) { return facts->rank(pid); };
    api_opts.cmdline_of_pid = [facts](std::uint32_t pid) { return facts->cmdline(pid); };
    http.register_counters(server_counters);
    server::register_sse_counters(server_counters, channel);
  }

  std::string metrics(const analysis::AnalysisSnapshot& snap, ExpositionFormat format) {
    ExpositionWriter out(format);
    server::write_metrics(out, &snap, metrics_opts, server_counters.read());
    return out.finish();
  }
};

Renderer& renderer() {
  static Renderer r;
  return r;
}

// Functions: every catalog spec once (121), or as many probes as the default catalogs
// plus torch attach on the device (past [serve] max_function_series = 2000, the rest
// fold into one `other` series).
constexpr std::int64_t kCatalogSpecs = 0;
constexpr std::int64_t kWithTorchOps = 3728;

void report_size(benchmark::State& state, const Node& n, std::size_t bytes) {
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["MiB"] = static_cast<double>(bytes) / (1024.0 * 1024.0);
  state.counters["functions"] = static_cast<double>(n.functions);
}

void BM_MetricsRender(benchmark::State& state) {
  const auto format =
      state.range(1) == 0 ? ExpositionFormat::kPrometheusText : ExpositionFormat::kOpenMetrics;
  const Node& n = node(static_cast<std::size_t>(state.range(0)));
  auto snap = n.analysis->snapshot();
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::string body = renderer().metrics(*snap, format);
    bytes = body.size();
    benchmark::DoNotOptimize(body.data());
  }
  report_size(state, n, bytes);
  state.SetLabel(state.range(1) == 0 ? "text 0.0.4" : "OpenMetrics");
}
BENCHMARK(BM_MetricsRender)
    ->ArgsProduct({{kCatalogSpecs, kWithTorchOps}, {0, 1}})
    ->ArgNames({"functions", "openmetrics"})
    ->Unit(benchmark::kMillisecond);

// The same node in Kubernetes: its 200 processes in 50 pods (4 each: a rank and three
// data-loader workers; one container, one GPU per pod from the kubelet's list through a
// real PodDirectory), the per-process
// series by pod (pod_series 1, the default) or by pid with the pod labels added (0).
class PodFacts final : public sample::ProcessFacts {
 public:
  // A pod's four processes: its rank and three data-loader workers, which inherit the
  // rank's environment (so its rank labels).
  sample::RankInfo rank(std::uint32_t pid) const override {
    sample::RankInfo r;
    r.rank = (pid - kFirstPid) / 4;
    r.local_rank = *r.rank % 8;
    r.world_size = kPids / 4;
    return r;
  }
  std::string cmdline(std::uint32_t) const override { return "python3 train.py"; }
  std::optional<std::string> container(std::uint32_t) const override { return std::nullopt; }
  bool alive(std::uint32_t) const override { return true; }
  sample::Workload workload(std::uint32_t pid) const override {
    const std::uint32_t pod = (pid - kFirstPid) / 4;
    sample::Workload w;
    w.pod = "trainer-" + std::to_string(pod);
    w.namespace_ = "ml";
    w.container = "pytorch";
    w.pod_uid = "00000000-0000-4000-8000-" + std::to_string(100000000000 + pod);
    w.job = "job-" + std::to_string(pod / 8);
    return w;
  }
};

void BM_MetricsRenderByPod(benchmark::State& state) {
  const Node& n = node(kCatalogSpecs);
  auto snap = n.analysis->snapshot();
  server::MetricsOptions o = renderer().metrics_opts;
  o.facts = std::make_shared<const PodFacts>();
  o.pod_series = state.range(0) == 1;
  o.pods = std::make_shared<sample::PodDirectory>(
      []() -> Result<std::vector<sample::PodContainerResources>> {
        std::vector<sample::PodContainerResources> listed;
        for (unsigned i = 0; i < kPids / 4; ++i) {
          listed.push_back({"ml",
                            "trainer-" + std::to_string(i),
                            "pytorch",
                            {{"nvidia.com/gpu", "GPU-" + std::to_string(i % kGpus)}}});
        }
        return listed;
      },
      sample::PodDirectoryOptions{}, nullptr);
  std::size_t bytes = 0, series = 0;
  for (auto _ : state) {
    ExpositionWriter out(ExpositionFormat::kPrometheusText);
    server::write_metrics(out, snap.get(), o, renderer().server_counters.read());
    std::string body = out.finish();
    bytes = body.size();
    benchmark::DoNotOptimize(body.data());
    series = 0;
    for (std::size_t at = 0; (at = body.find('\n', at)) != std::string::npos; ++at) {
      if (at + 1 < body.size() && body[at + 1] != '#') ++series;
    }
  }
  report_size(state, n, bytes);
  state.counters["series"] = static_cast<double>(series);
  state.SetLabel(state.range(0) == 1 ? "by pod" : "by pid, pod labels added");
}
BENCHMARK(BM_MetricsRenderByPod)->Arg(1)->Arg(0)->ArgName("pod_series")->Unit(benchmark::kMillisecond);

template <std::string (*Render)(const analysis::AnalysisSnapshot&)>
void BM_Api(benchmark::State& state) {
  const Node& n = node(static_cast<std::size_t>(state.range(0)));
  auto snap = n.analysis->snapshot();
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::string body = Render(*snap);
    bytes = body.size();
    benchmark::DoNotOptimize(body.data());
  }
  report_size(state, n, bytes);
}
BENCHMARK_TEMPLATE(BM_Api, exporting::api_functions)
    ->Name("BM_ApiFunctions")
    ->Arg(kCatalogSpecs)
    ->Arg(kWithTorchOps)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Api, exporting::api_gpus)
    ->Name("BM_ApiGpus")
    ->Arg(kCatalogSpecs)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Api, exporting::api_counters)
    ->Name("BM_ApiCounters")
    ->Arg(kCatalogSpecs)
    ->Unit(benchmark::kMillisecond);

void BM_ApiProcesses(benchmark::State& state) {
  const Node& n = node(static_cast<std::size_t>(state.range(0)));
  auto snap = n.analysis->snapshot();
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::string body = exporting::api_processes(*snap, renderer().api_opts);
    bytes = body.size();
    benchmark::DoNotOptimize(body.data());
  }
  report_size(state, n, bytes);
}
BENCHMARK(BM_ApiProcesses)->Arg(kCatalogSpecs)->Unit(benchmark::kMillisecond);

// The output thread's tick: copy CallSummary, GpuActivity, the last pass and the
// counters into a new snapshot and publish it (the previous one is freed here when no
// reader holds it, as in the daemon between scrapes).
void BM_SnapshotPublish(benchmark::State& state) {
  const Node& n = node(static_cast<std::size_t>(state.range(0)));
  auto& analysis = *n.analysis;
  const CounterValues counters = agent_counters().read();
  for (auto _ : state) analysis.on_tick(std::chrono::steady_clock::now(), counters);
  state.counters["functions"] = static_cast<double>(n.functions);
  state.counters["events"] = static_cast<double>(n.events);
}
BENCHMARK(BM_SnapshotPublish)->Arg(kCatalogSpecs)->Arg(kWithTorchOps)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
