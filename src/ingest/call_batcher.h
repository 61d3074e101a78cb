// CallBatcher: the reader's per-record work, apart from the ring buffer. Decodes each
// record straight into the next slot of a batch, passes calls through the enricher
// chain and hands full batches (and, on flush, partial ones) to the consumer. Calls a
// stage makes (Python pairing) are copied into the batch after the record that made
// them. One thread only.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/consumer.h"
#include "ingest/enricher.h"
#include "ingest/record_decoder.h"

namespace eacgm::ingest {

class CallBatcher {
 public:
  static constexpr std::size_t kBatch = 256;

  CallBatcher(const probe::ProbeTable& table, EnricherChain chain, std::shared_ptr<Consumer> consumer);
  CallBatcher(const CallBatcher&) = delete;
  CallBatcher& operator=(const CallBatcher&) = delete;

  // One record as the kernel wrote it. For hints, `last()` holds the decoded pid.
  RecordKind add(const void* data, std::size_t size);
  // Hands what is batched to the consumer.
  void flush();

  const CallEvent& last() const { return *current_; }
  EnricherChain& chain() { return chain_; }
  Consumer& consumer() { return *consumer_; }
  const DecodeCounters& counters() const { return decoder_.counters(); }

 private:
  class Sink final : public CallSink {
   public:
    explicit Sink(CallBatcher& b) : b_(b) {}
    void take(CallEvent& event) override;

   private:
    CallBatcher& b_;
  };
  void advance();

  RecordDecoder decoder_;
  EnricherChain chain_;
  std::shared_ptr<Consumer> consumer_;
  Sink sink_{*this};
  std::vector<CallEvent> batch_;
  std::size_t batched_ = 0;
  CallEvent* current_ = nullptr;  // the slot being decoded and enriched
  bool taken_ = false;            // the chain passed the current record on
  std::vector<CallEvent> made_;   // calls the stages made for the current record
  std::size_t made_count_ = 0;
};

}  // namespace eacgm::ingest
