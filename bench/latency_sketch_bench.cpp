// Hot-path cost of the analysis stage: LatencySketch::add and CallSummary::add per
// event, against the ingest budget of 5M events/s (200 ns per event, all stages).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "analysis/call_summary.h"
#include "analysis/latency_sketch.h"

namespace {

using eacgm::CallEvent;
using eacgm::ProbeInfo;
using eacgm::analysis::CallSummary;
using eacgm::analysis::LatencySketch;

// Pre-drawn durations so the benchmark times the sketch, not the random generator.
// Log-normal around 20 us: kernel launches to synchronisations, several decades wide.
std::vector<std::uint64_t> durations(std::size_t n) {
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> dist(10.0, 2.0);
  std::vector<std::uint64_t> out(n);
  for (auto& v : out) v = static_cast<std::uint64_t>(dist(rng));
  return out;
}

// Adds `values` (a power of two of them) round and round, after one warm pass: the window
// has reached its size.
void add_values(benchmark::State& state, const std::vector<std::uint64_t>& values) {
  LatencySketch sketch;
  for (auto v : values) sketch.add(v);
  std::size_t i = 0;
  for (auto _ : state) {
    sketch.add(values[i]);
    i = (i + 1) & (values.size() - 1);
  }
  benchmark::DoNotOptimize(sketch.count());
  state.SetItemsProcessed(state.iterations());
}

void BM_LatencySketchAdd(benchmark::State& state) { add_values(state, durations(1 << 16)); }
BENCHMARK(BM_LatencySketchAdd);

// A function whose calls all take about the same time (5.0-5.6 us: a handful of buckets),
// as most do: the sketch never needs a wide window.
void BM_LatencySketchAddNarrow(benchmark::State& state) {
  std::vector<std::uint64_t> values(1 << 16);
  std::uint64_t x = 88172645463325252ULL;
  for (auto& v : values) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v = 5000 + x % 600;
  }
  add_values(state, values);
}
BENCHMARK(BM_LatencySketchAddNarrow);

void BM_LatencySketchQuantile(benchmark::State& state) {
  LatencySketch sketch;
  for (auto v : durations(1 << 16)) sketch.add(v);
  for (auto _ : state) benchmark::DoNotOptimize(sketch.quantile(0.99));
}
BENCHMARK(BM_LatencySketchQuantile);

// Events over `functions` distinct probes, in a shuffled order so the last-probe cache
// only helps as often as it would on a mixed real stream.
void BM_CallSummaryAdd(benchmark::State& state) {
  const auto functions = static_cast<std::size_t>(state.range(0));
  std::vector<std::shared_ptr<const ProbeInfo>> probes;
  for (std::size_t f = 0; f < functions; ++f) {
    auto p = std::make_shared<ProbeInfo>();
    p->function = "cudaFunction" + std::to_string(f);
    p->spec.domain = "cuda";
    probes.push_back(std::move(p));
  }
  const auto values = durations(1 << 16);
  std::mt19937_64 rng(2);
  std::vector<CallEvent> events(values.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    events[i].probe = probes[rng() % functions];
    events[i].has_exit = true;
    events[i].dur_ns = values[i];
    events[i].ret = (i % 100 == 0) ? 2 : 0;
  }
  CallSummary summary;
  for (const auto& e : events) summary.add(e);
  std::size_t i = 0;
  for (auto _ : state) {
    summary.add(events[i]);
    i = (i + 1) & (events.size() - 1);
  }
  benchmark::DoNotOptimize(summary.total_events());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CallSummaryAdd)->Arg(1)->Arg(64)->Arg(4096);

}  // namespace

BENCHMARK_MAIN();
