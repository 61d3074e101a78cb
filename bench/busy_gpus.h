// The rows of a busy node's 8 H100s in one interval, for the history benchmarks: each
// GPU at 87.5% mean utilization, 64 of 80 GiB used at most, 550 W mean.
#pragma once

#include <cstdint>
#include <string>

#include "history/history_batch.h"

namespace eacgm::history::bench {

inline void add_busy_gpus(IntervalBatch& b) {
  for (std::uint32_t g = 0; g < 8; ++g) {
    GpuRecord r;
    r.index = g;
    r.uuid = "GPU-" + std::to_string(g) + "-0000-1111-2222-333344445555";
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
