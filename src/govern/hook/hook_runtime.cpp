// One HookRuntime per process, built on first use from the environment; fork handlers
// keep a child (fork without exec) from inheriting held locks or its parent's usage.
#include "govern/hook/hook_runtime.h"

#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

#include "govern/hook/gpu_timer.h"
#include "govern/hook/private_driver.h"
#include "govern/hook/quota_gate.h"
#include "govern/hook/thread_id.h"
#include "govern/hookcore/memory_limits.h"

namespace eacgm::govern::hook {
namespace {

HookRuntime* g_runtime = nullptr;

const char* env_lookup(const char* name, void*) { return std::getenv(name); }

void before_fork() {
  HookRuntime& rt = *g_runtime;
  rt.device_allocs.lock_for_fork();
  rt.physical_allocs.lock_for_fork();
  rt.arrays.lock_for_fork();
  rt.host_allocs.lock_for_fork();
}

void after_fork_parent() {
  HookRuntime& rt = *g_runtime;
  rt.host_allocs.unlock_after_fork();
  rt.arrays.unlock_after_fork();
  rt.physical_allocs.unlock_after_fork();
  rt.device_allocs.unlock_after_fork();
}

// The child shares no CUDA context with its parent (CUDA does not survive fork), so it
// starts with no usage; its limits stay.
void after_fork_child() {
  after_fork_parent();
  HookRuntime& rt = *g_runtime;
  rt.device_allocs.clear();
  rt.physical_allocs.clear();
  rt.arrays.clear();
  rt.host_allocs.clear();
  rt.ledger.clear_usage();
  rt.host_bytes.store(0, std::memory_order_relaxed);
  quota_after_fork_child();
  gpu_time_after_fork_child();
  forget_thread_id();
}

HookRuntime* create_runtime() {
  // Never destroyed: wrappers may run during exit, after static destructors.
  alignas(HookRuntime) static unsigned char storage[sizeof(HookRuntime)];
  auto* rt = new (storage) HookRuntime();
  std::string warnings;
  MemoryLimits limits = read_memory_limits(env_lookup, nullptr, &warnings);
  if (!warnings.empty()) std::fputs(warnings.c_str(), stderr);
  for (int d = 0; d < kMaxDevices; ++d) rt->ledger.set_limit(d, limits.per_device[d]);
  init_quota_from_env();
  bool governed = g_quota_active.load(std::memory_order_relaxed);
  for (int d = 0; d < kMaxDevices; ++d) governed = governed || limits.per_device[d] != kNoLimit;
  init_gpu_time_from_env(governed);
  report_private_driver();
  g_runtime = rt;
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  return rt;
}

}  // namespace

HookRuntime& runtime() {
  static HookRuntime* rt = create_runtime();
  return *rt;
}

}  // namespace eacgm::govern::hook
