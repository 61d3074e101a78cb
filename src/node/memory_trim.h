// MemoryTrim: hands the allocator's free pages back to the system every kPeriod, on the
// output thread's tick (a long-running agent: `serve`). Under process churn the agent's
// live memory stays within its tables' caps (docs/ARCHITECTURE.md, "Per-process state"),
// but freed memory stays resident in the allocator. The agent's program is linked with
// jemalloc (CMakeLists.txt), whose pages each hold blocks of one size: a page freed whole
// goes back by itself some seconds later (its decay), and no MemoryTrim is needed. Under
// glibc's malloc (the tests' programs, sanitizer builds) malloc_trim returns what it can,
// and blocks of kMmapThreshold and more are mapped on their own (map_large_blocks), so a
// transient big vector goes back whole when freed; the small long-lived blocks spread
// over its arenas keep the rest of their pages resident (BENCHMARKS.md, "The agent's
// allocator under churn").
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/consumer.h"

namespace eacgm::node {

class MemoryTrim final : public Consumer {
 public:
  static constexpr std::chrono::seconds kPeriod{30};
  static constexpr std::size_t kMmapThreshold = std::size_t{128} * 1024;

  // Fixes glibc's mmap threshold at kMmapThreshold (its default start). Left alone, glibc
  // raises it to the size of each mapped block freed (up to 32 MiB), so after the first
  // snapshot's or response's big vector every later one comes from an arena, where the
  // long-lived small blocks allocated meanwhile keep its pages from going back. Whether
  // glibc took it.
  static bool map_large_blocks();
  // Whether this program's malloc is jemalloc's (else glibc's).
  static bool jemalloc();
  // glibc's free pages back to the system now (malloc_trim).
  static void hand_back();

  void on_tick(std::chrono::steady_clock::time_point now, const CounterValues& counters) override;

  std::uint64_t trims() const { return trims_; }

 private:
  std::optional<std::chrono::steady_clock::time_point> last_;
  std::uint64_t trims_ = 0;
};

}  // namespace eacgm::node
