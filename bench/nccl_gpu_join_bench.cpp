// What joining NCCL kernels the hook timed to their calls costs the analysis stage
// (NcclStats::add plus add_gpu, analysis/nccl_gpu_join.h): per (call, kernel) pair, with
// the kernel arriving before its call as it does in the agent, over 8 NCCL threads; and
// the heap the join holds at its bounds (1,024 threads, each with 64 calls and 512
// kernels waiting).
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "analysis/nccl_stats.h"
#include "core/probe_spec.h"
#include "probe/catalog.h"

namespace {

using eacgm::CallEvent;
using eacgm::GpuSpan;
using eacgm::ProbeInfo;
using eacgm::analysis::NcclStats;

std::shared_ptr<const ProbeInfo> all_reduce() {
  for (const auto& c : eacgm::probe::builtin_catalogs()) {
    for (const auto& s : c.specs) {
      if (s.name != "ncclAllReduce") continue;
      auto p = std::make_shared<ProbeInfo>();
      p->id = 1;
      p->function = p->symbol = s.name;
      p->spec = s;
      return p;
    }
  }
  std::abort();
}

CallEvent call(const std::shared_ptr<const ProbeInfo>& p, std::uint32_t tid, std::uint64_t ts) {
  CallEvent e;
  e.ts_ns = ts;
  e.dur_ns = 20'000;
  e.pid = 100;
  e.tid = tid;
  e.probe = p;
  e.has_exit = true;
  e.nargs = static_cast<std::uint8_t>(p->spec.args.size());
  e.args[static_cast<std::size_t>(eacgm::arg_index(p->spec, "count"))] = 1u << 20;
  e.args[static_cast<std::size_t>(eacgm::arg_index(p->spec, "datatype"))] = 7;
  e.nccl_comm_id = 0xc0;
  e.nccl_rank = 0;
  e.nccl_nranks = 8;
  return e;
}

GpuSpan kernel(std::uint32_t tid, std::uint64_t launch) {
  GpuSpan s;
  s.pid = 100;
  s.tid = tid;
  s.launch_ns = launch;
  s.duration_ns = 50'000;
  s.nccl = true;
  s.queued = true;
  return s;
}

void BM_NcclJoinPerCallAndKernel(benchmark::State& state) {
  const auto p = all_reduce();
  NcclStats stats;
  std::uint64_t ts = 1'000'000'000;
  std::uint32_t tid = 0;
  for (auto _ : state) {
    tid = (tid + 1) % 8;
    ts += 30'000;
    stats.add_gpu(kernel(tid, ts + 10'000), ts + 10'000);  // before its call, as in the agent
    stats.add(call(p, tid, ts));
  }
  stats.settle(UINT64_MAX);
  benchmark::DoNotOptimize(stats.rows());
  state.counters["unjoined"] = static_cast<double>(stats.gpu_unjoined());
}
BENCHMARK(BM_NcclJoinPerCallAndKernel);

void BM_NcclJoinHeapAtItsBounds(benchmark::State& state) {
  const auto p = all_reduce();
  double mib = 0;
  for (auto _ : state) {
    const std::size_t before = mallinfo2().uordblks;
    auto stats = std::make_unique<NcclStats>();
    for (std::uint32_t tid = 1; tid <= 1024; ++tid) {
      std::uint64_t ts = 1'000'000'000;
      for (int k = 0; k < 64; ++k) stats->add(call(p, tid, ts += 30'000));
      // Kernels launched after the last call: they wait (no later call, no settle).
      for (int k = 0; k < 512; ++k) stats->add_gpu(kernel(tid, ts + 1 + k), ts + 1 + k);
    }
    mib = static_cast<double>(mallinfo2().uordblks - before) / (1 << 20);
    benchmark::DoNotOptimize(stats);
  }
  state.counters["heap_MiB"] = mib;
}
BENCHMARK(BM_NcclJoinHeapAtItsBounds)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
