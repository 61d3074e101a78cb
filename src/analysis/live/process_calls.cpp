// Each process's calls by function, for the history store: the view is remade at most
// every kRefresh (and at the end), sharing the summaries of processes that did not change.
#include "analysis/process_calls.h"

#include "analysis/analysis.h"
#include "analysis/environment.h"

namespace eacgm::analysis {
namespace {

class ProcessCallsAnalysis final : public Analysis {
 public:
  static constexpr std::chrono::seconds kRefresh{5};

  explicit ProcessCallsAnalysis(const Environment& env) : env_(env) {}
  Declaration declaration() const override {
    return {"process calls",
            Input::kCalls | Input::kCounts | Input::kTick | Input::kEnd,
            {typeid(ProcessCallsView)}};
  }
  void on_calls(std::span<const CallEvent> calls) override { add_each(calls_, calls); }
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings,
                 const Moment&) override {
    add_each(calls_, counts);
    add_each(calls_, timings);
  }
  void on_tick(const Moment& now) override {
    calls_.sweep(now.steady, env_.process_alive, kExitChecksPerTick);
  }
  void on_end(const Moment& now) override {
    calls_.sweep(now.steady, env_.process_alive, calls_.process_count());
  }
  void publish(SnapshotParts& parts, const Moment& now, bool final) override {
    if (!view_ || final || now.steady - made_ >= kRefresh) {
      view_ = calls_.view();
      made_ = now.steady;
    }
    parts.put(view_);
  }

 private:
  const Environment& env_;
  ProcessCalls calls_;
  std::shared_ptr<const ProcessCallsView> view_;
  std::chrono::steady_clock::time_point made_;
};

}  // namespace

std::unique_ptr<Analysis> make_process_calls(const Environment& env) {
  return std::make_unique<ProcessCallsAnalysis>(env);
}

}  // namespace eacgm::analysis
