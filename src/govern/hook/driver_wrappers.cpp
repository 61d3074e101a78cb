// The exported wrappers, generated from hooked_functions.def: each finds its real
// function, runs its policy's pre hook, calls the driver (or NVML), runs the post hook;
// for a process on its own copy of the driver, a driver wrapper also counts the call
// (call_tally.h), times it if it blocks the host (wait_times.h), and hands an allocation or
// free to the agent with its address (memory_calls.h).
// No exception can leave them: the hook is built with -fno-exceptions.
#include <array>

#include "govern/hook/call_tally.h"
#include "govern/hook/cuda_types.h"
#include "govern/hook/memory_calls.h"
#include "govern/hook/monotonic_clock.h"
#include "govern/hook/policies.h"
#include "govern/hook/real_functions.h"
#include "govern/hook/wait_times.h"

#define EACGM_EXPORT extern "C" __attribute__((visibility("default")))
#define EACGM_UNPAREN(...) __VA_ARGS__

namespace eacgm::govern::hook {
namespace {

template <typename Policy, typename Ret, typename Real, typename... A>
__attribute__((always_inline)) inline Ret invoke(Real real, A... a) {
  typename Policy::State state{};
  Ret r = Policy::pre(state, a...);
  if (r != 0) return r;
  r = real(a...);
  Policy::post(state, r, a...);
  return r;
}

// Whether the policy reads a memory call's arguments for the agent (memory_calls.h).
template <typename Policy, typename... A>
inline constexpr bool kNotesMemory = requires(CUresult r, A... a) {
  Policy::memory(r, a...);
};
template <typename Policy, typename... A>
constexpr bool notes_memory(A...) {
  return kNotesMemory<Policy, A...>;
}

// A driver function's call, counted for a process on its own copy of the driver
// (call_tally.h), with its bytes where the policy reads them (copies and memsets); an
// allocation or free is queued for the agent instead (counted only when the queue is
// full). After the call, so that the first hooked call, which makes the runtime and with
// it the counts, is counted too.
template <typename Policy, typename... A>
__attribute__((always_inline)) inline void tally(HookId id, std::uint64_t began, const void* caller,
                                                 CUresult r, A... a) {
  if (!tallying()) return;
  if constexpr (kNotesMemory<Policy, A...>) {
    const std::uint64_t took = began != 0 ? now_ns() - began : 0;
    if (note_memory_call(id, Policy::memory(r, a...), r, began, took, caller)) return;
  }
  if constexpr (requires { Policy::bytes(a...); }) {
    tally_call(id, Policy::bytes(a...));
  } else {
    tally_call(id, 0);
  }
}

}  // namespace
}  // namespace eacgm::govern::hook

// The parameter and argument lists are spliced in as written: they cannot be parenthesized.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define EACGM_DRIVER(name, base, version, until, per_thread, policy, params, args)                      \
  EACGM_EXPORT CUresult name params {                                                                   \
    using eacgm::govern::HookId;                                                                        \
    using Fn = CUresult(*) params;                                                                      \
    auto real = reinterpret_cast<Fn>(eacgm::govern::hook::real_function(HookId::name));                 \
    if (real == nullptr) return CUDA_ERROR_NOT_FOUND;                                                   \
    const bool timed = eacgm::govern::hook::timing_wait(HookId::name);                                  \
    const bool noted = eacgm::govern::hook::notes_memory<eacgm::govern::hook::policy> args &&           \
                       eacgm::govern::hook::tallying();                                                 \
    const std::uint64_t began = timed || noted ? eacgm::govern::hook::now_ns() : 0;                     \
    const CUresult r =                                                                                  \
        eacgm::govern::hook::invoke<eacgm::govern::hook::policy, CUresult>(real EACGM_COMMA_ARGS args); \
    if (timed)                                                                                          \
      eacgm::govern::hook::time_wait(HookId::name, eacgm::govern::hook::now_ns() - began,               \
                                     r != CUDA_SUCCESS);                                                \
    eacgm::govern::hook::tally<eacgm::govern::hook::policy>(                                            \
        HookId::name, began, __builtin_return_address(0), r EACGM_COMMA_ARGS args);                     \
    return r;                                                                                           \
  }
#define EACGM_NVML(name, policy, params, args)                                          \
  EACGM_EXPORT nvmlReturn_t name params {                                               \
    using eacgm::govern::HookId;                                                        \
    using Fn = nvmlReturn_t(*) params;                                                  \
    auto real = reinterpret_cast<Fn>(eacgm::govern::hook::real_function(HookId::name)); \
    if (real == nullptr) return kNvmlFunctionNotFound;                                  \
    return eacgm::govern::hook::invoke<eacgm::govern::hook::policy, nvmlReturn_t>(      \
        real EACGM_COMMA_ARGS args);                                                    \
  }
// NOLINTEND(bugprone-macro-parentheses)
// "(a, b)" -> ", a, b" and "()" -> "" (no trailing comma for functions without arguments).
#define EACGM_COMMA_ARGS(...) __VA_OPT__(, ) __VA_ARGS__
#include "govern/hookcore/hooked_functions.def"
#undef EACGM_DRIVER
#undef EACGM_NVML

// cuGetProcAddress and cuGetProcAddress_v2 are written by hand (symbol_routes.cpp).
// NOLINTNEXTLINE(readability-identifier-naming): the driver's name
extern "C" CUresult cuGetProcAddress(const char*, void**, int, cuuint64_t);
extern "C" CUresult cuGetProcAddress_v2(const char*, void**, int, cuuint64_t,
                                        CUdriverProcAddressQueryResult*);

namespace eacgm::govern::hook {
namespace {

const std::array<void*, kHookCount> kWrappers = {
#define EACGM_DRIVER(name, base, version, until, per_thread, policy, params, args) \
  reinterpret_cast<void*>(&::name),
#define EACGM_NVML(name, policy, params, args) reinterpret_cast<void*>(&::name),
#include "govern/hookcore/hooked_functions.def"
#undef EACGM_DRIVER
#undef EACGM_NVML
    reinterpret_cast<void*>(&::cuGetProcAddress),
    reinterpret_cast<void*>(&::cuGetProcAddress_v2),
};

}  // namespace

void* wrapper_address(HookId id) { return kWrappers[index_of(id)]; }

}  // namespace eacgm::govern::hook
