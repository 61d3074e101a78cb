// The memory ledger: allocations and frees matched per process and device; a process
// gone for kExitGrace has its unfreed allocations turned into leaks.
#include "analysis/analysis.h"
#include "analysis/environment.h"
#include "analysis/memory_ledger.h"

namespace eacgm::analysis {
namespace {

class Memory final : public Analysis {
 public:
  explicit Memory(const Environment& env) : env_(env) {}
  Declaration declaration() const override {
    return {"memory", Input::kCalls | Input::kTick | Input::kEnd, {typeid(MemorySummary)}};
  }
  void on_calls(std::span<const CallEvent> calls) override { add_each(memory_, calls); }
  void on_tick(const Moment& now) override {
    memory_.sweep(now.steady, env_.process_alive, kExitChecksPerTick, kExitGrace);
  }
  void on_end(const Moment& now) override {
    memory_.sweep(now.steady, env_.process_alive, memory_.process_count(), {});
  }
  void publish(SnapshotParts& parts, const Moment&, bool) override { parts.put(memory_.summary()); }

 private:
  const Environment& env_;
  MemoryLedger memory_;
};

}  // namespace

std::unique_ptr<Analysis> make_memory(const Environment& env) { return std::make_unique<Memory>(env); }

}  // namespace eacgm::analysis
