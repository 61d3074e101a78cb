// The scheduler side of the hook (compute tokens, the tenant's memory account).
#include "govern/hook/quota_gate.h"

#include "govern/hookcore/memory_limits.h"

namespace eacgm::govern::hook {

std::atomic<bool> g_quota_active{false};

void launch_gate_slow(CUstream) {}
void sync_point_slow() {}
bool scheduler_reserve(int, std::uint64_t) { return true; }
void scheduler_release(int, std::uint64_t) {}
void scheduler_add(int, std::uint64_t) {}
std::uint64_t effective_limit(int, std::uint64_t env_limit) { return env_limit; }
std::uint64_t effective_used(int, std::uint64_t local_used) { return local_used; }

}  // namespace eacgm::govern::hook
