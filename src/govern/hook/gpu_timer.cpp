// The launch side of GPU timing (gpu_timer.h): counting, choosing, recording the events;
// the timing thread that reads them back is in gpu_time_thread.cpp.
#include "govern/hook/gpu_timer.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "govern/hook/call_tally.h"
#include "govern/hook/gpu_timer_state.h"
#include "govern/hook/monotonic_clock.h"
#include "govern/hook/private_driver.h"
#include "govern/hook/real_functions.h"
#include "govern/hook/stream_holds.h"
#include "govern/hook/thread_id.h"
#include "govern/hook/wait_times.h"

namespace eacgm::govern::hook {

std::atomic<bool> g_gpu_time_active{false};
TimerState* g_timer = nullptr;

namespace {

// The launching thread names a function the first time it sees it (once per function).
void name_entry(LaunchEntry& e, std::uintptr_t key, bool graph) {
  std::uint8_t expected = 0;
  if (!e.naming.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) return;
  e.graph.store(graph, std::memory_order_relaxed);
  const char* name = nullptr;
  const DriverCalls& d = g_timer->driver;
  if (!graph) {
    // Runtimes of CUDA 12+ launch context-independent kernels (a CUkernel in place of the
    // CUfunction), which only cuKernelGetName names.
    // NOLINTBEGIN(performance-no-int-to-ptr)
    if (d.func_get_name == nullptr ||
        d.func_get_name(&name, reinterpret_cast<CUfunction>(key)) != CUDA_SUCCESS)
      name = nullptr;
    if (name == nullptr && d.kernel_get_name != nullptr &&
        d.kernel_get_name(&name, reinterpret_cast<CUkernel>(key)) != CUDA_SUCCESS)
      name = nullptr;
    // NOLINTEND(performance-no-int-to-ptr)
  }
  if (name != nullptr) {
    std::size_t n = std::strlen(name);
    if (n > gpu_time::kMaxNameBytes) n = gpu_time::kMaxNameBytes;
    auto* copy = static_cast<char*>(std::malloc(n + 1));
    if (copy != nullptr) {
      std::memcpy(copy, name, n);
      copy[n] = '\0';
      e.nccl.store(is_nccl_kernel_name(copy), std::memory_order_relaxed);
      e.name.store(copy, std::memory_order_release);
    }
  }
  e.naming.store(2, std::memory_order_release);
  g_timer->named.fetch_add(1, std::memory_order_release);
}

ContextState* context_state(TimerState& s, CUcontext ctx) {
  for (int i = 0; i < s.context_count; ++i) {
    if (s.contexts[i].ctx == ctx) return &s.contexts[i];
  }
  if (s.context_count == kMaxContexts) return nullptr;
  ContextState& c = s.contexts[s.context_count++];
  c = ContextState{};
  c.ctx = ctx;
  int device = -1;
  if (real_current_device(&device) == CUDA_SUCCESS) c.device = device;
  return &c;
}

// Two events of `ctx` (the current context) from the pool that the timing thread keeps
// stocked (gpu_time_thread.cpp), and its device. An empty pool, and the stock grows at the
// timing thread's next round. Before the timing thread first stocked the context (its first
// timed launches), and for a launch that is timed every time (`must`: a function's first,
// an NCCL kernel), the events are made here; a sampled launch is left untimed rather than
// pay cuEventCreate (microseconds each) on the program's thread.
// Also the context's page of hold words and its device address (null when its launches
// are not held).
struct HoldPage {
  std::uint32_t* page = nullptr;
  CUdeviceptr device = 0;
};
bool take_events(TimerState& s, CUcontext ctx, bool must, CUevent* start, CUevent* end, int* device,
                 HoldPage* hold) {
  std::lock_guard<std::mutex> lock(s.mu);
  ContextState* c = context_state(s, ctx);
  if (c == nullptr || s.pending_count + s.in_flight >= kMaxPending) return false;
  if (c->free_count < 2) {
    c->ran_dry = true;
    if (c->stock > 0 && !must) return false;
  }
  CUevent got[2] = {nullptr, nullptr};
  for (CUevent& e : got) {
    if (c->free_count > 0) {
      e = c->free_events[--c->free_count];
    } else if (s.driver.event_create(&e, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
      if (got[0] != nullptr && c->free_count < kPoolEvents) c->free_events[c->free_count++] = got[0];
      s.header()->errors.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  }
  ++s.in_flight;
  *start = got[0];
  *end = got[1];
  *device = c->device;
  *hold = HoldPage{c->hold_page, c->hold_device};
  return true;
}

bool env_flag(const char* name, bool* value) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return false;
  *value = !(std::strcmp(v, "0") == 0 || std::strcmp(v, "false") == 0 || std::strcmp(v, "off") == 0);
  return true;
}

}  // namespace

void give_back_events(TimerState& s, CUcontext ctx, CUevent start, CUevent end) {
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.in_flight > 0) --s.in_flight;
  ContextState* c = context_state(s, ctx);
  if (c == nullptr) return;
  for (CUevent e : {start, end}) {
    if (c->free_count < kPoolEvents) c->free_events[c->free_count++] = e;
  }
}

void init_gpu_time_from_env(bool governed) {
  bool on = governed;
  env_flag("EACGM_GPU_TIME", &on);
  if (!on) return;
  alignas(TimerState) static unsigned char storage[sizeof(TimerState)];
  auto* s = new (storage) TimerState();
  std::string warnings;
  const GpuTimeSettings settings = read_gpu_time_settings(
      [](const char* name, void*) -> const char* { return std::getenv(name); }, nullptr, &warnings);
  if (!warnings.empty()) std::fputs(warnings.c_str(), stderr);
  s->rate = SampleRate(settings.rate);
  s->planner = SamplePlanner(settings.rate);
  s->poll_ns = settings.poll_ns;
  DriverCalls& d = s->driver;
  d.ctx_get_current = real_driver<decltype(d.ctx_get_current)>("cuCtxGetCurrent");
  d.ctx_set_current = real_driver<decltype(d.ctx_set_current)>("cuCtxSetCurrent");
  d.event_create = real_driver<decltype(d.event_create)>("cuEventCreate");
  d.event_record = real_driver<decltype(d.event_record)>("cuEventRecord");
  d.event_query = real_driver<decltype(d.event_query)>("cuEventQuery");
  d.stream_query = real_driver<decltype(d.stream_query)>("cuStreamQuery");
  d.event_synchronize = real_driver<decltype(d.event_synchronize)>("cuEventSynchronize");
  d.event_elapsed = real_driver<decltype(d.event_elapsed)>("cuEventElapsedTime_v2");
  if (d.event_elapsed == nullptr)
    d.event_elapsed = real_driver<decltype(d.event_elapsed)>("cuEventElapsedTime");
  d.stream_create = real_driver<decltype(d.stream_create)>("cuStreamCreate");
  d.func_get_name = real_driver<decltype(d.func_get_name)>("cuFuncGetName");
  d.kernel_get_name = real_driver<decltype(d.kernel_get_name)>("cuKernelGetName");
  d.stream_wait_value32 = real_driver<decltype(d.stream_wait_value32)>("cuStreamWaitValue32_v2");
  d.mem_host_register = real_driver<decltype(d.mem_host_register)>("cuMemHostRegister_v2");
  d.mem_host_get_device_pointer =
      real_driver<decltype(d.mem_host_get_device_pointer)>("cuMemHostGetDevicePointer_v2");
  s->hold_on.store(settings.hold && d.stream_query != nullptr && d.stream_wait_value32 != nullptr &&
                       d.mem_host_register != nullptr && d.mem_host_get_device_pointer != nullptr,
                   std::memory_order_relaxed);
  if (d.ctx_get_current == nullptr || d.ctx_set_current == nullptr || d.event_create == nullptr ||
      d.event_record == nullptr || d.event_query == nullptr || d.event_synchronize == nullptr ||
      d.event_elapsed == nullptr || d.stream_create == nullptr) {
    std::fputs("eacgm hook: GPU time is off: this libcuda lacks the event functions it needs\n", stderr);
    return;
  }
  if (!s->ring.open()) {
    std::fputs("eacgm hook: GPU time is off: cannot create its ring in /dev/shm\n", stderr);
    return;
  }
  s->header()->sample_every.store(s->rate.every(), std::memory_order_relaxed);
  g_timer = s;
  // No uprobe reaches a private driver's calls: the hook counts them, and times its host
  // waits, for the agent.
  if (private_driver_loaded()) {
    start_wait_times();
    g_tally_calls.store(true, std::memory_order_relaxed);
  }
  std::atexit(gpu_time_at_exit);
  g_gpu_time_active.store(true, std::memory_order_release);
}

void gpu_time_after_fork_child() {
  // The child cannot use its parent's CUDA contexts, events or ring, and has no timing
  // thread: it runs without GPU time.
  g_gpu_time_active.store(false, std::memory_order_relaxed);
  stop_call_tallies();
  if (g_timer != nullptr) g_timer->ring.forget();
}

void gpu_time_before_slow(TimedLaunch& t, std::uintptr_t key, CUstream stream, bool per_thread, bool graph) {
  TimerState& s = *g_timer;
  LaunchEntry* e = s.table.find_or_insert(key);
  if (e == nullptr) {
    s.table.count_untracked();
    return;
  }
  const std::uint64_t n = e->launches.fetch_add(1, std::memory_order_relaxed);
  if (e->naming.load(std::memory_order_acquire) == 0) name_entry(*e, key, graph);
  if (s.header()->paused.load(std::memory_order_relaxed) != 0) return;
  const bool nccl = e->nccl.load(std::memory_order_relaxed);
  // The plan's cap keeps a function launching far more often than planned for from
  // overrunning the budget before the next plan.
  const LaunchTiming how = choose_launch(n, key, nccl, e->every.load(std::memory_order_relaxed),
                                         s.every.load(std::memory_order_relaxed), e->left, e->in_place);
  if (how == LaunchTiming::kUntimed) return;
  if (s.captures.load(std::memory_order_acquire) > 0) {
    s.header()->skipped_capturing.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const std::uint64_t began = now_ns();
  // The stream as the driver reads it: a per-thread variant's 0 is the per-thread stream.
  CUstream record_on = (per_thread && stream == nullptr) ? CU_STREAM_PER_THREAD : stream;
  if (real_stream_capturing(record_on)) {
    s.header()->skipped_capturing.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // A launch onto an idle stream gives an upper bound, not a sample (its span holds the
  // launch's own latency). So a launch found to be onto an idle stream (cuStreamQuery,
  // about a microsecond, counted in timing's cost) is held (stream_holds.h): the stream
  // waits until the kernel is queued behind the start event, and the span is a sample.
  // A function's first launch (it may load its module, which can wait for the GPU), an
  // NCCL kernel's (the next collective often waits for its peers) and a graph's are never
  // held. Where a launch cannot be held, once the function has a span that found work
  // queued (queued_count), such a launch is left untimed (its quota given back) and the
  // budget goes to launches that find work queued; a function only ever launched onto an
  // idle stream keeps its upper bounds: they are its figures. The function's next launches
  // may be timed in its place, the first that finds work queued (choose_launch), so that
  // its plan still gives samples.
  const bool queued_before = e->queued_count.load(std::memory_order_relaxed) != 0;
  const bool may_hold = n != 0 && !nccl && !graph && s.hold_on.load(std::memory_order_relaxed);
  const bool idle = n != 0 && !nccl && s.driver.stream_query != nullptr && (queued_before || may_hold) &&
                    s.driver.stream_query(record_on) == CUDA_SUCCESS;
  const auto leave_untimed = [&] {
    e->left.fetch_add(1, std::memory_order_relaxed);
    if (how == LaunchTiming::kChosen) e->in_place.store(kIdleRetries, std::memory_order_relaxed);
    s.cost_ns.fetch_add(counted_host_cost(now_ns() - began, 0), std::memory_order_relaxed);
  };
  if (idle && queued_before && !may_hold) {
    leave_untimed();
    return;
  }
  CUcontext ctx = nullptr;
  if (s.driver.ctx_get_current(&ctx) != CUDA_SUCCESS || ctx == nullptr) return;
  CUevent start = nullptr, end = nullptr;
  int device = -1;
  HoldPage hold;
  if (!take_events(s, ctx, n == 0 || nccl, &start, &end, &device, &hold)) return;
  int hold_slot = -1;
  if (idle && may_hold && hold.page != nullptr)
    hold_slot = begin_hold(s, record_on, hold.page, hold.device, began);
  if (idle && hold_slot < 0 && queued_before) {
    give_back_events(s, ctx, start, end);
    leave_untimed();
    return;
  }
  if (how == LaunchTiming::kInPlace) e->in_place.store(0, std::memory_order_relaxed);
  if (s.driver.event_record(start, record_on) != CUDA_SUCCESS) {
    if (hold_slot >= 0) end_hold(s, hold_slot);
    s.header()->errors.fetch_add(1, std::memory_order_relaxed);
    give_back_events(s, ctx, start, end);
    return;
  }
  t.recorded_ns = now_ns();
  t.entry = e;
  t.start = start;
  t.end = end;
  t.stream = record_on;
  t.context = ctx;
  t.device = device;
  t.launch_ns = began;
  t.began_ns = began;
  t.key = key;
  t.graph = graph;
  t.first = n == 0;
  t.hold_slot = hold_slot;
}

void gpu_time_after_slow(TimedLaunch& t, CUresult launched) {
  TimerState& s = *g_timer;
  // The kernel is queued (or the launch failed): the held stream goes on at once.
  const bool held = t.hold_slot >= 0 && end_hold(s, t.hold_slot);
  const std::uint64_t returned = now_ns();
  if (launched != CUDA_SUCCESS || s.driver.event_record(t.end, t.stream) != CUDA_SUCCESS) {
    if (launched == CUDA_SUCCESS) s.header()->errors.fetch_add(1, std::memory_order_relaxed);
    give_back_events(s, t.context, t.start, t.end);
    return;
  }
  if (held) s.header()->held.fetch_add(1, std::memory_order_relaxed);
  Pending p;
  p.ctx = t.context;
  p.start = t.start;
  p.end = t.end;
  p.key = t.key;
  p.stream = t.stream;
  p.device = t.device;
  p.launch_ns = t.launch_ns;
  p.host_launch_ns = returned > t.recorded_ns ? returned - t.recorded_ns : 0;
  p.tid = thread_id();
  p.shape = t.shape;
  p.shaped = t.shaped;
  p.graph = t.graph;
  p.entry = static_cast<LaunchEntry*>(t.entry);
  p.nccl = p.entry->nccl.load(std::memory_order_relaxed);
  p.first = t.first;
  // Still waiting now that the kernel is queued behind it: the GPU will run the two back to
  // back. Already passed: the stream was idle, and the span will include the launch's latency.
  // A held launch was queued behind its start event before the stream went on (unless the
  // watchdog released it first: then the span may hold the launch's latency).
  p.queued = held || (t.hold_slot < 0 && s.driver.event_query(t.start) == CUDA_ERROR_NOT_READY);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.in_flight > 0) --s.in_flight;
    s.pending[s.pending_count++] = p;  // room was reserved by take_events
  }
  s.timed.fetch_add(1, std::memory_order_relaxed);
  // Timing's own time: before the launch and after it, not the launch itself, which costs
  // the program the same timed or not, and whose first call of a kernel can take
  // milliseconds (lazy module loading): counted, it made a short run's plan think each
  // timed launch cost that much and time nearly none after its warm-up. Each part is
  // capped (counted_host_cost): past a few microseconds it is the thread waiting for a CPU.
  s.cost_ns.fetch_add(counted_host_cost(t.recorded_ns - t.began_ns, now_ns() - returned),
                      std::memory_order_relaxed);
  start_timing_thread(s);
}

void gpu_time_capture_begin() {
  if (g_timer == nullptr) return;
  std::lock_guard<std::mutex> lock(g_timer->poll);  // the timing thread is out of the driver
  g_timer->captures.fetch_add(1, std::memory_order_acq_rel);
}

void gpu_time_capture_end(bool capture_ended) {
  if (g_timer == nullptr || !capture_ended) return;
  int c = g_timer->captures.load(std::memory_order_acquire);
  while (c > 0 && !g_timer->captures.compare_exchange_weak(c, c - 1, std::memory_order_acq_rel)) {
  }
}

void gpu_time_context_gone() {
  // Off: after exit began (gpu_time_at_exit holds `poll` for good, and the timing thread is
  // done with the driver) or in a fork's child (its copy of `poll` may be held by a timing
  // thread that the child does not have): nothing to forget, and waiting would hang.
  if (g_timer == nullptr || !g_gpu_time_active.load(std::memory_order_acquire)) return;
  TimerState& s = *g_timer;
  std::lock_guard<std::mutex> poll(s.poll);
  std::lock_guard<std::mutex> lock(s.mu);
  // The driver frees the context's events and streams with it: forget them.
  s.header()->dropped.fetch_add(static_cast<std::uint64_t>(s.pending_count), std::memory_order_relaxed);
  s.pending_count = 0;
  s.context_count = 0;
}

}  // namespace eacgm::govern::hook
