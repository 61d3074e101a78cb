// The hook's timing thread (gpu_timer.h): every few milliseconds (EACGM_GPU_TIME_POLL_MS,
// 5) it reads back the event pairs the GPU has passed, places them on the host's clock
// through an anchor event of its own, and writes them to the ring, and tops up each
// context's pool of free events (so that a timed launch never waits for cuEventCreate on
// the launching thread but the first of a context); every 100 ms it writes
// the functions' names and exact launch counts; after 100 ms of timing and every quarter
// second after (paused time left out) it plans each function's sampling rate from its
// budget (hookcore/sample_rate.h SamplePlanner).
#include <time.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <span>

#include "govern/hook/call_tally.h"
#include "govern/hook/dispatch_gap.h"
#include "govern/hook/gpu_timer.h"
#include "govern/hook/gpu_timer_state.h"
#include "govern/hook/hook_thread.h"
#include "govern/hook/memory_calls.h"
#include "govern/hook/monotonic_clock.h"
#include "govern/hook/stream_holds.h"
#include "govern/hook/wait_times.h"

namespace eacgm::govern::hook {
namespace {

constexpr std::uint64_t kCountsEveryNs = 100'000'000;
constexpr std::uint64_t kAnchorEveryNs = 1'000'000'000;

std::uint64_t ms_to_ns(float ms) {
  return ms <= 0 ? 0 : static_cast<std::uint64_t>(static_cast<double>(ms) * 1e6);
}

// A fresh anchor for the current context: an event on the thread's own stream (nothing
// else runs on it), waited for; its GPU time is between the two host readings around it.
bool refresh_anchor(TimerState& s, ContextState& c, std::uint64_t now) {
  if (c.anchor != nullptr && now - c.anchor_made_ns < kAnchorEveryNs) return true;
  const DriverCalls& d = s.driver;
  if (c.own_stream == nullptr && d.stream_create(&c.own_stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
    c.own_stream = nullptr;
    return false;
  }
  if (c.anchor == nullptr && d.event_create(&c.anchor, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    c.anchor = nullptr;
    return false;
  }
  const std::uint64_t before = now_ns();
  if (d.event_record(c.anchor, c.own_stream) != CUDA_SUCCESS || d.event_synchronize(c.anchor) != CUDA_SUCCESS)
    return false;
  const std::uint64_t after = now_ns();
  c.anchor_ns = before + (after - before) / 2;
  c.anchor_made_ns = after;
  if (!c.gap_failed && c.gap_rounds < kGapRounds) {
    ++c.gap_rounds;
    c.gap_failed = !measure_dispatch_gap_round(d, c);
    c.dispatch_gap_ns = dispatch_gap_of(c);  // after a failure: what earlier rounds measured, if any
    s.header()->dispatch_gap_ns.store(c.dispatch_gap_ns, std::memory_order_relaxed);
  }
  return true;
}

// The names not sent yet, so that a span never reaches the agent before its kernel's name.
void write_names(TimerState& s) {
  const std::uint64_t named = s.named.load(std::memory_order_acquire);
  if (named == s.names_sent) return;
  bool all = true;
  s.table.for_each([&](LaunchEntry& e) {
    if (e.name_sent || e.naming.load(std::memory_order_acquire) != 2) return;
    const char* name = e.name.load(std::memory_order_acquire);
    if (name == nullptr) {
      e.name_sent = true;
      return;
    }
    gpu_time::Record r{};
    r.kind = static_cast<std::uint32_t>(gpu_time::RecordKind::kName);
    r.device = -1;
    r.function = e.key.load(std::memory_order_relaxed);
    r.length = static_cast<std::uint32_t>(std::strlen(name));
    r.duration_ns = e.nccl.load(std::memory_order_relaxed) ? 1 : 0;
    e.name_sent = s.ring.write(r, name);
    all = all && e.name_sent;
  });
  if (all) s.names_sent = named;
}

// What the plan weighs a kernel by: its steady mean and the launch shapes it was timed with;
// and its samples as the agent counts them.
void note_for_plan(LaunchEntry& e, std::uint64_t duration_ns, bool queued,
                   const gpu_time::LaunchShape* shape) {
  e.timed_sum_ns += static_cast<double>(duration_ns);
  ++e.timed_count;
  if (queued) e.queued_count.fetch_add(1, std::memory_order_relaxed);
  if (shape == nullptr || e.shapes_seen == std::size(e.shape_hashes)) return;
  std::uint32_t hash = 2166136261u;  // FNV-1a
  for (const unsigned char b : std::span(reinterpret_cast<const unsigned char*>(shape), sizeof *shape))
    hash = (hash ^ b) * 16777619u;
  for (std::uint8_t i = 0; i < e.shapes_seen; ++i) {
    if (e.shape_hashes[i] == hash) return;
  }
  e.shape_hashes[e.shapes_seen++] = hash;
}

// The pending pairs the GPU has passed, written out; the others kept for the next round.
void read_back(TimerState& s) {
  static Pending batch[kMaxPending];
  int n = 0;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    n = s.pending_count;
    std::memcpy(static_cast<void*>(batch), static_cast<const void*>(s.pending), sizeof(Pending) * n);
    s.pending_count = 0;
  }
  if (n == 0) return;
  write_names(s);
  const DriverCalls& d = s.driver;
  CUcontext current = nullptr;
  int kept = 0;
  const std::uint64_t now = now_ns();
  for (int i = 0; i < n; ++i) {
    Pending& p = batch[i];
    if (p.ctx != current) {
      if (d.ctx_set_current(p.ctx) != CUDA_SUCCESS) {
        s.header()->errors.fetch_add(1, std::memory_order_relaxed);
        continue;  // a context gone: its events went with it
      }
      current = p.ctx;
    }
    const CUresult q = d.event_query(p.end);
    if (q == CUDA_ERROR_NOT_READY) {
      batch[kept++] = p;
      continue;
    }
    float duration_ms = 0;
    float offset_ms = 0;
    ContextState* c = nullptr;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      for (int k = 0; k < s.context_count; ++k) {
        if (s.contexts[k].ctx == p.ctx) c = &s.contexts[k];
      }
    }
    const bool ok = q == CUDA_SUCCESS && c != nullptr && refresh_anchor(s, *c, now) &&
                    d.event_elapsed(&duration_ms, p.start, p.end) == CUDA_SUCCESS &&
                    d.event_elapsed(&offset_ms, c->anchor, p.start) == CUDA_SUCCESS;
    if (!ok) {
      s.header()->errors.fetch_add(1, std::memory_order_relaxed);
    } else {
      gpu_time::Record r{};
      r.kind =
          static_cast<std::uint32_t>(p.graph ? gpu_time::RecordKind::kGraph : gpu_time::RecordKind::kKernel);
      r.device = p.device;
      r.function = p.key;
      r.stream = reinterpret_cast<std::uintptr_t>(p.stream);
      r.launch_ns = p.launch_ns;
      const double start = static_cast<double>(c->anchor_ns) + static_cast<double>(offset_ms) * 1e6;
      r.start_ns = start > 0 ? static_cast<std::uint64_t>(start) : 0;
      r.duration_ns = ms_to_ns(duration_ms);
      // A queued span is the kernel's time plus the event pair's dispatch gap. A span that
      // started on an idle stream also holds the launch itself: the GPU passed the start
      // event while the host was still in the driver's launch call.
      const std::uint64_t extra = p.queued ? c->dispatch_gap_ns : p.host_launch_ns;
      r.duration_ns = r.duration_ns > extra ? r.duration_ns - extra : 0;
      r.host_launch_ns = p.host_launch_ns;
      r.tid = p.tid;
      r.length = (p.nccl ? gpu_time::kSpanNccl : 0) | (p.queued ? gpu_time::kSpanQueued : 0) |
                 (p.shaped ? gpu_time::kSpanShaped : 0) | (p.first ? gpu_time::kSpanFirst : 0);
      if (!p.first && p.entry != nullptr)
        note_for_plan(*p.entry, r.duration_ns, p.queued, p.shaped ? &p.shape : nullptr);
      if (p.shaped) {
        s.ring.write(r, p.shape);
      } else {
        s.ring.write(r);
      }
      s.header()->sampled.fetch_add(1, std::memory_order_relaxed);
    }
    give_back_events(s, p.ctx, p.start, p.end);
  }
  if (kept > 0) {
    std::lock_guard<std::mutex> lock(s.mu);
    // Launches may have added pairs meanwhile: the kept ones go first, in their order.
    const int added = s.pending_count;
    std::memmove(static_cast<void*>(s.pending + kept), static_cast<const void*>(s.pending),
                 sizeof(Pending) * added);
    std::memcpy(static_cast<void*>(s.pending), static_cast<const void*>(batch), sizeof(Pending) * kept);
    s.pending_count = kept + added;
  }
}

// Each known context's pool of free events topped up to its stock, made here with the
// context current (cuEventCreate takes the driver microseconds, which a timed launch would
// otherwise pay on the program's thread). A context is known from its first timed launch;
// its stock starts at kPoolStock and doubles (to kPoolEvents) after a launch found the pool
// empty. Events go into the pool 16 at a time, so that launches meanwhile find the first;
// the stock is set once some are in: until then a launch that finds the pool empty makes
// its own (take_events). The pool is never filled past the room that
// the events out (pending or in flight) will find when they come back: give_back_events
// keeps kPoolEvents at most. A new event's first record costs the driver microseconds more
// than its later ones: each is recorded once here, on this thread's own stream (nothing
// else runs there: it completes at once); and registers a new context's page of hold words.
// Contexts are forgotten (gpu_time_context_gone) only under `poll`, which this thread
// holds: `c` stays the same context throughout.
void stock_event_pools(TimerState& s) {
  const DriverCalls& d = s.driver;
  for (int i = 0;; ++i) {
    ContextState* c = nullptr;
    int stock = 0;
    int want = 0;
    bool hold_page = false;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      if (i >= s.context_count) return;
      c = &s.contexts[i];
      hold_page = !c->hold_tried && s.hold_on.load(std::memory_order_relaxed);
      c->hold_tried = true;
      stock = c->stock == 0 ? kPoolStock : c->ran_dry ? std::min(kPoolEvents, 2 * c->stock) : c->stock;
      c->ran_dry = false;
      want = std::min(stock, kPoolEvents - 2 * (s.pending_count + s.in_flight)) - c->free_count;
      if (want <= 0) c->stock = stock;
    }
    if (want <= 0 && !hold_page) continue;
    if (d.ctx_set_current(c->ctx) != CUDA_SUCCESS) {
      s.header()->errors.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if (hold_page) register_hold_page(s, *c, i);
    if (c->own_stream == nullptr && d.stream_create(&c->own_stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
      c->own_stream = nullptr;
    for (int made_count = 0; made_count < want;) {
      CUevent made[16];
      const int chunk = std::min(want - made_count, static_cast<int>(std::size(made)));
      int n = 0;
      while (n < chunk && d.event_create(&made[n], CU_EVENT_DEFAULT) == CUDA_SUCCESS) {
        if (c->own_stream != nullptr) d.event_record(made[n], c->own_stream);
        ++n;
      }
      {
        std::lock_guard<std::mutex> lock(s.mu);
        for (int k = 0; k < n && c->free_count < kPoolEvents; ++k) c->free_events[c->free_count++] = made[k];
        if (n > 0) c->stock = stock;
      }
      if (n < chunk) {
        s.header()->errors.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      made_count += n;
    }
  }
}

// Names once, and the launch counts that changed (and, on the private driver, the calls).
void write_counts(TimerState& s) {
  write_names(s);
  std::uint64_t total = 0;
  s.table.for_each([&](LaunchEntry& e) {
    const auto key = e.key.load(std::memory_order_relaxed);
    const std::uint64_t launches = e.launches.load(std::memory_order_relaxed);
    total += launches;
    if (launches != e.launches_sent) {
      gpu_time::Record r{};
      r.kind = static_cast<std::uint32_t>(gpu_time::RecordKind::kCount);
      r.device = -1;
      r.function = key;
      r.duration_ns = launches;
      r.length = e.graph.load(std::memory_order_relaxed) ? 1 : 0;
      if (s.ring.write(r)) e.launches_sent = launches;
    }
  });
  if (g_tally_calls.load(std::memory_order_relaxed)) {
    write_call_tallies(s.ring);
    write_wait_times(s.ring);
    write_memory_calls(s.ring);
  }
  s.header()->launches.store(total + s.table.untracked(), std::memory_order_relaxed);
  s.header()->timing_cost_ns.store(s.cost_ns.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

// Each function's 1 in N and cap for the next period, from its launches in the last one.
void plan_functions(TimerState& s) {
  static LaunchEntry* entries[kLaunchTableSize];
  static FunctionDemand demand[kLaunchTableSize];
  static FunctionPlan plans[kLaunchTableSize];
  static std::uint32_t scratch[kLaunchTableSize];
  std::size_t n = 0;
  s.table.for_each([&](LaunchEntry& e) {
    const std::uint64_t launches = e.launches.load(std::memory_order_relaxed);
    entries[n] = &e;
    demand[n] = FunctionDemand{launches - e.launches_planned,
                               e.timed_count > 0 ? e.timed_sum_ns / static_cast<double>(e.timed_count) : 0,
                               e.nccl.load(std::memory_order_relaxed),
                               std::max<std::uint32_t>(1, e.shapes_seen),
                               figure_samples(e.timed_count, e.queued_count.load(std::memory_order_relaxed)),
                               e.timed_count};
    plans[n] = FunctionPlan{e.every.load(std::memory_order_relaxed), 0};
    e.launches_planned = launches;
    ++n;
  });
  s.planner.plan(demand, plans, scratch, n);
  for (std::size_t i = 0; i < n; ++i) {
    entries[i]->every.store(plans[i].every, std::memory_order_relaxed);
    entries[i]->left.store(plans[i].quota, std::memory_order_relaxed);
  }
}

void* timing_thread(void*) {
  TimerState& s = *g_timer;
  std::uint64_t last_round = now_ns();
  std::uint64_t last_counts = last_round;
  // The rate is planned over time in which timing was on (not paused): a budget is a share
  // of that time, and a process paused most of each second is not timed at 1 in N / 4.
  std::uint64_t on_ns = 0;
  std::uint64_t on_at_plan = 0;
  std::uint64_t timed_before = 0;
  std::uint64_t cost_before = 0;
  {
    // The first timed launch made its context known: its pool is stocked at once, before the
    // launches after it (every kernel's first launch is timed) find it empty.
    std::lock_guard<std::mutex> poll(s.poll);
    if (!s.stopping.load(std::memory_order_acquire) && s.captures.load(std::memory_order_acquire) == 0)
      stock_event_pools(s);
  }
  for (;;) {
    timespec nap{static_cast<time_t>(s.poll_ns / 1'000'000'000),
                 static_cast<long>(s.poll_ns % 1'000'000'000)};
    nanosleep(&nap, nullptr);
    {
      std::lock_guard<std::mutex> poll(s.poll);
      if (s.stopping.load(std::memory_order_acquire)) break;
      if (s.captures.load(std::memory_order_acquire) == 0) {
        read_back(s);  // first: the pairs read back return to the pools
        stock_event_pools(s);
      }
      // Memory calls every round: their queue is short.
      if (g_tally_calls.load(std::memory_order_relaxed)) write_memory_calls(s.ring);
      // The ring has one writer at a time: this thread, under `poll` (and at exit).
      const std::uint64_t now = now_ns();
      if (now - last_counts >= kCountsEveryNs) {
        write_counts(s);
        last_counts = now;
      }
    }
    const std::uint64_t now = now_ns();
    if (s.header()->paused.load(std::memory_order_relaxed) == 0) on_ns += now - last_round;
    last_round = now;
    if (on_ns - on_at_plan >= (on_at_plan == 0 ? kFirstPlanNs : kPlanEveryNs)) {
      const std::uint64_t timed = s.timed.load(std::memory_order_relaxed) - timed_before;
      const std::uint64_t cost = s.cost_ns.load(std::memory_order_relaxed) - cost_before;
      const std::uint32_t every = s.rate.adapt(on_ns - on_at_plan, timed, cost);
      s.every.store(every, std::memory_order_relaxed);
      s.header()->sample_every.store(every, std::memory_order_relaxed);
      s.planner.settle(on_ns - on_at_plan, timed,
                       static_cast<double>(cost + timed * s.planner.config().gpu_cost_ns));
      plan_functions(s);
      timed_before += timed;
      cost_before += cost;
      on_at_plan = on_ns;
    }
  }
  return nullptr;
}

}  // namespace

void start_timing_thread(TimerState& s) {
  if (!start_hook_thread(s.thread_started, timing_thread, "eacgm-gputime"))
    s.header()->errors.fetch_add(1, std::memory_order_relaxed);
}

// At exit, before the CUDA runtime tears its contexts down (its handlers were registered
// before the first launch, so they run after this one): the timing thread leaves the
// driver for good, the last counts are written, and the file is removed unless an agent
// reads it (it removes it after its last read).
void gpu_time_at_exit() {
  TimerState& s = *g_timer;
  s.poll.lock();  // never unlocked: the timing thread stops at its next round
  s.stopping.store(true, std::memory_order_release);
  g_gpu_time_active.store(false, std::memory_order_relaxed);
  write_counts(s);
  if (s.header()->reader.load(std::memory_order_acquire) == 0) s.ring.remove();
}

}  // namespace eacgm::govern::hook
