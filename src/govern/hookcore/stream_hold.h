// Holds: a launch timed on an idle stream makes the stream wait (cuStreamWaitValue32, on
// the GPU) for a word of host memory before its start event, and the launching thread
// writes that word once the kernel is queued behind the event. The GPU then passes the
// start event just before the kernel, as on a stream with work queued, and the span is the
// kernel's own time (less the dispatch gap), a sample, where it would otherwise hold the
// launch's latency too. The stream waits for the host's write, a microsecond or two after
// the kernel arrived: it was idle, waiting for the host anyway.
//
// Each launching thread has its own word (a slot, one per thread, never reused) in a page
// of host memory per context, and its own count: the value a hold waits for (cyclically at
// least, CU_STREAM_WAIT_VALUE_GEQ) is the thread's count after it, so an earlier write
// never releases a later hold. A hold the launching thread does not end within
// kHoldExpiryNs (the driver waiting for the GPU inside the launch, as with
// CUDA_LAUNCH_BLOCKING or lazy loading, or the thread descheduled) is released by a
// watchdog (expire), which never calls the driver: a stream is never left waiting.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace eacgm::govern {

inline constexpr std::uint32_t kHoldSlots = 1024;  // 4-byte words: a page
inline constexpr std::uint64_t kHoldExpiryNs = 5'000'000;

class StreamHolds {
 public:
  // A slot for a launching thread's first hold; kHoldSlots once all are taken (that thread
  // never holds).
  std::uint32_t claim_slot() {
    const std::uint32_t i = claimed_.fetch_add(1, std::memory_order_relaxed);
    return i < kHoldSlots ? i : kHoldSlots;
  }

  // Begins `slot`'s hold on `word` (the slot's word in the context's page) at `now_ns`:
  // the value the stream is to wait for. Only the slot's thread calls begin and end.
  std::uint32_t begin(std::uint32_t slot, std::uint32_t* word, std::uint64_t now_ns) {
    Slot& s = slots_[slot];
    const std::uint32_t v = ++s.count;
    s.word.store(word, std::memory_order_relaxed);
    s.value.store(v, std::memory_order_relaxed);
    outstanding_.fetch_add(1, std::memory_order_seq_cst);
    s.since.store(now_ns == 0 ? 1 : now_ns, std::memory_order_seq_cst);
    return v;
  }

  // Ends `slot`'s hold: writes its word. True when this call released it (the kernel was
  // queued before the stream went on); false when the watchdog had already.
  bool end(std::uint32_t slot) {
    Slot& s = slots_[slot];
    std::uint64_t since = s.since.load(std::memory_order_relaxed);
    if (since == 0 || !s.since.compare_exchange_strong(since, 0, std::memory_order_acq_rel)) return false;
    release(s.word.load(std::memory_order_relaxed), s.value.load(std::memory_order_relaxed));
    return true;
  }

  // The watchdog's round: releases every hold begun at least `older_than_ns` before
  // `now_ns`; how many.
  std::uint32_t expire(std::uint64_t now_ns, std::uint64_t older_than_ns) {
    std::uint32_t released = 0;
    const std::uint32_t n = std::min(claimed_.load(std::memory_order_relaxed), kHoldSlots);
    for (std::uint32_t i = 0; i < n; ++i) {
      Slot& s = slots_[i];
      std::uint64_t since = s.since.load(std::memory_order_acquire);
      if (since == 0 || now_ns < since || now_ns - since < older_than_ns) continue;
      std::uint32_t* word = s.word.load(std::memory_order_relaxed);
      const std::uint32_t v = s.value.load(std::memory_order_relaxed);
      // Still the hold read above (a later one has a later `since`): released here.
      if (!s.since.compare_exchange_strong(since, 0, std::memory_order_acq_rel)) continue;
      release(word, v);
      ++released;
    }
    return released;
  }

  // Holds begun and not yet released.
  std::uint32_t outstanding() const { return outstanding_.load(std::memory_order_seq_cst); }

 private:
  void release(std::uint32_t* word, std::uint32_t v) {
    __atomic_store_n(word, v, __ATOMIC_RELEASE);
    outstanding_.fetch_sub(1, std::memory_order_seq_cst);
  }

  struct alignas(64) Slot {
    std::atomic<std::uint64_t> since{0};  // when the hold began; 0: none
    std::atomic<std::uint32_t*> word{nullptr};
    std::atomic<std::uint32_t> value{0};
    std::uint32_t count = 0;  // the slot's thread's holds so far
  };
  std::atomic<std::uint32_t> claimed_{0};
  std::atomic<std::uint32_t> outstanding_{0};
  Slot slots_[kHoldSlots];
};

}  // namespace eacgm::govern
