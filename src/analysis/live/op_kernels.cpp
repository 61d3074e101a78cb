// The kernels each PyTorch op launched (per-call records).
#include "analysis/op_kernels.h"

#include "analysis/analysis.h"
#include "analysis/environment.h"

namespace eacgm::analysis {
namespace {

class Ops final : public Analysis {
 public:
  Declaration declaration() const override {
    return {"op kernels", Input::kCalls, {typeid(OpKernelSummary)}};
  }
  void on_calls(std::span<const CallEvent> calls) override { add_each(ops_, calls); }
  void publish(SnapshotParts& parts, const Moment&, bool) override { parts.put(ops_.summary()); }

 private:
  OpKernels ops_;
};

}  // namespace

std::unique_ptr<Analysis> make_op_kernels(const Environment&) { return std::make_unique<Ops>(); }

}  // namespace eacgm::analysis
