// Enrichers: the stages a decoded call passes before any consumer sees it (kernel
// names, NCCL communicators, Python call pairing). Each stage fills in what it knows,
// may keep a record (a half of a Python call) and hand on others it makes, keeps its
// own counters, and forgets a process when it exits or execs. They run on the reader
// thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/call_event.h"
#include "core/counter_registry.h"

namespace eacgm::ingest {

// Where a stage hands on a call it made (the next stage, in the end the consumers).
class CallOut {
 public:
  virtual ~CallOut() = default;
  virtual void emit(const CallEvent& event) = 0;
};

// Where a call ends up after the last stage; it may take the event's contents (swap
// them out), leaving any valid state behind.
class CallSink {
 public:
  virtual ~CallSink() = default;
  virtual void take(CallEvent& event) = 0;
};

class Enricher {
 public:
  virtual ~Enricher() = default;
  virtual std::string_view name() const = 0;
  // Fills in what this stage knows about `event`. Returns false when the stage keeps
  // the event (it is not passed on); calls it makes go to `out`.
  virtual bool enrich(CallEvent& event, CallOut& out) = 0;
  // The process exec'd or exited: its state means nothing any more.
  virtual void forget(std::uint32_t pid) = 0;
  // The processes it keeps state for.
  virtual std::vector<std::uint32_t> pids() const = 0;
  // Declares the stage's counters; their readers may run on any thread.
  virtual void register_counters(CounterRegistry& registry) = 0;
};

// The stages in order: a call a stage makes goes through the stages after it.
class EnricherChain {
 public:
  EnricherChain() = default;
  // The stages' outlets point back at the chain, so a move re-points them.
  EnricherChain(EnricherChain&& other) noexcept;
  EnricherChain& operator=(EnricherChain&& other) noexcept;
  EnricherChain(const EnricherChain&) = delete;
  EnricherChain& operator=(const EnricherChain&) = delete;

  void add(std::unique_ptr<Enricher> stage);
  std::size_t size() const { return stages_.size(); }
  // Passes `event` through every stage; what comes out at the end goes to `sink`.
  void process(CallEvent& event, CallSink& sink);
  void forget(std::uint32_t pid);
  // Forgets every process for which `alive(pid)` is false; returns how many.
  template <typename Alive>
  std::size_t forget_unless(Alive alive) {
    std::vector<std::uint32_t> gone;
    for (const auto& s : stages_) {
      for (auto pid : s->pids()) {
        if (std::find(gone.begin(), gone.end(), pid) == gone.end() && !alive(pid)) gone.push_back(pid);
      }
    }
    for (auto pid : gone) forget(pid);
    return gone.size();
  }
  void register_counters(CounterRegistry& registry);

 private:
  // Hands what stage `next - 1` made to stage `next` (or the sink after the last).
  class StageOut final : public CallOut {
   public:
    StageOut(EnricherChain& chain, std::size_t next) : chain_(&chain), next_(next) {}
    void emit(const CallEvent& event) override;
    void rebind(EnricherChain& chain) { chain_ = &chain; }

   private:
    EnricherChain* chain_;
    std::size_t next_;
  };
  void run_from(std::size_t first, CallEvent& event);

  std::vector<std::unique_ptr<Enricher>> stages_;
  std::vector<std::unique_ptr<StageOut>> outs_;  // outs_[i]: what stage i makes
  std::vector<CallEvent> scratch_;               // scratch_[i]: a call stage i made
  CallSink* sink_ = nullptr;
};

}  // namespace eacgm::ingest
