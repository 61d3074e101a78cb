#include "govern/hook/stream_holds.h"

#include <sys/mman.h>
#include <time.h>

#include <mutex>

#include "govern/hook/gpu_timer_state.h"
#include "govern/hook/hook_thread.h"
#include "govern/hook/monotonic_clock.h"

namespace eacgm::govern::hook {
namespace {

// The watchdog sleeps until a hold is made once none was for this long.
constexpr std::uint64_t kWatchdogIdleNs = 1'000'000'000;

// Every kHoldExpiryNs while holds are being made: the holds older than that are released.
// It never calls the driver, so a launching thread waiting in the driver for a held stream
// (or the timing thread waiting behind it) cannot keep it from releasing the stream.
void* hold_watchdog(void*) {
  TimerState& s = *g_timer;
  for (;;) {
    if (s.holds.outstanding() == 0 &&
        now_ns() - s.last_hold_ns.load(std::memory_order_relaxed) > kWatchdogIdleNs) {
      s.watchdog_asleep.store(1, std::memory_order_seq_cst);
      if (s.holds.outstanding() == 0) s.watchdog_asleep.wait(1, std::memory_order_seq_cst);
      s.watchdog_asleep.store(0, std::memory_order_relaxed);
      continue;
    }
    timespec nap{0, static_cast<long>(kHoldExpiryNs)};
    nanosleep(&nap, nullptr);
    const std::uint32_t released = s.holds.expire(now_ns(), kHoldExpiryNs);
    if (released > 0) s.header()->holds_expired.fetch_add(released, std::memory_order_relaxed);
  }
  return nullptr;
}

void start_watchdog(TimerState& s) {
  if (!start_hook_thread(s.watchdog_started, hold_watchdog, "eacgm-gpuhold")) {
    s.header()->errors.fetch_add(1, std::memory_order_relaxed);
    // No watchdog, no holds: a stream is never left waiting.
    s.hold_on.store(false, std::memory_order_relaxed);
  }
}

constexpr std::uint32_t kNoSlot = ~0u;
thread_local std::uint32_t t_slot = kNoSlot;

}  // namespace

void register_hold_page(TimerState& s, ContextState& c, int index) {
  static std::uint32_t* pages[kMaxContexts];  // never unmapped: a held word outlives any context
  static_assert(kHoldSlots * sizeof(std::uint32_t) == 4096);
  if (pages[index] == nullptr) {
    void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    pages[index] = static_cast<std::uint32_t*>(p);
  }
  const DriverCalls& d = s.driver;
  const CUresult r = d.mem_host_register(pages[index], 4096, CU_MEMHOSTREGISTER_DEVICEMAP);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) return;
  CUdeviceptr device = 0;
  if (d.mem_host_get_device_pointer(&device, pages[index], 0) != CUDA_SUCCESS || device == 0) return;
  std::lock_guard<std::mutex> lock(s.mu);
  c.hold_page = pages[index];
  c.hold_device = device;
}

int begin_hold(TimerState& s, CUstream stream, std::uint32_t* page, CUdeviceptr device, std::uint64_t now) {
  if (t_slot == kNoSlot) t_slot = s.holds.claim_slot();
  if (t_slot >= kHoldSlots) return -1;
  start_watchdog(s);
  if (!s.hold_on.load(std::memory_order_relaxed)) return -1;
  const std::uint32_t v = s.holds.begin(t_slot, page + t_slot, now);
  s.last_hold_ns.store(now, std::memory_order_relaxed);
  if (s.watchdog_asleep.load(std::memory_order_seq_cst) != 0) {
    s.watchdog_asleep.store(0, std::memory_order_seq_cst);
    s.watchdog_asleep.notify_one();
  }
  if (s.driver.stream_wait_value32(stream, device + t_slot * sizeof(std::uint32_t), v,
                                   CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS) {
    // A driver that refuses the wait (on host memory, on this GPU): no more holds, the
    // launches go on as without them.
    s.holds.end(t_slot);
    s.hold_on.store(false, std::memory_order_relaxed);
    return -1;
  }
  return static_cast<int>(t_slot);
}

bool end_hold(TimerState& s, int slot) { return s.holds.end(static_cast<std::uint32_t>(slot)); }

}  // namespace eacgm::govern::hook
