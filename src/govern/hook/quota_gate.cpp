// Compute quotas in the program (Gemini's model): a process launches only while its
// tenant holds the GPU's time token. When the slice ends, the next launch waits for the
// GPU to finish the work already queued (cuCtxSynchronize: the end of a burst; skipped
// while the stream is being captured into a graph), reports how long the slice really
// took, and asks for the next one with a prediction of its next burst.
#include "govern/hook/quota_gate.h"

#include <algorithm>
#include <mutex>
#include <new>

#include "govern/hook/real_functions.h"
#include "govern/hook/sched_client.h"
#include "govern/hookcore/burst_predictor.h"
#include "govern/hookcore/memory_limits.h"

namespace eacgm::govern::hook {

std::atomic<bool> g_quota_active{false};

namespace {

struct DeviceSlice {
  std::atomic<std::int64_t> expires_us{0};
  std::int64_t granted_us = 0;
  bool held = false;
  std::timed_mutex renew;  // one thread per device asks; the others wait for its answer
  BurstPredictor predictor;
};

struct QuotaState {
  SchedClient client;
  DeviceSlice devices[kMaxDevices];
};

QuotaState* g_state = nullptr;

bool fail_open() { return !g_state->client.config().fail_closed; }

}  // namespace

void init_quota_from_env() {
  SchedClientConfig cfg = sched_config_from_env();
  if (!cfg.configured()) return;
  alignas(QuotaState) static unsigned char storage[sizeof(QuotaState)];
  g_state = new (storage) QuotaState();
  g_state->client.configure(cfg);
  g_quota_active.store(true, std::memory_order_release);
}

void quota_after_fork_child() {
  if (g_state == nullptr) return;
  g_state->client.after_fork_child();
  for (DeviceSlice& d : g_state->devices) {
    new (&d.renew) std::timed_mutex();
    d.expires_us.store(0, std::memory_order_relaxed);
    d.held = false;
  }
}

CUresult launch_gate_slow(CUstream stream) {
  int device = -1;
  if (g_state == nullptr || real_current_device(&device) != CUDA_SUCCESS || device < 0 ||
      device >= kMaxDevices)
    return CUDA_SUCCESS;
  DeviceSlice& d = g_state->devices[device];
  if (monotonic_us() < d.expires_us.load(std::memory_order_acquire)) return CUDA_SUCCESS;
  std::unique_lock<std::timed_mutex> lock(d.renew, std::defer_lock);
  if (!lock.try_lock_for(std::chrono::milliseconds(g_state->client.config().timeout_ms)))
    return fail_open() ? CUDA_SUCCESS : CUDA_ERROR_NOT_PERMITTED;
  std::int64_t now = monotonic_us();
  if (now < d.expires_us.load(std::memory_order_acquire)) return CUDA_SUCCESS;  // renewed while we waited
  std::uint32_t used = 0;
  if (d.held) {
    // The slice is over: the GPU time it took ends when the queued work is done.
    if (!real_stream_capturing(stream)) real_context_synchronize();
    now = monotonic_us();
    std::int64_t burst = now - d.granted_us;
    d.predictor.record(static_cast<std::uint64_t>(burst));
    used = static_cast<std::uint32_t>(std::min<std::int64_t>(burst, 0xffffffff));
    d.held = false;
  }
  std::uint32_t slice = 0;
  std::uint64_t predicted = std::min<std::uint64_t>(d.predictor.predict(), 0xffffffff);
  if (!g_state->client.token(device, used, static_cast<std::uint32_t>(predicted), &slice)) {
    // No answer: fail open (launch; ask again after the back-off) or closed.
    return fail_open() ? CUDA_SUCCESS : CUDA_ERROR_NOT_PERMITTED;
  }
  now = monotonic_us();
  d.granted_us = now;
  d.held = true;
  d.expires_us.store(now + slice, std::memory_order_release);
  return CUDA_SUCCESS;
}

void sync_point_slow() {
  // A synchronizing call returned: the GPU has caught up with this process, so its
  // burst ended here. The slice's length is still what the scheduler granted; the
  // predictor learns the burst for the next request.
  int device = -1;
  if (g_state == nullptr || real_current_device(&device) != CUDA_SUCCESS || device < 0 ||
      device >= kMaxDevices)
    return;
  DeviceSlice& d = g_state->devices[device];
  std::unique_lock<std::timed_mutex> lock(d.renew, std::try_to_lock);
  if (!lock.owns_lock() || !d.held) return;
  d.predictor.record(static_cast<std::uint64_t>(monotonic_us() - d.granted_us));
}

bool scheduler_reserve(int device, std::uint64_t bytes) {
  if (g_state == nullptr) return true;
  bool granted = false;
  if (!g_state->client.mem_reserve(device, bytes, &granted)) return fail_open();
  return granted;
}

void scheduler_release(int device, std::uint64_t bytes) {
  if (g_state != nullptr) g_state->client.mem_release(device, bytes);
}

void scheduler_add(int device, std::uint64_t bytes) {
  bool granted = false;
  if (g_state != nullptr) g_state->client.mem_reserve(device, bytes, &granted);
}

std::uint64_t effective_limit(int, std::uint64_t env_limit) {
  if (g_state == nullptr) return env_limit;
  std::uint64_t tenant = g_state->client.memory_limit();
  if (tenant == kNoLimit) return env_limit;
  return env_limit == kNoLimit ? tenant : std::min(env_limit, tenant);
}

std::uint64_t effective_used(int device, std::uint64_t local_used) {
  if (g_state == nullptr) return local_used;
  std::uint64_t used = 0, limit = 0;
  if (!g_state->client.mem_query(device, &used, &limit)) return local_used;
  return std::max(used, local_used);
}

}  // namespace eacgm::govern::hook
