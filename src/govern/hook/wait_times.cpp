#include "govern/hook/wait_times.h"

#include <atomic>
#include <cstring>

#include "core/host_wait_kinds.h"
#include "govern/hookcore/wait_buckets.h"

namespace eacgm::govern::hook {
namespace {

// The hook wraps 21 waiting driver functions (their _v2 and per-thread forms); more are
// counted but not timed.
constexpr std::size_t kMaxWaitFunctions = 24;

struct WaitBucket {
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> ns{0};
  std::atomic<std::uint64_t> failed{0};
  std::uint64_t calls_sent = 0;  // the timing thread's: `calls` when last written
};

struct WaitFunction {
  HookId id = HookId::kCount;
  std::array<WaitBucket, kWaitBuckets> buckets;
};

std::array<WaitFunction, kMaxWaitFunctions> g_waits;
std::size_t g_wait_count = 0;

}  // namespace

std::array<std::uint8_t, kHookCount> g_wait_slot = [] {
  std::array<std::uint8_t, kHookCount> a{};
  a.fill(kNoWaitSlot);
  return a;
}();

void start_wait_times() {
  if (g_wait_count != 0) return;
  for (std::size_t i = 0; i < kHookCount && g_wait_count < kMaxWaitFunctions; ++i) {
    const auto id = static_cast<HookId>(i);
    const HookInfo& info = hook_info(id);
    if (info.library != HookLibrary::kCuda || !wait_kind_of_function(info.name)) continue;
    g_waits[g_wait_count].id = id;
    g_wait_slot[i] = static_cast<std::uint8_t>(g_wait_count++);
  }
}

void time_wait(HookId id, std::uint64_t ns, bool failed) {
  WaitBucket& b = g_waits[g_wait_slot[index_of(id)]].buckets[wait_bucket(ns)];
  // The time first: a writer that sees the call counted sees its time too.
  b.ns.fetch_add(ns, std::memory_order_relaxed);
  if (failed) b.failed.fetch_add(1, std::memory_order_relaxed);
  b.calls.fetch_add(1, std::memory_order_release);
}

void write_wait_times(GpuTimeRingWriter& ring) {
  for (std::size_t f = 0; f < g_wait_count; ++f) {
    WaitFunction& w = g_waits[f];
    const char* name = hook_info(w.id).name;
    for (std::uint32_t k = 0; k < kWaitBuckets; ++k) {
      WaitBucket& b = w.buckets[k];
      const std::uint64_t calls = b.calls.load(std::memory_order_acquire);
      if (calls == b.calls_sent) continue;
      gpu_time::Record r{};
      r.kind = static_cast<std::uint32_t>(gpu_time::RecordKind::kWaits);
      r.device = -1;
      r.function = index_of(w.id);
      r.stream = k;
      r.duration_ns = calls;
      r.start_ns = b.ns.load(std::memory_order_relaxed);
      r.launch_ns = b.failed.load(std::memory_order_relaxed);
      r.length = static_cast<std::uint32_t>(std::strlen(name));
      if (ring.write(r, name)) b.calls_sent = calls;
    }
  }
}

}  // namespace eacgm::govern::hook
