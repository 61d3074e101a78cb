// The functions (and graphs) a process launched, for GPU timing: an exact launch count
// each, whether it is an NCCL kernel (timed every time), its name once read, and what the
// timing thread already handed on. Lock-free: launching threads insert and count with
// atomics; a fixed number of entries (kLaunchTableSize), a launch of a function that
// finds no free entry is counted in `untracked()` and never timed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace eacgm::govern {

inline constexpr std::size_t kLaunchTableSize = 8192;  // a power of two
// A function not planned yet (hookcore/sample_rate.h SamplePlanner) may have this many
// launches timed at the default 1 in N before its first plan.
inline constexpr std::int32_t kUnplannedQuota = 16;

struct LaunchEntry {
  std::atomic<std::uintptr_t> key{0};      // CUfunction / CUgraphExec; 0: free
  std::atomic<std::uint64_t> launches{0};  // exact
  std::atomic<std::uint8_t> naming{0};     // 0 not yet, 1 being named, 2 named
  std::atomic<bool> nccl{false};
  std::atomic<bool> graph{false};
  std::atomic<char*> name{nullptr};  // owned; set once, never freed while the process lives
  // Its sampling plan for this period, set by the timing thread: 1 in `every` (0: the
  // default), and how many more launches may be timed (taken by the launching threads).
  std::atomic<std::uint32_t> every{0};
  std::atomic<std::int32_t> left{kUnplannedQuota};
  // Launches that may still be timed in place of a chosen one left untimed on an idle stream
  // (hookcore/sample_rate.h choose_launch).
  std::atomic<std::int32_t> in_place{0};
  // The timing thread's own: what it sent last, the count at the last plan, and the sum
  // and number of the durations it read back (the kernel's mean, for its weight).
  std::uint64_t launches_sent = 0;
  std::uint64_t launches_planned = 0;
  double timed_sum_ns = 0;
  std::uint64_t timed_count = 0;
  // Of those, the spans queued behind earlier work (samples). Read by the launching threads
  // too: once a function has one, a launch chosen for timing whose stream is idle is left
  // untimed (hook/gpu_timer.cpp).
  std::atomic<std::uint64_t> queued_count{0};
  std::uint32_t shape_hashes[8] = {};  // the launch shapes timed so far (hashes), the first 8
  std::uint8_t shapes_seen = 0;
  bool name_sent = false;
};

class LaunchTable {
 public:
  // The entry of `key`, inserted if new; nullptr when the table is full (or key is 0).
  LaunchEntry* find_or_insert(std::uintptr_t key);
  std::uint64_t untracked() const { return untracked_.load(std::memory_order_relaxed); }
  void count_untracked() { untracked_.fetch_add(1, std::memory_order_relaxed); }
  // For the timing thread: every entry in use, in table order.
  template <typename F>
  void for_each(F&& f) {
    for (LaunchEntry& e : entries_) {
      if (e.key.load(std::memory_order_acquire) != 0) f(e);
    }
  }
  // In a child after fork: forget the parent's functions (CUDA does not survive fork).
  void clear();

 private:
  LaunchEntry entries_[kLaunchTableSize];
  std::atomic<std::uint64_t> untracked_{0};
};

// True for NCCL's device kernels (ncclKernel_*, ncclDevKernel_*), mangled or not.
bool is_nccl_kernel_name(const char* name);

}  // namespace eacgm::govern
