// The hooked functions as data: one id per entry of hooked_functions.def (plus the
// lookup routes cuGetProcAddress and cuGetProcAddress_v2), their names and the CUDA
// versions cuGetProcAddress maps them to. No CUDA header needed.
#pragma once

#include <cstdint>
#include <string_view>

namespace eacgm::govern {

enum class HookId : std::uint16_t {
#define EACGM_DRIVER(name, base, version, until, per_thread, policy, params, args) name,
#define EACGM_NVML(name, policy, params, args) name,
#include "govern/hookcore/hooked_functions.def"
#undef EACGM_DRIVER
#undef EACGM_NVML
  cuGetProcAddress,     // lookup route, CUDA 11.3 signature
  cuGetProcAddress_v2,  // lookup route, CUDA 12.0 signature
  kCount,
};

inline constexpr std::size_t kHookCount = static_cast<std::size_t>(HookId::kCount);
inline constexpr std::size_t index_of(HookId id) { return static_cast<std::size_t>(id); }

enum class HookLibrary : std::uint8_t { kCuda, kNvml };

struct HookInfo {
  const char* name;  // the exported symbol
  const char* base;  // what cuGetProcAddress is asked for
  int version;       // first CUDA version mapping base to this variant
  int until;         // first CUDA version mapping base to a newer variant (0: none)
  bool per_thread;   // the _ptsz/_ptds variant
  HookLibrary library;
};

const HookInfo& hook_info(HookId id);

// The id whose exported name is `name`, or kCount.
HookId find_hook(std::string_view name);

// The variant cuGetProcAddress(base, version, flags) returns, by the driver's rules: the
// newest variant not newer than `version` (and not replaced before it), the per-thread
// one when `per_thread` asks for it and one exists. kCount when none of ours applies
// (for example an ABI older than the variants we wrap), and then the caller passes the
// driver's answer through unwrapped.
HookId select_variant(std::string_view base, int version, bool per_thread);

}  // namespace eacgm::govern
