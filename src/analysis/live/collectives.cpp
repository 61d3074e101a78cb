// Where each communicator's ranks stand and what waits: the arrival skew of the ranks on
// this node (from the NCCL calls), the waiting calls in flight (each scan), the hang
// diagnosis over both, made at each scan, and each rank's progress, each tick.
#include "analysis/analysis.h"
#include "analysis/environment.h"
#include "analysis/hang_diagnosis.h"
#include "analysis/inflight_calls.h"
#include "analysis/nccl_progress.h"
#include "analysis/nccl_skew.h"

namespace eacgm::analysis {
namespace {

class Collectives final : public Analysis {
 public:
  explicit Collectives(const Environment& env) : env_(env) {
    inflight_.set_thread_alive(
        [&env](std::uint32_t pid, std::uint32_t tid) { return env.thread_alive(pid, tid); });
  }
  Declaration declaration() const override {
    return {
        "collectives",
        Input::kCalls | Input::kInflight,
        {typeid(NcclSkewSummary), typeid(InflightSummary), typeid(HangSummary), typeid(NcclProgressSummary)}};
  }
  void configure(const AnalysisSettings& settings) override {
    inflight_.set_min_age_ns(settings.inflight_min_age_ns);
    hangs_.set_hang_after_ns(settings.hang_after_ns);
  }
  void on_calls(std::span<const CallEvent> calls) override { add_each(skew_, calls); }
  void on_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns,
                   const Moment& now) override {
    inflight_.update(calls, scan_mono_ns);
    progress_.on_scan(calls, scan_mono_ns);
    hangs_.update(skew_.progress(), inflight_.summary(), now.wall_ns(), env_.process_alive);
  }
  void publish(SnapshotParts& parts, const Moment&, bool) override {
    parts.put(skew_.summary());
    parts.put(inflight_.summary());
    parts.put(hangs_.summary());
    parts.put(progress_.standing(skew_.progress(), env_.process_alive));
  }

 private:
  const Environment& env_;
  NcclSkew skew_;
  InflightCalls inflight_;
  HangDiagnosis hangs_;
  NcclProgress progress_;
};

}  // namespace

std::unique_ptr<Analysis> make_collectives(const Environment& env) {
  return std::make_unique<Collectives>(env);
}

}  // namespace eacgm::analysis
