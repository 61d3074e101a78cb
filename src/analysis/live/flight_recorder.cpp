// The NCCL flight recorder: per communicator and rank, the last collectives from the calls
// and the scans of the calls in flight; processes gone are let go after a while.
#include <memory>

#include "analysis/analysis.h"
#include "analysis/environment.h"
#include "analysis/nccl_flight_recorder.h"

namespace eacgm::analysis {
namespace {

class FlightRecorder final : public Analysis {
 public:
  explicit FlightRecorder(const Environment& env) : env_(env) {}
  void configure(const AnalysisSettings& settings) override {
    recorder_.set_entries(settings.flight_recorder_entries);
  }
  Declaration declaration() const override {
    return {"flight_recorder", Input::kCalls | Input::kInflight | Input::kTick, {typeid(FlightRecord)}};
  }
  void on_calls(std::span<const CallEvent> calls) override { add_each(recorder_, calls); }
  void on_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns, const Moment&) override {
    recorder_.add_inflight(calls, scan_mono_ns);
  }
  void on_tick(const Moment& now) override {
    if (env_.process_alive) recorder_.sweep(env_.process_alive, now.wall_ns(), kExitChecksPerTick);
  }
  // The rings are copied only when they changed: a quiet job costs nothing per tick.
  void publish(SnapshotParts& parts, const Moment&, bool) override {
    if (!last_ || recorder_.changed()) last_ = std::make_shared<const FlightRecord>(recorder_.record());
    parts.put(last_);
  }

 private:
  const Environment& env_;
  NcclFlightRecorder recorder_;
  std::shared_ptr<const FlightRecord> last_;
};

}  // namespace

std::unique_ptr<Analysis> make_nccl_recorder(const Environment& env) {
  return std::make_unique<FlightRecorder>(env);
}

}  // namespace eacgm::analysis
