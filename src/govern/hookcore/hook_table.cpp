// The hooked-function table expanded into data, and the name and version lookups the
// dlsym and cuGetProcAddress routes use (not on a hot path: programs look names up at
// start-up).
#include "govern/hookcore/hook_table.h"

#include <array>

namespace eacgm::govern {
namespace {

// NOLINTBEGIN(bugprone-macro-parentheses): names are stringized, numbers spliced as written
constexpr std::array<HookInfo, kHookCount> kInfo = {{
#define EACGM_DRIVER(name, base, version, until, per_thread, policy, params, args) \
  {#name, #base, version, until, per_thread != 0, HookLibrary::kCuda},
#define EACGM_NVML(name, policy, params, args) {#name, #name, 0, 0, false, HookLibrary::kNvml},
#include "govern/hookcore/hooked_functions.def"
#undef EACGM_DRIVER
#undef EACGM_NVML
    {"cuGetProcAddress", "cuGetProcAddress", 11030, 12000, false, HookLibrary::kCuda},
    {"cuGetProcAddress_v2", "cuGetProcAddress", 12000, 0, false, HookLibrary::kCuda},
}};
// NOLINTEND(bugprone-macro-parentheses)

}  // namespace

const HookInfo& hook_info(HookId id) { return kInfo[index_of(id)]; }

HookId find_hook(std::string_view name) {
  if (name.size() < 3 || (name[0] != 'c' && name[0] != 'n')) return HookId::kCount;
  for (std::size_t i = 0; i < kHookCount; ++i) {
    if (name == kInfo[i].name) return static_cast<HookId>(i);
  }
  return HookId::kCount;
}

HookId select_variant(std::string_view base, int version, bool per_thread) {
  HookId best = HookId::kCount;
  for (std::size_t i = 0; i < kHookCount; ++i) {
    const HookInfo& h = kInfo[i];
    if (h.library != HookLibrary::kCuda || base != h.base) continue;
    if (h.version > version || (h.until != 0 && version >= h.until)) continue;
    if (h.per_thread && !per_thread) continue;
    if (best == HookId::kCount) {
      best = static_cast<HookId>(i);
      continue;
    }
    const HookInfo& b = kInfo[index_of(best)];
    if (h.per_thread != b.per_thread ? h.per_thread : h.version > b.version) best = static_cast<HookId>(i);
  }
  return best;
}

}  // namespace eacgm::govern
