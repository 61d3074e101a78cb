// The lookup routes besides exported symbols: dlsym on a dlopen'd libcuda or
// libnvidia-ml, and cuGetProcAddress(_v2), through which CUDA 12+ runtimes (including
// the static ones inside cuBLAS, cuDNN and torch) get every driver function.
#include <dlfcn.h>

#include <cstring>

#include "govern/hook/cuda_types.h"
#include "govern/hook/real_functions.h"
#include "govern/hookcore/hook_table.h"

using eacgm::govern::HookId;
using eacgm::govern::hook::real_function;
using eacgm::govern::hook::remember_real;
using eacgm::govern::hook::wrapper_address;

namespace {

// A constructor finds glibc's dlsym before any other code of the program can call
// ours (it reads no environment and touches no GPU library).
__attribute__((constructor)) void find_real_dlsym() { eacgm::govern::hook::resolve_real_dlsym(); }

}  // namespace

// dlsym(handle, name) for every handle but RTLD_NEXT: the real answer, or our wrapper
// when the name is a hooked function and the answer is the real one.
extern "C" __attribute__((visibility("hidden"))) void* eacgm_dlsym_slow(void* handle, const char* name) {
  eacgm::govern::hook::resolve_real_dlsym();
  if (eacgm_real_dlsym == nullptr) return nullptr;
  void* p = eacgm_real_dlsym(handle, name);
  if (p == nullptr || name == nullptr) return p;
  HookId id = eacgm::govern::find_hook(name);
  if (id == HookId::kCount) return p;
  void* wrapper = wrapper_address(id);
  if (p != wrapper) {
    eacgm::govern::hook::remember_library(eacgm::govern::hook_info(id).library, handle);
    remember_real(id, p);
  }
  return wrapper;
}

// dlsym itself. glibc resolves RTLD_NEXT relative to the caller's return address, so
// that case must reach glibc by a jump, not a call, or "next" would mean "after the
// hook" (and an interposer asking for its own next definition could get itself back).
// Everything else goes to eacgm_dlsym_slow.
#if defined(__x86_64__)
asm(R"(
  .text
  .globl dlsym
  .type dlsym, @function
dlsym:
  cmpq $-1, %rdi
  jne 1f
  movq eacgm_real_dlsym(%rip), %rax
  testq %rax, %rax
  je 1f
  jmp *%rax
1:
  jmp eacgm_dlsym_slow
  .size dlsym, .-dlsym
)");
#elif defined(__aarch64__)
asm(R"(
  .text
  .globl dlsym
  .type dlsym, %function
dlsym:
  cmn x0, #1
  b.ne 1f
  adrp x16, eacgm_real_dlsym
  ldr x16, [x16, :lo12:eacgm_real_dlsym]
  cbz x16, 1f
  br x16
1:
  b eacgm_dlsym_slow
  .size dlsym, .-dlsym
)");
#else
#error "libeacgm_hook.so needs a dlsym trampoline for this architecture"
#endif

namespace {

// After the driver answered cuGetProcAddress: our wrapper for the variant it returned.
void substitute(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  if (symbol == nullptr || pfn == nullptr || *pfn == nullptr) return;
  bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  HookId id = eacgm::govern::select_variant(symbol, version, per_thread);
  if (id == HookId::kCount) return;
  remember_real(id, *pfn);
  *pfn = wrapper_address(id);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(
    const char* symbol, void** pfn, int version, cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  using Fn = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto real = reinterpret_cast<Fn>(real_function(HookId::cuGetProcAddress_v2));
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  CUresult r = real(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS) substitute(symbol, pfn, version, flags);
  return r;
}

// NOLINTNEXTLINE(readability-identifier-naming): the driver's name
extern "C" __attribute__((visibility("default"))) CUresult cuGetProcAddress(const char* symbol, void** pfn,
                                                                            int version, cuuint64_t flags) {
  using Fn = CUresult (*)(const char*, void**, int, cuuint64_t);
  auto real = reinterpret_cast<Fn>(real_function(HookId::cuGetProcAddress));
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  CUresult r = real(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS) substitute(symbol, pfn, version, flags);
  return r;
}
