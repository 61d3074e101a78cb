// A bounded queue of the allocation and free calls a process on its own copy of the driver
// makes (hook/memory_calls.h): any thread pushes, without a lock and without waiting (a
// full queue refuses the call, and the caller counts it instead); one thread, the GPU-time
// ring's writer, takes them in order. Zero-initialised storage is an empty queue, so a
// global one needs no constructor to run before the first call.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace eacgm::govern {

// One call, as the ring carries it (core/gpu_time_ring.h kMemory).
struct MemoryCall {
  std::uint64_t begin_ns = 0;     // CLOCK_MONOTONIC at entry
  std::uint64_t duration_ns = 0;  // on the host
  std::uint64_t address = 0;      // the allocation's (or freed) address, or VMM handle
  std::uint64_t bytes = 0;        // allocations: the size (pitched: the pitch)
  std::uint64_t rows = 0;         // pitched allocations: the height
  std::uint32_t tid = 0;
  std::int32_t result = 0;  // the driver's CUresult
  std::uint16_t hook = 0;   // the function's HookId
  bool by_runtime = false;  // made by the CUDA runtime's library (a call its probe counts)
};

class MemoryCallQueue {
 public:
  static constexpr std::size_t kCapacity = 1024;  // a power of two

  // Any thread; false when full.
  bool push(const MemoryCall& call);
  // The consumer's: the oldest call, or nullptr when none is complete; pop() removes it.
  const MemoryCall* front() const;
  void pop();
  // Calls refused because the queue was full.
  std::uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

 private:
  // A cell's turn, stored less its index (so zero is the empty queue): `position - index`
  // when free for the push at `position`, one more when that push has written it.
  struct Cell {
    std::atomic<std::uint64_t> turn{0};
    MemoryCall call;
  };
  static constexpr std::uint64_t kMask = kCapacity - 1;
  std::array<Cell, kCapacity> cells_{};
  alignas(64) std::atomic<std::uint64_t> pushed_{0};
  alignas(64) std::uint64_t popped_ = 0;
  std::atomic<std::uint64_t> refused_{0};
};

}  // namespace eacgm::govern
