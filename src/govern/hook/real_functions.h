// The real entry points behind the wrappers: glibc's dlsym, and each hooked function's
// driver (or NVML) implementation, found once and kept in an atomic slot.
#pragma once

#include <atomic>
#include <cstring>

#include "govern/hook/cuda_types.h"
#include "govern/hookcore/hook_table.h"

extern "C" {
// glibc's dlsym, found through dlvsym (the hook does not wrap dlvsym: it is its own door
// to glibc). Read by the dlsym trampoline, hence C linkage.
__attribute__((visibility("hidden"))) extern void* (*eacgm_real_dlsym)(void*, const char*);
}

namespace eacgm::govern::hook {

// Finds glibc's dlsym; safe to call many times.
void resolve_real_dlsym();

extern std::atomic<void*> g_real[kHookCount];

void* resolve_real(HookId id);

inline void* real_function(HookId id) {
  void* p = g_real[index_of(id)].load(std::memory_order_relaxed);
  return __builtin_expect(p != nullptr, 1) ? p : resolve_real(id);
}

// Records what a lookup route found for `id` (the first answer wins; our own wrappers
// are never recorded, which would make a wrapper call itself).
void remember_real(HookId id, void* p);

// Records the handle a program looked a hooked name up in (a libcuda or libnvidia-ml
// opened by path, which RTLD_NOLOAD by soname may not find); the first one wins.
void remember_library(HookLibrary lib, void* handle);

// The address of our wrapper for `id` (driver_wrappers.cpp).
void* wrapper_address(HookId id);

// Driver calls the hook makes for itself, outside the hooked set.
// libcuda's own definition of `name` (never a wrapper of ours), or nullptr.
void* real_driver_symbol(const char* name);
// The same, as the function pointer type `Fn` (nullptr when libcuda lacks it).
template <typename Fn>
Fn real_driver(const char* name) {
  static_assert(sizeof(Fn) == sizeof(void*));
  void* p = real_driver_symbol(name);
  Fn fn;
  std::memcpy(&fn, &p, sizeof fn);
  return fn;
}
CUresult real_current_device(int* device);
bool real_stream_capturing(CUstream stream);
CUresult real_context_synchronize();
// The CUDA ordinal of an NVML device (NVML counts all GPUs; CUDA_VISIBLE_DEVICES may
// renumber them), or -1.
int cuda_ordinal_of(nvmlDevice_t device);

}  // namespace eacgm::govern::hook
