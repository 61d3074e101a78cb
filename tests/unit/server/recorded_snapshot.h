// Test support: one analysis snapshot made the same in every run (fixed clocks, fixed
// inputs) from what a daemon sees of a small node: per-call and always-on calls of three
// processes (allocations and a leak, kernels, copies, synchronisations, an NCCL
// communicator of two ranks, an error, a slow outlier), two GPUs and the processes on
// them, host waits, the probes' cost, Python stacks and calls in flight; and the facts about those
// processes that /proc would give (rank, command line, container, liveness).
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../common/builtin_spec.h"
#include "analysis/live_analysis.h"
#include "core/agent_counters.h"
#include "sample/process_env.h"

namespace eacgm::test {

// Pids no machine is likely to run (the facts below are the test's own anyway).
inline constexpr std::uint32_t kRank0 = 4190001;
inline constexpr std::uint32_t kRank1 = 4190002;
inline constexpr std::uint32_t kExited = 4190003;
inline constexpr std::uint32_t kUntraced = 4190004;  // on a GPU, never traced

// What /proc would say of the recorded processes.
struct RecordedFacts {
  static sample::RankInfo rank_of(std::uint32_t pid) {
    sample::RankInfo r;
    if (pid == kRank0 || pid == kRank1) {
      r.rank = pid == kRank0 ? 0 : 1;
      r.local_rank = r.rank;
      r.world_size = 2;
    }
    return r;
  }
  static std::string cmdline_of(std::uint32_t pid) {
    if (pid == kRank0 || pid == kRank1) return "python3 train.py --epochs 3";
    return "";
  }
  static bool alive(std::uint32_t pid) { return pid != kExited; }
  static std::optional<std::string> container_of(std::uint32_t pid) {
    if (pid == kRank1) return std::string(64, 'c');
    return std::nullopt;
  }
};

namespace recorded {

inline std::shared_ptr<const ProbeInfo> probe(const std::string& name, std::uint32_t id,
                                              bool counted = false) {
  auto p = std::make_shared<ProbeInfo>();
  p->id = id;
  p->function = name;
  p->symbol = name;
  p->library = "/usr/lib/x86_64-linux-gnu/libcuda.so.1";
  p->spec = builtin_spec(name);
  p->counted = counted;
  p->cycled = counted;
  return p;
}

inline void set_arg(CallEvent& e, const char* name, std::uint64_t value, std::uint32_t ext = 0) {
  const int i = arg_index(e.probe->spec, name);
  if (i < 0) {
    ADD_FAILURE() << e.probe->function << " has no argument " << name;
    return;
  }
  e.args[static_cast<std::size_t>(i)] = value;
  e.ext[static_cast<std::size_t>(i)] = ext;
  e.nargs = static_cast<std::uint8_t>(e.probe->spec.args.size());
}

inline CallEvent call(const std::shared_ptr<const ProbeInfo>& p, std::uint32_t pid, std::uint64_t ts_ns,
                      std::uint64_t dur_ns, const char* comm = "python3") {
  CallEvent e;
  e.ts_ns = ts_ns;
  e.dur_ns = dur_ns;
  e.pid = pid;
  e.tid = pid;
  std::snprintf(e.comm.data(), e.comm.size(), "%s", comm);
  e.probe = p;
  e.has_exit = p->spec.with_exit;
  e.nargs = static_cast<std::uint8_t>(p->spec.args.size());
  return e;
}

inline CounterValues counters(std::uint64_t events) {
  CounterValues v;
  const std::pair<const char*, std::uint64_t> values[] = {
      {"events", events}, {"drops", 3}, {"probes", 42}, {"libraries", 4}, {"counted_calls", 1200}};
  for (const auto& [key, value] : values) {
    v.values.push_back({std::make_shared<const CounterDef>(agent_counter(key)), value});
  }
  return v;
}

inline GpuSnapshot gpus(std::chrono::system_clock::time_point t, std::uint64_t sequence) {
  GpuSnapshot g;
  g.sequence = sequence;
  g.time = t;
  g.system.driver_version = "580.95.05";
  g.system.cuda_driver_version = 13000;
  for (unsigned i = 0; i < 2; ++i) {
    DeviceSample d;
    d.index = i;
    d.name = "NVIDIA H100 80GB HBM3";
    d.uuid = "GPU-0000000" + std::to_string(i) + "-aaaa-bbbb-cccc-dddddddddddd";
    d.pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0";
    d.utilization_gpu_percent = 40 + 10 * i + static_cast<unsigned>(sequence);
    d.utilization_memory_percent = 20 + i;
    d.memory_total_bytes = 85520809984ull;
    d.memory_used_bytes = (8ull + i) << 30;
    d.memory_free_bytes = *d.memory_total_bytes - *d.memory_used_bytes;
    d.temperature_gpu_celsius = 41 + i;
    d.power_usage_milliwatts = 250000 + 1000 * i;
    d.power_limit_milliwatts = 700000;
    d.energy_total_millijoules = 123456789ull + sequence;
    d.clock_sm_mhz = 1980;
    d.clock_memory_mhz = 2619;
    d.pcie_tx_bytes_per_second = 1000000;
    d.pcie_rx_bytes_per_second = 2000000;
    d.ecc_corrected_volatile_total = 0;
    d.ecc_uncorrected_volatile_total = 0;
    d.xid_errors_total = i;
    if (i == 1) d.last_xid = 79;
    // GPU 0 has GPM (its activities in the exposition and JSON); GPU 1 has none.
    d.gpm_supported = i == 0;
    if (i == 0) {
      GpmCounters c;
      c.interval_seconds = 1.0;
      c.sm_active = 0.75;
      c.tensor_active = 0.5;
      c.dram_active = 0.125;
      c.pcie_tx_bytes_per_second = 1048576;
      d.gpm = c;
    }
    g.devices.push_back(d);
  }
  const std::pair<std::uint32_t, unsigned> on_gpu[] = {{kRank0, 0}, {kRank1, 1}, {kUntraced, 1}};
  for (const auto& [pid, gpu] : on_gpu) {
    ProcessSample p;
    p.pid = pid;
    p.gpu_index = gpu;
    p.gpu_uuid = g.devices[gpu].uuid;
    p.name = pid == kUntraced ? "other_app" : "python3";
    p.compute = true;
    p.used_memory_bytes = (pid == kUntraced ? 1ull : 6ull) << 30;
    p.sm_utilization_percent = pid == kUntraced ? 5 : 45;
    p.memory_utilization_percent = 12;
    g.processes.push_back(p);
  }
  return g;
}

}  // namespace recorded

// The snapshot: the final one of a LiveAnalysis fed the calls above over three ticks.
inline std::shared_ptr<const analysis::AnalysisSnapshot> recorded_snapshot() {
  using namespace std::chrono;
  using namespace recorded;
  const system_clock::time_point wall0{seconds(1'790'000'000)};
  const steady_clock::time_point steady0{seconds(10'000'000)};
  auto wall = std::make_shared<system_clock::time_point>(wall0);
  auto steady = std::make_shared<steady_clock::time_point>(steady0);

  analysis::LiveAnalysis live;
  live.set_clocks({[wall] { return *wall; }, [steady] { return *steady; }});
  live.set_process_alive(RecordedFacts::alive);
  live.set_thread_alive([](std::uint32_t pid, std::uint32_t) { return RecordedFacts::alive(pid); });
  live.set_process_start([steady0](std::uint32_t) { return steady0 - seconds(30); });
  analysis::AnalysisSettings settings;
  settings.python_hz = 99;
  settings.python_limits = analysis::python_profile_limits(300, 100000, 20000, true);  // [python]'s defaults
  live.configure(settings);

  const auto ns = [&](std::uint64_t after_ns) {
    return static_cast<std::uint64_t>(duration_cast<nanoseconds>(wall->time_since_epoch()).count()) +
           after_ns;
  };
  auto malloc_p = probe("cudaMalloc", 1);
  auto free_p = probe("cudaFree", 2);
  auto launch_p = probe("cudaLaunchKernel", 3);
  auto memcpy_p = probe("cudaMemcpy", 4);
  auto sync_p = probe("cudaStreamSynchronize", 5);
  auto allreduce_p = probe("ncclAllReduce", 6);
  auto driver_launch_p = probe("cuLaunchKernel", 7, true);
  auto ctx_sync_p = probe("cuCtxSynchronize", 8, true);

  for (int tick = 0; tick < 3; ++tick) {
    std::vector<CallEvent> batch;
    for (std::uint32_t pid : {kRank0, kRank1}) {
      const std::uint64_t base = static_cast<std::uint64_t>(pid - kRank0) * 1000;
      // Allocations: two a tick, one freed, so each process leaks one a tick.
      for (std::uint64_t k = 0; k < 2; ++k) {
        auto e = call(malloc_p, pid, ns(base + k * 10), 20'000 + 1000 * k);
        const std::uint64_t ptr = 0x7f0000000000ull + (pid - kRank0) * 0x100000000ull +
                                  static_cast<std::uint64_t>(tick) * 0x1000000ull + k * 0x100000ull;
        set_arg(e, "ptr", ptr);
        set_arg(e, "size", (1ull << 20) << k);
        batch.push_back(e);
        if (k == 1) {
          auto f = call(free_p, pid, ns(base + 500), 15'000);
          set_arg(f, "ptr", ptr);
          batch.push_back(f);
        }
      }
      // Kernels of two names and shapes; durations from 3 to 9 µs.
      for (std::uint64_t k = 0; k < 300; ++k) {
        auto e = call(launch_p, pid, ns(base + 1000 + k * 100), 3000 + (k * 37) % 6000);
        set_arg(e, "func", 0x55550000 + (k % 2) * 0x40);
        set_arg(e, "grid", (k % 2 ? 128ull : 64ull) | (2ull << 32), 1);
        set_arg(e, "block", 256ull | (1ull << 32), 1);
        set_arg(e, "shared_mem", k % 2 ? 0 : 4096);
        set_arg(e, "stream", 0x5000 + (pid - kRank0));
        e.kernel = k % 2 ? "void gemm_kernel<float>(float*, int)" : "elementwise_add";
        if (tick == 2 && k == 299 && pid == kRank0) e.dur_ns = 4'000'000;  // the outlier
        batch.push_back(e);
      }
      auto copy = call(memcpy_p, pid, ns(base + 40'000), 80'000);
      set_arg(copy, "count", 64ull << 20);
      set_arg(copy, "kind", 1);  // cudaMemcpyHostToDevice
      batch.push_back(copy);
      auto failed = call(memcpy_p, pid, ns(base + 41'000), 2'000);
      set_arg(failed, "count", 8);
      set_arg(failed, "kind", 2);
      failed.ret = 1;  // cudaErrorInvalidValue
      batch.push_back(failed);
      auto sync = call(sync_p, pid, ns(base + 50'000), 2'500'000);
      set_arg(sync, "stream", 0x5000 + (pid - kRank0));
      batch.push_back(sync);
      // One collective a tick on a communicator of two ranks; rank 1 arrives late.
      const std::int32_t rank = pid == kRank0 ? 0 : 1;
      auto ar = call(allreduce_p, pid, ns(60'000 + static_cast<std::uint64_t>(rank) * 400'000), 900'000);
      set_arg(ar, "count", 1ull << 20);
      set_arg(ar, "datatype", 7);  // ncclFloat32
      set_arg(ar, "op", 0);
      set_arg(ar, "comm", 0xc0ffee);
      ar.nccl_comm_id = 0xabcdef12345678ull;
      ar.nccl_rank = rank;
      ar.nccl_nranks = 2;
      batch.push_back(ar);
    }
    live.on_calls(batch);

    // The exited process is traced always-on: counts and sampled durations only.
    std::vector<CallCount> counts;
    CallCount c;
    c.pid = kExited;
    c.probe = driver_launch_p;
    c.handle = 0x9000;
    c.stream = 0x7000;
    c.kernel = "triton_poi_fused_0";
    c.calls = 5000;
    c.estimated = tick > 0;
    c.variance = tick > 0 ? 2500.0 : 0.0;
    counts.push_back(c);
    c.probe = ctx_sync_p;
    c.handle = 0;
    c.stream = 0;
    c.kernel.clear();
    c.calls = 10;
    c.estimated = false;
    c.variance = 0;
    counts.push_back(c);
    std::vector<CallTimings> timings;
    timings.push_back({kExited, driver_launch_p, 40, 300, 300 * 2100, 0});
    timings.push_back({kExited, ctx_sync_p, 70, 10, 10 * 1'800'000, 1});
    live.on_counts(counts, timings);

    live.on_gpu(gpus(*wall, static_cast<std::uint64_t>(tick)));

    std::vector<HostWaitProcess> waiting{
        {kRank0, "python3",
         static_cast<std::uint64_t>(
             duration_cast<nanoseconds>((steady0 - seconds(30)).time_since_epoch()).count()),
         0}};
    std::vector<HostWaitTimings> waits{{kRank0, HostWaitKind::kFutex, 60, 25, 25 * 900'000},
                                       {kRank0, HostWaitKind::kInputWait, 50, 4, 4 * 40'000}};
    live.on_host_waits(tick == 0 ? waiting : std::vector<HostWaitProcess>{}, waits);

    OverheadReport report;
    report.costs = {450, 900, 3000, 1400, true, true};
    report.budget = 0.01;
    report.processes.push_back({kExited, tick == 2, 5010, 310, 0, 5010 * 450.0, 1.2e9, 3.0e6 * (tick + 1),
                                3.6e9 * (tick + 1), 0.0021,
                                tick > 0 ? std::optional<double>(0.004) : std::nullopt});
    report.duty_fraction = tick > 0 ? 0.5 : 1.0;
    report.attached_share = tick > 0 ? 0.8 : 1.0;
    report.max_sample_shift = 5;
    live.on_overhead(report);

    // Python stacks: a training step in two functions, one inside a synchronisation.
    auto step = std::make_shared<PythonCode>(PythonCode{"train_step", "/srv/train.py", 40, false});
    auto loss = std::make_shared<PythonCode>(PythonCode{"Model.forward", "/srv/model.py", 12, false});
    auto wait = std::make_shared<PythonCode>(PythonCode{"[cuda] cudaStreamSynchronize", "", 0, true});
    std::vector<PythonStack> stacks;
    for (int k = 0; k < 20; ++k) {
      PythonStack s;
      s.ts_ns = static_cast<std::uint64_t>(duration_cast<nanoseconds>(steady->time_since_epoch()).count()) +
                static_cast<std::uint64_t>(k) * 10'000'000;
      s.pid = k % 3 ? kRank0 : kRank1;
      s.tid = s.pid;
      s.comm = "python3";
      if (k % 4 == 0) s.frames.push_back({wait, 0});
      if (k % 2) s.frames.push_back({loss, 14 + k % 3});
      s.frames.push_back({step, 44});
      stacks.push_back(s);
    }
    live.on_python_stacks(stacks);

    // Rank 0 carries the hook with GPU time: a kernel launched 64 times a tick, 4 timed
    // (3 queued behind earlier work, 40 us each; 1 on an idle stream).
    GpuTimeBatch gpu_time;
    if (tick == 0)
      gpu_time.names.push_back({.pid = kRank0, .function = 0x7f00aa00, .name = "_Z9gemm_tilePf"});
    const std::uint64_t base = 1'000'000'000ull * static_cast<std::uint64_t>(tick + 1);
    for (std::uint64_t k = 0; k < 4; ++k) {
      GpuSpan span;
      span.pid = span.tid = kRank0;
      span.device = 0;
      span.function = 0x7f00aa00;
      span.stream = 0x5000;
      span.launch_ns = base + k * 1'000'000;
      span.start_ns = span.launch_ns + 20'000;
      span.duration_ns = k == 0 ? 52'000 : 40'000;
      span.queued = k != 0;
      span.shaped = true;
      span.shape = {{132, 1, 1}, {256, 1, 1}, 49152, 0};
      gpu_time.spans.push_back(span);
    }
    gpu_time.counts.push_back(
        {.pid = kRank0, .function = 0x7f00aa00, .launches = 64 * static_cast<std::uint64_t>(tick + 1)});
    gpu_time.rings.push_back({.pid = kRank0,
                              .comm = "python3",
                              .launches = 64 * static_cast<std::uint64_t>(tick + 1),
                              .sampled = 4 * static_cast<std::uint64_t>(tick + 1),
                              .timing_cost_ns = 9'000,
                              .sample_every = 16,
                              .dispatch_gap_ns = 2'600});
    live.on_gpu_time(gpu_time);

    // Calls in flight: rank 1 stuck in a collective, rank 0 in a synchronisation on it,
    // and a young synchronisation (below [hangs] min_age_s, not listed).
    const auto mono = [&](seconds ago) {
      return static_cast<std::uint64_t>(
          duration_cast<nanoseconds>((*steady - ago).time_since_epoch()).count());
    };
    const auto in_flight = [&](const std::shared_ptr<const ProbeInfo>& p, std::uint32_t pid,
                               std::uint32_t tid, seconds age) {
      InflightCall c;
      c.call = call(p, pid, ns(0) - static_cast<std::uint64_t>(duration_cast<nanoseconds>(age).count()), 0);
      c.call.tid = tid;
      c.call.has_exit = false;
      c.entry_mono_ns = mono(age);
      return c;
    };
    std::vector<InflightCall> in_flight_calls;
    auto stuck = in_flight(allreduce_p, kRank1, kRank1 + 7, seconds(92 + tick));
    set_arg(stuck.call, "count", 1ull << 20);
    set_arg(stuck.call, "datatype", 7);
    set_arg(stuck.call, "op", 0);
    set_arg(stuck.call, "comm", 0xc0ffee);
    set_arg(stuck.call, "stream", 0x5001);
    stuck.call.nccl_comm_id = 0xabcdef12345678ull;
    stuck.call.nccl_rank = 1;
    stuck.call.nccl_nranks = 2;
    in_flight_calls.push_back(stuck);
    auto synchronising = in_flight(sync_p, kRank0, kRank0, seconds(10 + tick));
    set_arg(synchronising.call, "stream", 0x5000);
    // Its thread's Python stack, as read from its memory: the call, then the frames.
    auto read_stack = std::make_shared<PythonStack>();
    read_stack->pid = kRank0;
    read_stack->tid = kRank0;
    read_stack->frames = {{wait, 0}, {step, 45}};
    synchronising.python_stack = read_stack;
    in_flight_calls.push_back(synchronising);
    in_flight_calls.push_back(in_flight(sync_p, kRank0, kRank0 + 1, seconds(2)));
    live.on_inflight(in_flight_calls, mono(seconds(0)));

    *wall += seconds(1);
    *steady += seconds(1);
    live.on_tick(*steady, counters(1000 * static_cast<std::uint64_t>(tick + 1)));
  }
  live.on_end(counters(3100));
  return live.snapshot();
}

}  // namespace eacgm::test
