// FactsReader: reads each process's facts (command line, environment: rank and job,
// cgroup: container and pod; ProcessFacts::remember, which leaves naming the pod to the
// asks that need it, off this thread) the first time one of its calls arrives, on the
// output thread, so that a process that exits before the history's next interval or the next
// scrape is still written with them (ProcessFacts keeps what it read after the exit).
// Remembers the last kMaxPids pids it read, the one read longest ago forgotten first (a
// pid read again costs one more read, nothing else).
#pragma once

#include <cstdint>
#include <memory>

#include "core/consumer.h"
#include "core/pid_fifo.h"
#include "sample/process_facts.h"

namespace eacgm::node {

class FactsReader final : public Consumer {
 public:
  static constexpr std::size_t kMaxPids = 4096;
  explicit FactsReader(std::shared_ptr<const sample::ProcessFacts> facts) : facts_(std::move(facts)) {}

  void on_calls(std::span<const CallEvent> calls) override;
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) override;

  std::uint64_t reads() const { return reads_; }

 private:
  void seen(std::uint32_t pid);

  std::shared_ptr<const sample::ProcessFacts> facts_;
  PidFifo<bool> pids_{kMaxPids};
  std::uint64_t reads_ = 0;
};

// `head` behind a FactsReader of `facts`: each process's facts read at its first call,
// before the analysis sees it, so a process gone before the next interval or scrape keeps
// its command line, rank, job and pod (serve's daemon, top's own agent).
std::shared_ptr<Consumer> with_facts_first(std::shared_ptr<const sample::ProcessFacts> facts,
                                           std::shared_ptr<Consumer> head);

}  // namespace eacgm::node
