// The enricher chain: runs the stages in order, routing the calls a stage makes
// through the stages after it.
#include "ingest/enricher.h"

namespace eacgm::ingest {

EnricherChain::EnricherChain(EnricherChain&& other) noexcept
    : stages_(std::move(other.stages_)), outs_(std::move(other.outs_)), scratch_(std::move(other.scratch_)) {
  for (auto& o : outs_) o->rebind(*this);
}

EnricherChain& EnricherChain::operator=(EnricherChain&& other) noexcept {
  stages_ = std::move(other.stages_);
  outs_ = std::move(other.outs_);
  scratch_ = std::move(other.scratch_);
  for (auto& o : outs_) o->rebind(*this);
  return *this;
}

void EnricherChain::add(std::unique_ptr<Enricher> stage) {
  stages_.push_back(std::move(stage));
  outs_.push_back(std::make_unique<StageOut>(*this, stages_.size()));
  scratch_.emplace_back();
}

void EnricherChain::process(CallEvent& event, CallSink& sink) {
  sink_ = &sink;
  run_from(0, event);
}

void EnricherChain::run_from(std::size_t first, CallEvent& event) {
  for (std::size_t i = first; i < stages_.size(); ++i) {
    if (!stages_[i]->enrich(event, *outs_[i])) return;
  }
  sink_->take(event);
}

void EnricherChain::StageOut::emit(const CallEvent& event) {
  // A copy, so the later stages may fill it in; the slot is reused (its strings keep
  // their capacity). A stage never makes calls from the calls it made itself, so one
  // slot per stage is enough.
  CallEvent& copy = chain_->scratch_[next_ - 1];
  copy = event;
  chain_->run_from(next_, copy);
}

void EnricherChain::forget(std::uint32_t pid) {
  for (auto& s : stages_) s->forget(pid);
}

void EnricherChain::register_counters(CounterRegistry& registry) {
  for (auto& s : stages_) s->register_counters(registry);
}

}  // namespace eacgm::ingest
