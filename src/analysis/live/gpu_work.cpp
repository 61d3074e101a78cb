// Kernels, memsets and copies per process and stream, each once whichever layer issued it.
#include "analysis/gpu_work.h"

#include "analysis/analysis.h"
#include "analysis/environment.h"

namespace eacgm::analysis {
namespace {

class GpuWork final : public Analysis {
 public:
  explicit GpuWork(const Environment& env) : env_(env) {}
  Declaration declaration() const override {
    return {"gpu work", Input::kCalls | Input::kCounts | Input::kTick, {typeid(GpuWorkStats)}};
  }
  void on_calls(std::span<const CallEvent> calls) override { add_each(work_, calls); }
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings>, const Moment&) override {
    add_each(work_, counts);
  }
  void on_tick(const Moment& now) override {
    work_.sweep(now.steady, env_.process_alive, kExitChecksPerTick, kExitGrace);
  }
  void publish(SnapshotParts& parts, const Moment&, bool) override { parts.put(work_); }

 private:
  const Environment& env_;
  GpuWorkStats work_;
};

}  // namespace

std::unique_ptr<Analysis> make_gpu_work(const Environment& env) { return std::make_unique<GpuWork>(env); }

}  // namespace eacgm::analysis
