#include "govern/hook/call_tally.h"

#include <cstring>

namespace eacgm::govern::hook {

std::atomic<bool> g_tally_calls{false};
CallTally g_call_tallies[kHookCount];

void write_call_tallies(GpuTimeRingWriter& ring) {
  for (std::size_t i = 0; i < kHookCount; ++i) {
    CallTally& t = g_call_tallies[i];
    const std::uint64_t calls = t.calls.load(std::memory_order_relaxed);
    if (calls == t.calls_sent) continue;
    const HookInfo& info = hook_info(static_cast<HookId>(i));
    if (info.library != HookLibrary::kCuda) continue;
    gpu_time::Record r{};
    r.kind = static_cast<std::uint32_t>(gpu_time::RecordKind::kCalls);
    r.device = -1;
    r.function = i;
    r.duration_ns = calls;
    r.start_ns = t.bytes.load(std::memory_order_relaxed);
    r.length = static_cast<std::uint32_t>(std::strlen(info.name));
    if (ring.write(r, info.name)) t.calls_sent = calls;
  }
}

void stop_call_tallies() { g_tally_calls.store(false, std::memory_order_relaxed); }

}  // namespace eacgm::govern::hook
