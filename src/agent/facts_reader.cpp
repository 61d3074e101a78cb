// A process's facts read at its first call (see facts_reader.h).
#include "agent/facts_reader.h"

namespace eacgm::agent {

void FactsReader::seen(std::uint32_t pid) {
  if (pid == 0 || pids_.contains(pid)) return;
  if (pids_.size() >= kMaxPids) pids_.clear();
  pids_.insert(pid);
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

}  // namespace eacgm::agent
