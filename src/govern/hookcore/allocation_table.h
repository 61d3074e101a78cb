// Live allocations by address (or handle): size and device, so a free subtracts what its
// allocation added. One table per kind of handle (device pointers, VMM handles, arrays,
// host pointers), since their values may coincide.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace eacgm::govern {

struct Allocation {
  std::uint64_t bytes = 0;
  int device = -1;
};

class AllocationTable {
 public:
  void insert(std::uint64_t key, Allocation a);
  // Removes and returns the allocation at `key`; false if unknown (a double free, or
  // memory allocated before the hook saw the program).
  bool take(std::uint64_t key, Allocation* out);
  std::size_t size() const;
  // Around fork: the child must not inherit a lock held by another thread.
  void lock_for_fork() { mu_.lock(); }
  void unlock_after_fork() { mu_.unlock(); }
  void clear();

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::uint64_t, Allocation> map_;
};

}  // namespace eacgm::govern
