// Throughput and memory of the whole analysis stage: LiveAnalysis::on_calls (call
// summary, GPU activity, memory ledger, kernels, GPU work, NCCL bandwidth and skew,
// op -> kernels, per-second rollups, anomalies) over a recorded training-step stream of
// the built-in catalogs' probes, in batches of 256 calls as the ring-buffer reader hands
// them over; against the target of 5,000,000 calls a second on one core. Also the heap
// it holds per (process, function) key and per live allocation.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "analysis/live_analysis.h"
#include "analysis/memory_ledger.h"
#include "core/probe_spec.h"
#include "probe/catalog.h"

namespace {

using eacgm::CallEvent;
using eacgm::ProbeInfo;
using eacgm::ProbeSpec;
using eacgm::analysis::LiveAnalysis;

std::shared_ptr<const ProbeInfo> builtin(const std::string& name, const std::string& function = "") {
  static std::uint32_t next_id = 1;
  for (const auto& c : eacgm::probe::builtin_catalogs()) {
    for (const auto& s : c.specs) {
      if (s.name != name) continue;
      auto p = std::make_shared<ProbeInfo>();
      p->id = next_id++;
      p->function = function.empty() ? name : function;
      p->symbol = name;
      p->spec = s;
      return p;
    }
  }
  std::abort();
}

int arg(const ProbeInfo& p, const char* name) {
  const int i = eacgm::arg_index(p.spec, name);
  if (i < 0) std::abort();
  return i;
}

// One recorded stream: `steps` training steps of one process, each 20 PyTorch ops that
// launch 2-3 named kernels, 4 host-to-device copies, 2 memsets, 4 allocations and the 4
// frees of allocations made 128 steps earlier (512 live at steady state), 2 all-reduces
// and one synchronisation: 100 calls a step. Durations are log-normal.
struct Stream {
  std::vector<CallEvent> events;
  std::uint64_t span_ns = 0;  // added to every stamp before the stream is replayed again
};

Stream make_stream(std::size_t steps) {
  auto launch = builtin("cuLaunchKernel");
  auto copy = builtin("cuMemcpyHtoDAsync_v2");
  auto memset = builtin("cuMemsetD32Async");
  auto alloc = builtin("cuMemAlloc_v2");
  auto free = builtin("cuMemFree_v2");
  auto sync = builtin("cuStreamSynchronize");
  auto allreduce = builtin("ncclAllReduce");
  std::vector<std::shared_ptr<const ProbeInfo>> ops;
  for (int k = 0; k < 12; ++k) ops.push_back(builtin("torch_ops", "aten::op" + std::to_string(k)));
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> dur(std::log(4000.0), 0.6);
  Stream s;
  std::uint64_t ts = 1'000'000'000;
  auto call = [&](const std::shared_ptr<const ProbeInfo>& p) -> CallEvent& {
    CallEvent e;
    e.ts_ns = ts;
    e.dur_ns = static_cast<std::uint64_t>(dur(rng));
    e.pid = e.tid = 4242;
    e.probe = p;
    e.has_exit = true;
    e.nargs = static_cast<std::uint8_t>(p->spec.args.size());
    ts += e.dur_ns + 500;
    s.events.push_back(std::move(e));
    return s.events.back();
  };
  auto ptr = [](std::size_t step, int j) { return 0x7f0000000000ull + ((step % 256) * 4 + j) * 0x100000; };
  for (std::size_t step = 0; step < steps; ++step) {
    for (int o = 0; o < 20; ++o) {
      const std::uint64_t op_start = ts;
      ts += 300;
      for (int k = 0; k < 2 + (o % 2); ++k) {
        CallEvent& e = call(launch);
        const std::size_t kernel = (o * 3 + k) % 40;
        e.args[arg(*launch, "f")] = 0x5000 + kernel;
        e.args[arg(*launch, "grid")] = 128 | (1ull << 32);
        e.args[arg(*launch, "block")] = 256 | (1ull << 32);
        e.kernel = "void at::native::kernel_" + std::to_string(kernel) + "<float>(int, float*)";
      }
      CallEvent& op = call(ops[o % ops.size()]);
      op.ts_ns = op_start;
      op.dur_ns = ts - op_start;
      op.ret = 0x1234;
    }
    for (int j = 0; j < 4; ++j) call(copy).args[arg(*copy, "count")] = 1ull << (12 + j * 3);
    for (int j = 0; j < 2; ++j) call(memset).args[arg(*memset, "count")] = 1 << 16;
    for (int j = 0; j < 4; ++j) {
      CallEvent& a = call(alloc);
      a.args[arg(*alloc, "ptr")] = ptr(step, j);
      a.args[arg(*alloc, "size")] = 1ull << (20 + j);
      if (step >= 128) call(free).args[arg(*free, "ptr")] = ptr(step - 128, j);
    }
    for (int j = 0; j < 2; ++j) {
      CallEvent& r = call(allreduce);
      r.args[arg(*allreduce, "count")] = 1 << 20;
      r.args[arg(*allreduce, "datatype")] = 7;  // ncclFloat32
      r.nccl_comm_id = 0xc0ffee;
      r.nccl_rank = 0;
      r.nccl_nranks = 1;
    }
    call(sync);
  }
  s.span_ns = ts;
  return s;
}

void BM_LiveAnalysisOnCalls(benchmark::State& state) {
  Stream stream = make_stream(256);  // frees of the first 128 steps' pointers come in the replays
  LiveAnalysis analysis;
  analysis.set_process_alive([](std::uint32_t) { return true; });
  std::span<const CallEvent> all(stream.events);
  constexpr std::size_t kBatch = 256;
  std::size_t at = 0;
  for (auto _ : state) {
    analysis.on_calls(all.subspan(at, std::min(kBatch, all.size() - at)));
    at += kBatch;
    if (at >= all.size()) {
      state.PauseTiming();
      for (auto& e : stream.events) e.ts_ns += stream.span_ns;
      state.ResumeTiming();
      at = 0;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
  const auto snap = (analysis.on_tick(std::chrono::steady_clock::now(), {}), analysis.snapshot());
  state.counters["live_allocations"] =
      snap && !snap->get<eacgm::analysis::MemorySummary>().rows.empty()
          ? static_cast<double>(snap->get<eacgm::analysis::MemorySummary>().rows[0].live_allocations)
          : 0;
}
BENCHMARK(BM_LiveAnalysisOnCalls)->Unit(benchmark::kMicrosecond);

std::size_t heap_in_use() { return mallinfo2().uordblks; }

// Heap per (process, function) key: 2,000 processes calling 8 functions each.
void BM_LiveAnalysisBytesPerKey(benchmark::State& state) {
  std::vector<std::shared_ptr<const ProbeInfo>> probes;
  for (const char* n :
       {"cuLaunchKernel", "cuMemcpyHtoDAsync_v2", "cuMemsetD32Async", "cuStreamSynchronize",
        "cuCtxSynchronize", "cuMemcpyDtoDAsync_v2", "cuMemsetD8Async", "cuMemcpyDtoHAsync_v2"}) {
    probes.push_back(builtin(n));
  }
  constexpr std::uint32_t kProcesses = 2000;
  double per_key = 0;
  for (auto _ : state) {
    auto analysis = std::make_unique<LiveAnalysis>();
    std::vector<CallEvent> batch;
    std::uint64_t ts = 1'000'000'000;
    for (std::uint32_t pid = 1; pid <= 16; ++pid) {  // warm: every function known
      for (const auto& p : probes) {
        CallEvent e;
        e.ts_ns = ts += 1000;
        e.dur_ns = 2000;
        e.pid = e.tid = pid;
        e.probe = p;
        e.has_exit = true;
        batch.push_back(e);
      }
    }
    analysis->on_calls(batch);
    batch.clear();
    const std::size_t before = heap_in_use();
    for (std::uint32_t pid = 100; pid < 100 + kProcesses; ++pid) {
      for (const auto& p : probes) {
        CallEvent e;
        e.ts_ns = ts += 1000;
        e.dur_ns = 2000;
        e.pid = e.tid = pid;
        e.probe = p;
        e.has_exit = true;
        batch.push_back(e);
      }
      if (batch.size() >= 256) {
        analysis->on_calls(batch);
        batch.clear();
      }
    }
    analysis->on_calls(batch);
    per_key = static_cast<double>(heap_in_use() - before) / (kProcesses * probes.size());
    benchmark::DoNotOptimize(analysis);
  }
  state.counters["bytes_per_key"] = per_key;
}
BENCHMARK(BM_LiveAnalysisBytesPerKey)->Iterations(1)->Unit(benchmark::kMillisecond);

// Heap per live allocation in the memory ledger: 60,000 allocations, none freed.
void BM_LiveAnalysisBytesPerLiveAllocation(benchmark::State& state) {
  auto alloc = builtin("cuMemAlloc_v2");
  constexpr std::size_t kAllocations = 60'000;  // under the ledger's cap per process (65,536)
  double per_allocation = 0;
  for (auto _ : state) {
    auto analysis = std::make_unique<LiveAnalysis>();
    std::vector<CallEvent> batch;
    const std::size_t before = heap_in_use();
    for (std::size_t i = 0; i < kAllocations; ++i) {
      CallEvent e;
      e.ts_ns = 1'000'000'000 + i * 1000;
      e.dur_ns = 5000;
      e.pid = e.tid = 77;
      e.probe = alloc;
      e.has_exit = true;
      e.nargs = 2;
      e.args[arg(*alloc, "ptr")] = 0x7f0000000000ull + i * 0x1000;
      e.args[arg(*alloc, "size")] = 4096;
      batch.push_back(e);
      if (batch.size() >= 256) {
        analysis->on_calls(batch);
        batch.clear();
      }
    }
    analysis->on_calls(batch);
    per_allocation = static_cast<double>(heap_in_use() - before) / kAllocations;
    benchmark::DoNotOptimize(analysis);
  }
  state.counters["bytes_per_live_allocation"] = per_allocation;
}
BENCHMARK(BM_LiveAnalysisBytesPerLiveAllocation)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
