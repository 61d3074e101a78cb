// Finding the real functions without recursion: glibc's dlsym through dlvsym (never
// glibc internals), libcuda and libnvidia-ml through handles of the already loaded
// libraries (RTLD_NOLOAD: the hook never loads a GPU library by itself).
#include "govern/hook/real_functions.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

void* (*eacgm_real_dlsym)(void*, const char*) = nullptr;

namespace eacgm::govern::hook {

std::atomic<void*> g_real[kHookCount];

namespace {

std::atomic<void*> g_handles[2];

void* library_handle(HookLibrary lib) {
  auto& slot = g_handles[lib == HookLibrary::kCuda ? 0 : 1];
  void* h = slot.load(std::memory_order_acquire);
  if (h != nullptr) return h;
  h = dlopen(lib == HookLibrary::kCuda ? "libcuda.so.1" : "libnvidia-ml.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (h != nullptr) slot.store(h, std::memory_order_release);
  return h;
}

void* lookup_real(HookLibrary lib, const char* name) {
  resolve_real_dlsym();
  if (eacgm_real_dlsym == nullptr) return nullptr;
  void* p = nullptr;
  if (void* h = library_handle(lib)) p = eacgm_real_dlsym(h, name);
  // A program linked against libcuda: the definition after ours in the search order.
  if (p == nullptr) p = eacgm_real_dlsym(RTLD_NEXT, name);
  return p;
}

}  // namespace

void resolve_real_dlsym() {
  if (__atomic_load_n(&eacgm_real_dlsym, __ATOMIC_ACQUIRE) != nullptr) return;
  void* p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (p == nullptr) p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  if (p == nullptr) {
    std::fputs(
        "eacgm hook: cannot find glibc's dlsym (dlvsym GLIBC_2.34 and GLIBC_2.2.5 failed); "
        "driver functions looked up by dlsym are not governed\n",
        stderr);
    return;
  }
  void* (*fn)(void*, const char*);
  std::memcpy(&fn, &p, sizeof fn);
  __atomic_store_n(&eacgm_real_dlsym, fn, __ATOMIC_RELEASE);
}

void remember_library(HookLibrary lib, void* handle) {
  if (handle == RTLD_DEFAULT || handle == RTLD_NEXT) return;
  void* expected = nullptr;
  g_handles[lib == HookLibrary::kCuda ? 0 : 1].compare_exchange_strong(expected, handle,
                                                                       std::memory_order_acq_rel);
}

void remember_real(HookId id, void* p) {
  if (p == nullptr || p == wrapper_address(id)) return;
  void* expected = nullptr;
  g_real[index_of(id)].compare_exchange_strong(expected, p, std::memory_order_relaxed);
}

void* resolve_real(HookId id) {
  const HookInfo& info = hook_info(id);
  void* p = lookup_real(info.library, info.name);
  if (p == wrapper_address(id)) p = nullptr;
  if (p != nullptr) remember_real(id, p);
  return g_real[index_of(id)].load(std::memory_order_relaxed);
}

void* real_driver_symbol(const char* name) { return lookup_real(HookLibrary::kCuda, name); }

CUresult real_current_device(int* device) {
  using Fn = CUresult (*)(CUdevice*);
  static Fn fn = real_driver<Fn>("cuCtxGetDevice");
  if (fn == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  CUdevice d = -1;
  CUresult r = fn(&d);
  if (r == CUDA_SUCCESS) *device = d;
  return r;
}

bool real_stream_capturing(CUstream stream) {
  using Fn = CUresult (*)(CUstream, CUstreamCaptureStatus*);
  static Fn fn = real_driver<Fn>("cuStreamIsCapturing");
  if (fn == nullptr) return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  // An error (an invalidated capture, a destroyed stream) counts as capturing: the hook
  // must then not synchronize.
  if (fn(stream, &status) != CUDA_SUCCESS) return true;
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

CUresult real_context_synchronize() {
  using Fn = CUresult (*)();
  static Fn fn = real_driver<Fn>("cuCtxSynchronize");
  return fn == nullptr ? CUDA_ERROR_NOT_INITIALIZED : fn();
}

int cuda_ordinal_of(nvmlDevice_t device) {
  using Fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned*);
  static Fn fn = [] {
    void* p = lookup_real(HookLibrary::kNvml, "nvmlDeviceGetIndex");
    Fn f;
    std::memcpy(&f, &p, sizeof f);
    return f;
  }();
  unsigned index = 0;
  if (fn == nullptr || fn(device, &index) != kNvmlSuccess) return -1;
  // CUDA_VISIBLE_DEVICES=2,0 makes NVML's GPU 2 CUDA's device 0. Entries that are not
  // plain numbers (UUIDs, MIG names) leave the NVML index as it is.
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr || *visible == '\0') return static_cast<int>(index);
  int ordinal = 0;
  for (const char* p = visible; *p != '\0';) {
    char* end = nullptr;
    long v = std::strtol(p, &end, 10);
    if (end == p) return static_cast<int>(index);
    if (v == static_cast<long>(index)) return ordinal;
    ++ordinal;
    p = (*end == ',') ? end + 1 : end;
    if (*end != ',' && *end != '\0') return static_cast<int>(index);
  }
  return -1;  // not visible to CUDA: no limit of ours applies
}

}  // namespace eacgm::govern::hook
