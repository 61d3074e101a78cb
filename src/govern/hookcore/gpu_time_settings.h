// GPU time's tuning from the environment: EACGM_GPU_TIME_BUDGET, the share of the
// program's time timing may cost, in percent (default 0.2), and EACGM_GPU_TIME_POLL_MS,
// how often the timing thread reads back the event pairs the GPU has passed (default 5),
// and EACGM_GPU_TIME_HOLD, whether a launch timed on an idle stream holds the stream until
// the kernel is queued (stream_hold.h; default on, off with 0; always off under
// CUDA_LAUNCH_BLOCKING=1, where every launch waits for its kernel).
// A bad value keeps the default, with a line in `warnings` (the program is never stopped
// over one).
#pragma once

#include <cstdint>
#include <string>

#include "govern/hookcore/memory_limits.h"
#include "govern/hookcore/sample_rate.h"

namespace eacgm::govern {

inline constexpr std::uint32_t kDefaultPollMs = 5;
inline constexpr std::uint32_t kMaxPollMs = 1000;
inline constexpr double kMaxBudgetPercent = 50;

struct GpuTimeSettings {
  SampleRateConfig rate;
  std::uint64_t poll_ns = std::uint64_t{kDefaultPollMs} * 1'000'000;
  bool hold = true;
};

GpuTimeSettings read_gpu_time_settings(EnvLookup lookup, void* context, std::string* warnings);

}  // namespace eacgm::govern
