// The per-function call summary (calls, errors, bytes, latency) of every call seen.
#include "analysis/analysis.h"
#include "analysis/call_summary.h"
#include "analysis/environment.h"

namespace eacgm::analysis {
namespace {

class Calls final : public Analysis {
 public:
  Declaration declaration() const override {
    return {"calls", Input::kCalls | Input::kCounts, {typeid(CallSummary)}};
  }
  void on_calls(std::span<const CallEvent> calls) override { add_each(calls_, calls); }
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings,
                 const Moment&) override {
    add_each(calls_, counts);
    add_each(calls_, timings);
  }
  void publish(SnapshotParts& parts, const Moment&, bool) override { parts.put(calls_); }

 private:
  CallSummary calls_;
};

}  // namespace

std::unique_ptr<Analysis> make_calls(const Environment&) { return std::make_unique<Calls>(); }

}  // namespace eacgm::analysis
