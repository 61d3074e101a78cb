// What the always-on mode delivers instead of calls: per (process, probe, handle) the
// calls and bytes counted at entry since the last delivery, and the durations of the
// sampled calls as log buckets (bpf/events.h eacgm_hist_key: the latency sketch's own).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/call_event.h"

namespace eacgm {

// For probes that are not cycled, while the duty cycle runs: the time from each call to
// the same thread's previous one, where both fell inside one open window (in) or one
// stretch with the cycled probes gone (out), summed, and how many such gaps. Their means
// are the process's pace inside and outside the windows (agent/pace.h), which no
// window's edge cuts, unlike calls counted per second.
struct PaceGaps {
  std::uint64_t in_ns = 0, in = 0, out_ns = 0, out = 0;
  PaceGaps& operator+=(const PaceGaps& o) {
    in_ns += o.in_ns;
    in += o.in;
    out_ns += o.out_ns;
    out += o.out;
    return *this;
  }
};

struct CallCount {
  std::uint32_t pid = 0;
  std::shared_ptr<const ProbeInfo> probe;
  std::uint64_t handle = 0;  // what the probe splits counts by (a launch's CUfunction), or 0
  std::uint64_t stream = 0;  // the call's stream, where it has one
  std::string kernel;        // launches: the kernel's name, "" when unknown
  std::uint64_t calls = 0;   // since the last delivery
  std::uint64_t bytes = 0;
  // Scaled from part of the interval (the budget's duty cycle, agent/scaled_counts.h):
  // `calls` and `bytes` are estimates, `variance` that of `calls` (calls squared).
  bool estimated = false;
  double variance = 0;
  // Of `calls`, those made while the duty window was open (agent/duty_cycle.h): for
  // probes that are not cycled, the pace of the process inside and outside the windows.
  std::uint64_t windowed = 0;
  // Of `calls`, those made while the cycled probes were being attached or detached:
  // neither inside a window nor outside (their traps still cost the process then).
  std::uint64_t switching = 0;
  PaceGaps gaps{};
};

struct CallTimings {
  std::uint32_t pid = 0;
  std::shared_ptr<const ProbeInfo> probe;
  std::uint32_t bucket = 0;  // eacgm_hist_key(duration)
  std::uint64_t count = 0;   // sampled calls in the bucket since the last delivery
  std::uint64_t sum_ns = 0;
  std::uint64_t errors = 0;  // of them, failed ones
  // Of them, those held off the CPU (waiting runnable) for at least half their duration:
  // their count, durations and waits summed. Zero where the kernel keeps no run delay.
  std::uint64_t held = 0;
  std::uint64_t held_sum_ns = 0;
  std::uint64_t held_delay_ns = 0;
};

}  // namespace eacgm
