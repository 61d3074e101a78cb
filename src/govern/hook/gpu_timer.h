// GPU time through the hook: for each function's first launch, 1 launch in N per function
// after it (N planned per function from a cost budget, hookcore/sample_rate.h) and every
// NCCL kernel, a pair of CUDA events recorded around
// the launch on its own stream; a timing thread of the hook reads them back once the GPU
// passed them and hands (function, stream, device, start, duration) to the agent through
// the shared-memory ring (gpu_time_ring_writer.h), with every function's exact launch
// count and name.
//
// Never changes what the program computes or waits for: no event is recorded while any
// stream capture is underway (a capture in global mode forbids other threads' event
// calls) or on a stream being captured; the application's streams are never synchronized
// (the timing thread waits only on its own anchor events, on a stream of its own); the
// ring never blocks; every failure turns timing off for that launch, never the launch.
//
// On with EACGM_GPU_TIME=1 (what `eacgm run --gpu-time` sets), off with 0; unset, on when
// the hook governs the process (a memory limit or a scheduler is configured).
#pragma once

#include <atomic>
#include <cstdint>

#include "core/gpu_time_ring.h"
#include "govern/hook/cuda_types.h"

namespace eacgm::govern::hook {

extern std::atomic<bool> g_gpu_time_active;

// What gpu_time_before learned for gpu_time_after.
struct TimedLaunch {
  void* entry = nullptr;  // the launch table's entry, when timed
  CUevent start = nullptr;
  CUevent end = nullptr;
  CUstream stream = nullptr;  // as recorded (the per-thread stream made explicit)
  CUcontext context = nullptr;
  int device = -1;  // the context's
  std::uint64_t launch_ns = 0;
  std::uint64_t began_ns = 0;     // for the cost
  std::uint64_t recorded_ns = 0;  // the start event was recorded
  std::uintptr_t key = 0;
  gpu_time::LaunchShape shape{};  // set by the launch's wrapper once it is timed
  bool graph = false;
  bool shaped = false;
  bool first = false;  // the function's first launch (kept apart: it runs cold)
  int hold_slot = -1;  // the launch's hold of an idle stream (stream_holds.h), or -1
};

// Reads EACGM_GPU_TIME (from the runtime's creation).
void init_gpu_time_from_env(bool governed);
void gpu_time_after_fork_child();

// Around a launch (the wrappers' pre and post): counts it and, when it is to be timed,
// records the start event before it and the end event after it.
void gpu_time_before_slow(TimedLaunch& t, std::uintptr_t key, CUstream stream, bool per_thread, bool graph);
void gpu_time_after_slow(TimedLaunch& t, CUresult launched);
inline void gpu_time_before(TimedLaunch& t, std::uintptr_t key, CUstream stream, bool per_thread,
                            bool graph) {
  if (__builtin_expect(g_gpu_time_active.load(std::memory_order_relaxed), 0))
    gpu_time_before_slow(t, key, stream, per_thread, graph);
}
inline void gpu_time_after(TimedLaunch& t, CUresult launched) {
  if (__builtin_expect(t.start != nullptr, 0)) gpu_time_after_slow(t, launched);
}

// Stream captures: none is timed while one is underway, and the timing thread waits.
void gpu_time_capture_begin();
void gpu_time_capture_end(bool capture_ended);
// A context going away: its events and anchors are dropped first.
void gpu_time_context_gone();

}  // namespace eacgm::govern::hook
