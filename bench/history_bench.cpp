// The history store's size and cost on a busy 8-GPU node, simulated with the real
// writer code (SqliteStore) and a compressed clock: 16 training processes with 40
// active functions each, 2 jobs of 200 kernels, 8 GPUs, 200 short processes a day, one
// interval every 10 s. Writes `--hours` of intervals, then maintenance rolls them up;
// prints the bytes each tier costs per node-day, the full-retention size they add up to
// under the defaults, and the writer's CPU time per interval.
//   build/bench/eacgm_bench_history [--hours 24] [--db /tmp/eacgm-bench-history.db]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "busy_node.h"
#include "history/sqlite_store.h"

namespace {

using namespace eacgm::history;
constexpr std::int64_t kS = 1'000'000'000;

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

StoredSketch sketch_of(std::mt19937_64& rng, std::uint64_t calls, double median_ns) {
  eacgm::analysis::LatencySketch s;
  std::lognormal_distribution<double> d(std::log(median_ns), 0.4);
  for (std::uint64_t i = 0; i < calls; ++i) s.add(static_cast<std::uint64_t>(d(rng)));
  return coarsened(stored(s), kStoredBits);  // as the interval builder keeps them
}

}  // namespace

int main(int argc, char** argv) {
  double hours = 24;
  std::string db = "/tmp/eacgm-bench-history.db";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--hours") hours = std::atof(argv[i + 1]);
    if (a == "--db") db = argv[i + 1];
  }
  std::filesystem::remove(db);
  std::filesystem::remove(db + "-wal");
  std::filesystem::remove(db + "-shm");
  auto store = SqliteStore::open(db);
  if (!store) {
    std::fprintf(stderr, "%s\n", store.error().c_str());
    return 1;
  }
  std::mt19937_64 rng(42);
  const std::int64_t t0 = 1'793'491'200 * kS;  // an hour boundary
  const auto intervals = static_cast<std::int64_t>(hours * 360);
  // Precomputed sketches (a few shapes reused): generating them is not the store's cost.
  std::vector<StoredSketch> shapes;
  for (int i = 0; i < 64; ++i) shapes.push_back(sketch_of(rng, 50 + i * 10, 2000.0 * (1 + i % 16)));
  std::vector<std::string> functions, kernels;
  for (int f = 0; f < 40; ++f) functions.push_back("cudaFunction" + std::to_string(f));
  for (int k = 0; k < 400; ++k) {
    kernels.push_back(
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::"
        "BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > > >(int, "
        "T3)::{lambda(int)#" +
        std::to_string(k) + "}>");
  }
  double write_cpu = 0;
  std::uint64_t rows = 0;
  const double short_every = 86400.0 / 200 / 10;  // intervals between short processes
  for (std::int64_t i = 0; i < intervals; ++i) {
    IntervalBatch b;
    b.t_ns = t0 + i * 10 * kS;
    b.span_ns = 10 * kS;
    b.mode = "always-on";
    for (std::uint32_t p = 0; p < 16; ++p) {
      ProcessKey key{1000 + p, t0 - kS};
      if (i % 60 == 0) {
        ProcessRecord r;
        r.key = key;
        r.comm = "python3";
        r.cmdline = "python3 train.py --rank " + std::to_string(p % 8);
        r.rank = p % 8;
        r.world_size = 8;
        r.first_ns = t0;
        r.last_ns = b.t_ns + b.span_ns;
        b.processes.push_back(r);
      }
      for (std::size_t f = 0; f < functions.size(); ++f) {
        FunctionRecord fr;
        fr.process = key;
        fr.domain = f < 30 ? "cuda" : "nccl";
        fr.function = functions[f];
        fr.latency = shapes[(f + p + static_cast<std::size_t>(i)) % shapes.size()];
        fr.calls = fr.latency.count;
        fr.timed = fr.latency.count;
        fr.bytes = f % 3 == 0 ? fr.calls * 65536 : 0;
        b.functions.push_back(std::move(fr));
      }
      GpuProcessRecord g;
      g.gpu = p % 8;
      g.process = key;
      g.samples = 10;
      g.memory_max = 40ULL << 30;
      g.sm_mean = 80;
      b.gpu_processes.push_back(g);
    }
    // A short process now and then, 10 functions over 30 intervals (5 minutes).
    const auto short_id = static_cast<std::int64_t>(static_cast<double>(i) / short_every);
    if (i - static_cast<std::int64_t>(static_cast<double>(short_id) * short_every) < 30) {
      ProcessKey key{static_cast<std::uint32_t>(50000 + short_id), t0 + short_id};
      ProcessRecord r;
      r.key = key;
      r.comm = "eval.py";
      r.first_ns = b.t_ns;
      r.last_ns = b.t_ns + b.span_ns;
      b.processes.push_back(r);
      for (int f = 0; f < 10; ++f) {
        FunctionRecord fr;
        fr.process = key;
        fr.domain = "cuda";
        fr.function = functions[static_cast<std::size_t>(f)];
        fr.latency = shapes[static_cast<std::size_t>(f)];
        fr.calls = fr.timed = fr.latency.count;
        b.functions.push_back(std::move(fr));
      }
    }
    for (const auto& k : kernels) b.kernels.push_back({k, 1000});
    bench::add_busy_gpus(b);
    rows +=
        b.functions.size() + b.kernels.size() + b.gpus.size() + b.gpu_processes.size() + b.processes.size();
    const double c0 = cpu_seconds();
    if (auto st = (*store)->write("gpu-node-017", b); !st) {
      std::fprintf(stderr, "write: %s\n", st.error().c_str());
      return 1;
    }
    write_cpu += cpu_seconds() - c0;
  }
  const auto raw_size = (*store)->size_bytes();
  const std::int64_t end = t0 + intervals * 10 * kS;
  Retention keep_all;
  keep_all.raw_ns = keep_all.minute_ns = keep_all.hour_ns = 1000LL * 24 * 3600 * kS;
  keep_all.max_bytes = 0;
  const double m0 = cpu_seconds();
  if (auto st = (*store)->maintain("gpu-node-017", end, keep_all); !st) {
    std::fprintf(stderr, "maintain: %s\n", st.error().c_str());
    return 1;
  }
  const double maintain_cpu = cpu_seconds() - m0;
  const auto rolled_size = (*store)->size_bytes();
  // Without the raw tier: what the minute and hour rollups weigh. Then without minutes.
  Retention no_raw = keep_all;
  no_raw.raw_ns = 0;
  (void)(*store)->maintain("gpu-node-017", end + kS, no_raw);
  const auto rollups_size = (*store)->size_bytes();
  Retention hours_only = no_raw;
  hours_only.minute_ns = 0;
  (void)(*store)->maintain("gpu-node-017", end + 2 * kS, hours_only);
  const auto hour_size = (*store)->size_bytes();
  if (!raw_size || !rolled_size || !rollups_size || !hour_size) return 1;
  const double day = 24.0 / hours;
  const double raw_day = static_cast<double>(*raw_size) * day;
  const double hour_day = static_cast<double>(*hour_size) * day;
  const double minute_day = (static_cast<double>(*rollups_size) - static_cast<double>(*hour_size)) * day;
  const double full = raw_day * 1 + minute_day * 7 + hour_day * 90;
  std::printf("simulated %.1f h: %lld intervals, %llu rows, %.2f rows/interval\n", hours,
              static_cast<long long>(intervals), static_cast<unsigned long long>(rows),
              static_cast<double>(rows) / static_cast<double>(intervals));
  std::printf("| tier | bytes per node-day | kept (default) | full tier |\n|---|---|---|---|\n");
  std::printf("| raw (10 s) | %.1f MiB | 1 day | %.1f MiB |\n", raw_day / 1048576, raw_day / 1048576);
  std::printf("| 1 minute | %.1f MiB | 7 days | %.1f MiB |\n", minute_day / 1048576,
              minute_day * 7 / 1048576);
  std::printf("| 1 hour | %.2f MiB | 90 days | %.1f MiB |\n", hour_day / 1048576, hour_day * 90 / 1048576);
  std::printf("| all tiers full | | | %.1f MiB |\n", full / 1048576);
  std::printf(
      "writer: %.2f ms CPU per interval (%.3f%% of a core at one interval per 10 s); "
      "maintenance of %.1f h: %.2f s CPU (%.3f%% of a core spread over the hours)\n",
      write_cpu * 1000 / static_cast<double>(intervals),
      write_cpu / static_cast<double>(intervals) / 10 * 100, hours, maintain_cpu,
      maintain_cpu / (hours * 3600) * 100);
  std::filesystem::remove(db);
  return 0;
}
