// Where the wrappers meet the scheduler: compute-time tokens before launches, the
// tenant's shared memory account, and its limits. Without a scheduler configured
// (EACGM_SCHED_SOCKET / EACGM_SCHED_ADDR unset) every call here is a no-op.
#pragma once

#include <atomic>
#include <cstdint>

#include "govern/hook/cuda_types.h"

namespace eacgm::govern::hook {

// True once a scheduler is configured: the launch wrappers check it before anything else,
// so a program without a scheduler pays one relaxed load per launch.
extern std::atomic<bool> g_quota_active;

// Before a launch: holds the calling thread while its tenant has no time token for the
// current device (bounded by the configured timeout).
// CUDA_SUCCESS to go on; CUDA_ERROR_NOT_PERMITTED when failing closed without a token.
CUresult launch_gate_slow(CUstream stream);
inline CUresult launch_gate(CUstream stream) {
  if (__builtin_expect(g_quota_active.load(std::memory_order_relaxed), 0)) return launch_gate_slow(stream);
  return CUDA_SUCCESS;
}
// After a synchronizing call: the work queued so far is done, which ends a burst.
void sync_point_slow();
inline void sync_point() {
  if (__builtin_expect(g_quota_active.load(std::memory_order_relaxed), 0)) sync_point_slow();
}

// Reads EACGM_SCHED_* once (from the runtime's creation); no-op without a scheduler.
void init_quota_from_env();
// In a child after fork: drop the parent's connection and slices.
void quota_after_fork_child();

// The tenant's memory account at the scheduler. True when granted, or when there is no
// scheduler, or when it is unreachable and the hook fails open.
bool scheduler_reserve(int device, std::uint64_t bytes);
void scheduler_release(int device, std::uint64_t bytes);
void scheduler_add(int device, std::uint64_t bytes);

// The limit that applies: the smaller of the environment's and the tenant's.
std::uint64_t effective_limit(int device, std::uint64_t env_limit);
// Bytes in use as the limit sees them: the tenant's (all its processes) when known.
std::uint64_t effective_used(int device, std::uint64_t local_used);

}  // namespace eacgm::govern::hook
