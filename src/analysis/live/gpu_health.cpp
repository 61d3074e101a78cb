// GPU health events (XID, ECC, remapped rows, slowdowns, PCIe replays, a GPU lost) with
// the work on the GPU: each pass is compared with the GPU's last, beside the last scan of
// the calls in flight. A new part is made only when an event came.
#include "analysis/gpu_health.h"

#include "analysis/analysis.h"
#include "analysis/environment.h"

namespace eacgm::analysis {
namespace {

class GpuHealthEvents final : public Analysis {
 public:
  Declaration declaration() const override {
    return {"gpu health", Input::kGpu | Input::kInflight, {typeid(GpuHealthSummary)}};
  }
  void on_gpu(const GpuSnapshot& snapshot) override {
    if (health_.update(snapshot) > 0) published_.reset();
  }
  void on_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns, const Moment&) override {
    health_.set_inflight(calls, scan_mono_ns);
  }
  void publish(SnapshotParts& parts, const Moment&, bool) override {
    if (!published_) published_ = std::make_shared<const GpuHealthSummary>(health_.summary());
    parts.put(published_);
  }

 private:
  GpuHealth health_;
  std::shared_ptr<const GpuHealthSummary> published_;
};

}  // namespace

std::unique_ptr<Analysis> make_gpu_health(const Environment&) { return std::make_unique<GpuHealthEvents>(); }

}  // namespace eacgm::analysis
