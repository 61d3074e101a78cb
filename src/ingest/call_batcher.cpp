// Decode into place, enrich, batch.
#include "ingest/call_batcher.h"

#include <utility>

namespace eacgm::ingest {

CallBatcher::CallBatcher(const probe::ProbeTable& table, EnricherChain chain,
                         std::shared_ptr<Consumer> consumer)
    : decoder_(table),
      chain_(std::move(chain)),
      consumer_(consumer ? std::move(consumer) : std::make_shared<ConsumerList>()),
      batch_(kBatch) {
  current_ = &batch_[0];
}

void CallBatcher::Sink::take(CallEvent& event) {
  if (&event == b_.current_) {
    b_.taken_ = true;
    return;
  }
  // A call a stage made while the current record is still being enriched: kept apart
  // until the record is done (its slot is not free yet).
  if (b_.made_count_ == b_.made_.size()) b_.made_.emplace_back();
  b_.made_[b_.made_count_++] = event;
}

void CallBatcher::advance() {
  if (++batched_ == batch_.size()) flush();
}

RecordKind CallBatcher::add(const void* data, std::size_t size) {
  current_ = &batch_[batched_];
  const RecordKind kind = decoder_.decode(data, size, *current_);
  if (kind != RecordKind::kCall) return kind;
  taken_ = false;
  made_count_ = 0;
  chain_.process(*current_, sink_);
  if (taken_) advance();
  for (std::size_t i = 0; i < made_count_; ++i) {
    std::swap(batch_[batched_], made_[i]);
    advance();
  }
  return kind;
}

void CallBatcher::flush() {
  if (batched_ == 0) return;
  consumer_->on_calls(std::span<const CallEvent>(batch_.data(), batched_));
  batched_ = 0;
}

}  // namespace eacgm::ingest
