// MemoryTrim: hands the allocator's free pages back to the system every kPeriod, on the
// output thread's tick (a long-running agent: `serve`). Under process churn the agent's
// live memory stays within its tables' caps (docs/ARCHITECTURE.md, "Per-process state"),
// but the freed memory stays resident in glibc's arenas, spread over the threads that
// allocated it; malloc_trim returns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "core/consumer.h"

namespace eacgm::node {

class MemoryTrim final : public Consumer {
 public:
  static constexpr std::chrono::seconds kPeriod{30};

  void on_tick(std::chrono::steady_clock::time_point now, const CounterValues& counters) override;

  std::uint64_t trims() const { return trims_; }

 private:
  std::optional<std::chrono::steady_clock::time_point> last_;
  std::uint64_t trims_ = 0;
};

}  // namespace eacgm::node
