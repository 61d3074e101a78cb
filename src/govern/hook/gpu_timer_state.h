// What the launch side (gpu_timer.cpp) and the timing thread (gpu_time_thread.cpp) of GPU
// timing share. Internal to the hook.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "govern/hook/cuda_types.h"
#include "govern/hook/gpu_time_ring_writer.h"
#include "govern/hookcore/gpu_time_settings.h"
#include "govern/hookcore/launch_table.h"
#include "govern/hookcore/sample_rate.h"
#include "govern/hookcore/stream_hold.h"

namespace eacgm::govern::hook {

inline constexpr int kMaxContexts = 16;
inline constexpr int kPoolEvents = 512;   // free events kept per context
inline constexpr int kPoolStock = 128;    // free events the timing thread keeps ready per context, at first
inline constexpr int kMaxPending = 1024;  // timed launches not yet read back
inline constexpr int kGapRounds = 10;     // dispatch-gap measurements per context (one a second)
inline constexpr int kGapSpansPerRound = 5;
inline constexpr int kGapSpans = kGapRounds * kGapSpansPerRound;

// libcuda's own functions, found once (never our wrappers).
struct DriverCalls {
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;
  CUresult (*ctx_set_current)(CUcontext) = nullptr;
  CUresult (*event_create)(CUevent*, unsigned) = nullptr;
  CUresult (*event_record)(CUevent, CUstream) = nullptr;
  CUresult (*event_query)(CUevent) = nullptr;
  CUresult (*stream_query)(CUstream) = nullptr;  // optional: without it every chosen launch is timed
  CUresult (*event_synchronize)(CUevent) = nullptr;
  CUresult (*event_elapsed)(float*, CUevent, CUevent) = nullptr;
  CUresult (*stream_create)(CUstream*, unsigned) = nullptr;
  CUresult (*func_get_name)(const char**, CUfunction) = nullptr;  // CUDA 12.3+
  CUresult (*kernel_get_name)(const char**, CUkernel) = nullptr;  // CUDA 12.3+
  // Holds (stream_hold.h); without any of the three, launches are never held.
  CUresult (*stream_wait_value32)(CUstream, CUdeviceptr, cuuint32_t, unsigned) = nullptr;
  CUresult (*mem_host_register)(void*, size_t, unsigned) = nullptr;
  CUresult (*mem_host_get_device_pointer)(CUdeviceptr*, void*, unsigned) = nullptr;
};

struct Pending {
  CUcontext ctx = nullptr;
  CUevent start = nullptr;
  CUevent end = nullptr;
  std::uintptr_t key = 0;
  CUstream stream = nullptr;
  int device = -1;
  std::uint64_t launch_ns = 0;
  std::uint64_t host_launch_ns = 0;  // from the start event's record to the launch's return
  std::uint32_t tid = 0;
  gpu_time::LaunchShape shape{};
  bool shaped = false;
  bool graph = false;
  bool nccl = false;
  bool queued = false;  // the start event had not been reached when the launch was queued (or held)
  bool first = false;   // the function's first launch
  LaunchEntry* entry = nullptr;
};

struct ContextState {
  CUcontext ctx = nullptr;
  int device = -1;
  CUevent free_events[kPoolEvents] = {};
  int free_count = 0;
  // The free events the timing thread tops the pool up to (0: not stocked yet), so that
  // timed launches take events rather than make them; doubled, to kPoolEvents at most,
  // after a launch found the pool empty (`ran_dry`).
  int stock = 0;
  bool ran_dry = false;
  // The timing thread's clock anchor: an event of its own stream, and when it completed.
  CUstream own_stream = nullptr;
  CUevent anchor = nullptr;
  std::uint64_t anchor_ns = 0;
  std::uint64_t anchor_made_ns = 0;
  // What an event pair adds to a queued kernel here (dispatch_gap.h): the median of the
  // spans measured so far, less a one-block kernel's own time.
  std::uint64_t dispatch_gap_ns = 0;
  CUmodule gap_module = nullptr;
  CUfunction gap_spin = nullptr;
  CUfunction gap_store = nullptr;
  CUevent gap_start = nullptr;
  CUevent gap_end = nullptr;
  std::uint32_t gap_spans[kGapSpans] = {};
  int gap_span_count = 0;
  int gap_rounds = 0;       // measurements made (one per anchor refresh, kGapRounds at most)
  bool gap_failed = false;  // a step failed (no PTX JIT, the fake libcuda): no more rounds
  // The context's page of hold words (stream_hold.h), registered with it by the timing
  // thread, and its address on the device; null: launches here are not held.
  std::uint32_t* hold_page = nullptr;
  CUdeviceptr hold_device = 0;
  bool hold_tried = false;
};

struct TimerState {
  DriverCalls driver;
  GpuTimeRingWriter ring;
  LaunchTable table;
  SampleRate rate;                    // the 1 in N of functions not planned yet
  SamplePlanner planner;              // each function's 1 in N, every period
  std::uint64_t poll_ns = 5'000'000;  // the timing thread's round (EACGM_GPU_TIME_POLL_MS)
  std::atomic<std::uint32_t> every{SampleRateConfig{}.initial};
  std::mutex mu;  // pending, contexts, pools
  Pending pending[kMaxPending];
  int pending_count = 0;
  int in_flight = 0;  // taken by a launch, not yet pending
  ContextState contexts[kMaxContexts];
  int context_count = 0;
  // Held by the timing thread while it calls the driver; a capture beginning waits for it.
  std::mutex poll;
  std::atomic<int> captures{0};
  std::atomic<bool> thread_started{false};
  std::atomic<bool> stopping{false};
  std::atomic<std::uint64_t> named{0};  // functions named so far (the timing thread sends them)
  std::uint64_t names_sent = 0;         // the timing thread's: `named` when it last sent names
  std::atomic<std::uint64_t> timed{0};
  std::atomic<std::uint64_t> cost_ns{0};
  // Holds: on unless EACGM_GPU_TIME_HOLD=0, CUDA_LAUNCH_BLOCKING=1 or the driver lacks a
  // call; the watchdog thread started at the first, and asleep (1) while none was made
  // for a while.
  std::atomic<bool> hold_on{false};
  StreamHolds holds;
  std::atomic<bool> watchdog_started{false};
  std::atomic<std::uint32_t> watchdog_asleep{0};
  std::atomic<std::uint64_t> last_hold_ns{0};

  gpu_time::Header* header() { return ring.header(); }
};

extern TimerState* g_timer;

void give_back_events(TimerState& s, CUcontext ctx, CUevent start, CUevent end);
void start_timing_thread(TimerState& s);
void gpu_time_at_exit();

}  // namespace eacgm::govern::hook
