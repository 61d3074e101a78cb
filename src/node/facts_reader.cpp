// A process's facts read at its first call (see facts_reader.h).
#include "node/facts_reader.h"

namespace eacgm::node {

std::shared_ptr<Consumer> with_facts_first(std::shared_ptr<const sample::ProcessFacts> facts,
                                           std::shared_ptr<Consumer> head) {
  auto first = std::make_shared<ConsumerList>();
  first->add(std::make_shared<FactsReader>(std::move(facts)));
  first->add(std::move(head));
  return first;
}

void FactsReader::seen(std::uint32_t pid) {
  if (pid == 0 || pids_.contains(pid)) return;
  pids_.put(pid, true);
  ++reads_;
  facts_->remember(pid);
}

void FactsReader::on_calls(std::span<const CallEvent> calls) {
  for (const CallEvent& c : calls) seen(c.pid);
}

void FactsReader::on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) {
  (void)timings;
  for (const CallCount& c : counts) seen(c.pid);
}

}  // namespace eacgm::node
