// A busy node's rows for the history benchmarks: the shapes its intervals are made of
// (latency sketches, function and kernel names) and its 8 H100s in one interval, each
// at 87.5% mean utilization, 64 of 80 GiB used at most, 550 W mean.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "history/history_batch.h"

namespace eacgm::history::bench {

struct Shapes {
  std::vector<StoredSketch> sketches;
  std::vector<std::string> functions, kernels;
};

// `count` lognormal latency sketches around 2 to 32 us, the i-th of `calls + i * more`
// calls (the same for every run: a fixed seed).
inline std::vector<StoredSketch> lognormal_sketches(int count, int calls, int more) {
  std::vector<StoredSketch> out;
  std::mt19937_64 rng(42);
  for (int i = 0; i < count; ++i) {
    analysis::LatencySketch sk;
    std::lognormal_distribution<double> d(std::log(2000.0 * (1 + i % 16)), 0.4);
    for (int c = 0; c < calls + i * more; ++c) sk.add(static_cast<std::uint64_t>(d(rng)));
    out.push_back(stored(sk));
  }
  return out;
}

inline std::string bench_gpu_uuid(std::uint32_t g) {
  return "GPU-" + std::to_string(g) + "-0000-1111-2222-333344445555";
}

// `uuid`: each GPU's uuid from its index.
inline void add_busy_gpus(IntervalBatch& b, std::string (*uuid)(std::uint32_t) = bench_gpu_uuid) {
  for (std::uint32_t g = 0; g < 8; ++g) {
    GpuRecord r;
    r.index = g;
    r.uuid = uuid(g);
    r.name = "NVIDIA H100 80GB HBM3";
    r.samples = 10;
    r.util_mean = 87.5;
    r.util_max = 100;
    r.memory_used_mean = 6.0e10;
    r.memory_used_max = 64ULL << 30;
    r.memory_total = 80ULL << 30;
    r.power_mean_w = 550;
    r.power_max_w = 690;
    r.temperature_max = 71;
    b.gpus.push_back(r);
  }
}

}  // namespace eacgm::history::bench
