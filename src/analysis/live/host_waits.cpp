// Time blocked on the host per process and kind: synchronising calls, and the futex and
// poll-family waits of the host-wait tracer.
#include "analysis/host_waits.h"

#include "analysis/analysis.h"
#include "analysis/environment.h"

namespace eacgm::analysis {
namespace {

class Waits final : public Analysis {
 public:
  explicit Waits(const Environment& env) : env_(env) {
    waits_.set_start_of([&env](std::uint32_t pid) { return env.process_start(pid); });
  }
  Declaration declaration() const override {
    return {"host waits",
            Input::kCalls | Input::kCounts | Input::kHostWaits | Input::kTick | Input::kEnd,
            {typeid(HostWaitSummary)}};
  }
  void on_calls(std::span<const CallEvent> calls) override { add_each(waits_, calls); }
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings,
                 const Moment&) override {
    waits_.add(counts, timings);
  }
  void on_host_waits(std::span<const HostWaitProcess> processes,
                     std::span<const HostWaitTimings> waits) override {
    add_each(waits_, processes);
    add_each(waits_, waits);
  }
  void on_tick(const Moment& now) override {
    waits_.sweep(now.steady, env_.process_alive, kExitChecksPerTick, kExitGrace);
  }
  void on_end(const Moment& now) override {
    waits_.sweep(now.steady, env_.process_alive, waits_.process_count(), {});
  }
  // Shares are of the time up to now: the environment's clock, read at the making.
  void publish(SnapshotParts& parts, const Moment&, bool) override {
    parts.put(waits_.summary(env_.steady()));
  }

 private:
  const Environment& env_;
  HostWaits waits_;
};

}  // namespace

std::unique_ptr<Analysis> make_host_waits(const Environment& env) { return std::make_unique<Waits>(env); }

}  // namespace eacgm::analysis
