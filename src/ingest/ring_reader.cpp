// Ring-buffer consumption loop.
#include "ingest/ring_reader.h"

#include <bpf/libbpf.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "bpf/events.h"

namespace eacgm::ingest {

Result<std::unique_ptr<RingReader>> RingReader::create(int ringbuf_fd, const probe::ProbeTable& table,
                                                       EventSink sink, int poll_timeout_ms) {
  std::unique_ptr<RingReader> r(new RingReader(table, std::move(sink), poll_timeout_ms));
  r->rb_ = ring_buffer__new(ringbuf_fd, &RingReader::on_record, r.get(), nullptr);
  if (!r->rb_) {
    return make_error(fmt::format("cannot map the BPF ring buffer: {}", std::strerror(errno)));
  }
  return r;
}

RingReader::~RingReader() {
  stop();
  if (rb_) ring_buffer__free(rb_);
}

int RingReader::on_record(void* ctx, void* data, std::size_t size) {
  auto* self = static_cast<RingReader*>(ctx);
  switch (self->decoder_.decode(data, size, self->event_)) {
    case RecordKind::kCall:
      self->nccl_comms_.enrich(self->event_);
      self->kernel_names_.enrich(self->event_);
      if (self->sink_.on_call) self->sink_.on_call(self->event_);
      break;
    case RecordKind::kExecHint:
      self->kernel_names_.forget(self->event_.pid);  // a new image: old handles mean nothing
      self->nccl_comms_.forget(self->event_.pid);
      if (self->sink_.on_hint) self->sink_.on_hint(self->event_.pid, true, false);
      break;
    case RecordKind::kLibraryHint: {
      // decode() checked the size, so the flags can be read from the record itself.
      bool stopped = (static_cast<const eacgm_record*>(data)->flags & EACGM_REC_STOPPED) != 0;
      if (self->sink_.on_hint) self->sink_.on_hint(self->event_.pid, false, stopped);
      break;
    }
    default:
      break;
  }
  return 0;
}

void RingReader::start() {
  thread_ = std::thread([this] { loop(); });
}

void RingReader::loop() {
  while (!stop_.load(std::memory_order_relaxed)) {
    // The kernel wakes us only past a fill threshold; after a timeout, take what
    // is there so no record waits longer than the poll timeout.
    int n = ring_buffer__poll(rb_, timeout_ms_);
    if (n == 0) ring_buffer__consume(rb_);
    publish_counters();
    if (sink_.on_idle) sink_.on_idle();
  }
  ring_buffer__consume(rb_);
  if (sink_.on_idle) sink_.on_idle();
  publish_counters();
}

// Relaxed: readers want a recent value, and stop()'s join orders the final one.
void RingReader::publish_counters() {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const auto& c = decoder_.counters();
  calls_.store(c.calls, kRelaxed);
  hints_.store(c.hints, kRelaxed);
  malformed_.store(c.malformed, kRelaxed);
  unknown_.store(c.unknown_probe, kRelaxed);
  const auto& k = kernel_names_.counters();
  names_from_memory_.store(k.from_memory, kRelaxed);
  names_unreadable_.store(k.unreadable, kRelaxed);
}

void RingReader::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  thread_.join();
}

DecodeCounters RingReader::counters() const {
  DecodeCounters c;
  c.calls = calls_.load();
  c.hints = hints_.load();
  c.malformed = malformed_.load();
  c.unknown_probe = unknown_.load();
  return c;
}

KernelNameCounters RingReader::kernel_name_counters() const {
  KernelNameCounters k;
  k.from_memory = names_from_memory_.load();
  k.unreadable = names_unreadable_.load();
  return k;
}

}  // namespace eacgm::ingest
