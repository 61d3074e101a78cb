// What the agent's once-a-second read of the calls in flight costs (BENCHMARKS.md,
// "Calls in flight"): the kernel's `calls_in_flight` map read in one batch
// (BpfTracer::read_calls_in_flight), that read turned into InflightCalls (InflightDrain),
// and the analysis's update over them (InflightCalls), with N threads in a waiting call
// and M more threads that made one before (their entries idle, time 0); and the hang
// diagnosis over a scan (BM_Diagnose). The map is
// filled from user space with entries of a probe the table knows, half of the N older
// than the minimum age, their threads checked as live (the real check, on this thread).
// Needs root (it loads eacgm's BPF object). At 1 Hz, a scan of t µs is t / 10^4 % of a
// core.
#include <benchmark/benchmark.h>
#include <bpf/bpf.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "analysis/hang_diagnosis.h"
#include "analysis/inflight_calls.h"
#include "core/clock.h"
#include "ingest/inflight_drain.h"

namespace {

using namespace eacgm;

struct Loaded {
  std::unique_ptr<probe::BpfTracer> bpf;
  probe::ProbeTable table;
  std::uint32_t probe_id = 0;
};

Loaded* loaded() {
  static Loaded* l = [] {
    auto* out = new Loaded;
    auto bpf = probe::BpfTracer::open(probe::BpfOptions{});
    if (!bpf) {
      std::fprintf(stderr, "cannot load the BPF object: %s\n", bpf.error().c_str());
      return out;
    }
    out->bpf = std::move(*bpf);
    ProbeInfo info;
    info.function = "cuStreamSynchronize";
    info.spec.name = "cuStreamSynchronize";
    info.spec.domain = "cuda_driver";
    info.spec.args = {ArgSpec{"stream", ArgSource::kRegister, 0, ArgKind::kRaw, ArgFormat::kHex}};
    out->probe_id = out->table.add(std::move(info))->id;
    return out;
  }();
  return l;
}

// Leaves `n` calls in flight in the map (threads 1..n, half of them in for 10 s) and
// `idle` entries of threads in none.
bool fill(Loaded& l, std::uint32_t n, std::uint32_t idle) {
  const int fd = l.bpf->calls_in_flight_fd();
  for (std::uint32_t tid = 1; tid < EACGM_CALLS_IN_FLIGHT_MAX + 2; ++tid) bpf_map_delete_elem(fd, &tid);
  const std::uint64_t now = monotonic_ns();
  for (std::uint32_t i = 0; i < n + idle; ++i) {
    eacgm_call_in_flight e{};
    e.pid = static_cast<std::uint32_t>(getpid());
    e.tid = i + 1;
    e.probe_id = l.probe_id;
    e.ts_ns = i >= n ? 0 : i % 2 ? now - 10'000'000'000ull : now;
    e.nargs = 1;
    e.read_mask = 1;
    e.args[0] = 0x5000 + i;
    std::strncpy(e.comm, "bench", sizeof(e.comm));
    if (bpf_map_update_elem(fd, &e.tid, &e, BPF_ANY) != 0) return false;
  }
  return true;
}

void BM_ReadTable(benchmark::State& state) {
  Loaded& l = *loaded();
  if (!l.bpf ||
      !fill(l, static_cast<std::uint32_t>(state.range(0)), static_cast<std::uint32_t>(state.range(1)))) {
    state.SkipWithError("needs root: cannot load or fill the map");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(l.bpf->read_calls_in_flight());
}

// The scan as the reader thread makes it each tick, and the analysis's update.
void BM_Scan(benchmark::State& state) {
  Loaded& l = *loaded();
  if (!l.bpf ||
      !fill(l, static_cast<std::uint32_t>(state.range(0)), static_cast<std::uint32_t>(state.range(1)))) {
    state.SkipWithError("needs root: cannot load or fill the map");
    return;
  }
  ingest::BpfInflightSource source(*l.bpf);
  ingest::EnricherChain chain;
  ingest::InflightDrain drain(source, l.table, chain);
  analysis::InflightCalls inflight;
  // The threads are this process's: alive, as far as the check goes, at its real cost.
  const auto self = static_cast<std::uint32_t>(getpid());
  inflight.set_thread_alive(
      [self](std::uint32_t, std::uint32_t) { return analysis::thread_alive(self, self); });
  std::vector<InflightCall> calls;
  for (auto _ : state) {
    calls.clear();
    const std::uint64_t scanned = drain.drain(calls);
    inflight.update(calls, scanned);
    benchmark::DoNotOptimize(inflight.summary().rows.size());
  }
  state.counters["listed"] = static_cast<double>(inflight.summary().rows.size());
}

// The hang diagnosis each scan adds: `comms` communicators of 8 ranks here, each with 200
// matched all-reduces and one open instance that rank 7 never entered (the others wait
// in a synchronisation, listed in flight), all hung. No BPF.
void BM_Diagnose(benchmark::State& state) {
  auto probe = std::make_shared<ProbeInfo>();
  probe->function = "ncclAllReduce";
  probe->spec.name = "ncclAllReduce";
  probe->spec.domain = "nccl";
  auto sync = std::make_shared<ProbeInfo>();
  sync->function = "cudaStreamSynchronize";
  sync->spec.domain = "cuda";
  analysis::NcclSkew skew;
  const std::uint64_t t0 = 1'700'000'000'000'000'000;
  analysis::InflightSummary inflight;
  inflight.min_age_ns = 5'000'000'000;
  const auto comms = static_cast<std::uint32_t>(state.range(0));
  for (std::uint32_t c = 0; c < comms; ++c) {
    for (int k = 0; k <= 200; ++k) {
      for (int r = 0; r < 8; ++r) {
        if (k == 200 && r == 7) continue;
        CallEvent e;
        e.probe = probe;
        e.has_exit = true;
        e.pid = 1000 + c * 8 + static_cast<std::uint32_t>(r);
        e.tid = e.pid;
        e.ts_ns = t0 + static_cast<std::uint64_t>(k) * 10'000'000;
        e.nccl_comm_id = 0xc0 + c;
        e.nccl_rank = r;
        e.nccl_nranks = 8;
        skew.add(e);
        if (k == 200) {
          analysis::InflightRow row;
          row.call.call.probe = sync;
          row.call.call.pid = e.pid;
          row.call.call.tid = e.pid;
          row.call.call.ts_ns = e.ts_ns;
          row.age_ns = 60'000'000'000;
          inflight.rows.push_back(row);
        }
      }
    }
  }
  analysis::HangDiagnosis hangs;
  const auto alive = [](std::uint32_t) { return true; };
  for (auto _ : state) {
    hangs.update(skew.progress(), inflight, t0 + 2'100'000'000 + 60'000'000'000, alive);
    benchmark::DoNotOptimize(hangs.summary().current.size());
  }
  state.counters["hangs"] = static_cast<double>(hangs.summary().current.size());
}

// {in flight, idle}: none; a node's few waits among the threads that made one before;
// more and more threads waiting at once, up to a full table.
void scan_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"in_flight", "idle"});
  for (auto [n, idle] : {std::pair{0, 0}, {8, 0}, {8, 256}, {64, 0}, {512, 0}, {4096, 0}}) b->Args({n, idle});
  b->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK(BM_ReadTable)->Apply(scan_args);
BENCHMARK(BM_Scan)->Apply(scan_args);
BENCHMARK(BM_Diagnose)->ArgName("comms")->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
