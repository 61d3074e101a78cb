// Memory calls of a private-driver process, queued and written to the ring
// (hook/memory_calls.h).
#include "govern/hook/memory_calls.h"

#include <dlfcn.h>

#include <array>
#include <atomic>
#include <cstring>

#include "govern/hook/thread_id.h"
#include "govern/hookcore/memory_call_queue.h"

namespace eacgm::govern::hook {
namespace {

constinit MemoryCallQueue g_memory_calls;

// Callers already placed: the return address with bit 63 set when it lies in libcudart
// (user addresses stay below 2^47). A slot a racing thread overwrites is looked up again.
constexpr std::uint64_t kByRuntimeBit = 1ull << 63;
constexpr std::size_t kCallerSlots = 64;
constinit std::array<std::atomic<std::uint64_t>, kCallerSlots> g_callers{};

bool in_runtime_library(const void* caller) {
  Dl_info info{};
  if (dladdr(caller, &info) == 0 || info.dli_fname == nullptr) return false;
  const char* slash = std::strrchr(info.dli_fname, '/');
  return std::strncmp(slash != nullptr ? slash + 1 : info.dli_fname, "libcudart", 9) == 0;
}

bool by_runtime(const void* caller) {
  const auto address = reinterpret_cast<std::uintptr_t>(caller);
  std::atomic<std::uint64_t>& slot = g_callers[(address >> 2) % kCallerSlots];
  const std::uint64_t seen = slot.load(std::memory_order_relaxed);
  if ((seen & ~kByRuntimeBit) == address) return (seen & kByRuntimeBit) != 0;
  const bool runtime = in_runtime_library(caller);
  slot.store(address | (runtime ? kByRuntimeBit : 0), std::memory_order_relaxed);
  return runtime;
}

}  // namespace

bool note_memory_call(HookId id, const MemoryArgs& args, int result, std::uint64_t begin_ns,
                      std::uint64_t duration_ns, const void* caller) {
  MemoryCall call;
  call.begin_ns = begin_ns;
  call.duration_ns = duration_ns;
  call.address = args.address;
  call.bytes = args.bytes;
  call.rows = args.rows;
  call.tid = thread_id();
  call.result = result;
  call.hook = static_cast<std::uint16_t>(index_of(id));
  call.by_runtime = by_runtime(caller);
  return g_memory_calls.push(call);
}

void write_memory_calls(GpuTimeRingWriter& ring) {
  while (const MemoryCall* call = g_memory_calls.front()) {
    gpu_time::Record r{};
    r.kind = static_cast<std::uint32_t>(gpu_time::RecordKind::kMemory);
    r.device = -1;
    r.function = call->hook;
    r.launch_ns = call->begin_ns;
    r.duration_ns = call->duration_ns;
    r.tid = call->tid;
    gpu_time::MemoryPayload p{};
    p.address = call->address;
    p.bytes = call->bytes;
    p.rows = call->rows;
    p.result = call->result;
    p.flags = call->by_runtime ? gpu_time::kMemoryByRuntime : 0;
    const char* name = hook_info(static_cast<HookId>(call->hook)).name;
    std::strncpy(p.function, name, sizeof p.function - 1);
    if (!ring.write(r, p)) return;  // the ring is full: the rest at the next round
    g_memory_calls.pop();
  }
}

}  // namespace eacgm::govern::hook
