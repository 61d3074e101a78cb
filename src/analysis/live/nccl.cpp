// NCCL calls per communicator and function, with algorithm and bus bandwidth; the NCCL
// kernels a hooked process timed on the GPU are joined to their calls.
#include <limits>

#include "analysis/analysis.h"
#include "analysis/environment.h"
#include "analysis/nccl_stats.h"
#include "core/clock.h"

namespace eacgm::analysis {
namespace {

class Nccl final : public Analysis {
 public:
  // How long an NCCL kernel the hook timed waits for its call's event (nccl_gpu_join.h).
  static constexpr std::uint64_t kKernelWait = 2'000'000'000;

  Declaration declaration() const override {
    return {"nccl", Input::kCalls | Input::kGpuTime | Input::kTick | Input::kEnd, {typeid(NcclStats)}};
  }
  void on_calls(std::span<const CallEvent> calls) override { add_each(nccl_, calls); }
  void on_gpu_time(const GpuTimeBatch& batch) override {
    for (const auto& s : batch.spans) nccl_.add_gpu(s, span_clock_.from_monotonic(s.launch_ns));
  }
  // Kernels whose calls have not come within kKernelWait: joined with what is known.
  void on_tick(const Moment&) override {
    const std::uint64_t now = span_clock_.from_monotonic(monotonic_ns());
    nccl_.settle(now > kKernelWait ? now - kKernelWait : 0);
  }
  void on_end(const Moment&) override { nccl_.settle(std::numeric_limits<std::uint64_t>::max()); }
  void publish(SnapshotParts& parts, const Moment&, bool) override { parts.put(nccl_); }

 private:
  NcclStats nccl_;
  WallClock span_clock_;  // the hook's spans (CLOCK_MONOTONIC) onto the calls' clock
};

}  // namespace

std::unique_ptr<Analysis> make_nccl(const Environment&) { return std::make_unique<Nccl>(); }

}  // namespace eacgm::analysis
