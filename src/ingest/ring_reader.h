// The one reader thread of the BPF ring buffer: sleeps in epoll until the kernel
// wakes it (or the poll timeout passes), decodes, and hands events to the sink.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include "core/call_event.h"
#include "core/result.h"
#include "ingest/kernel_names.h"
#include "ingest/nccl_comms.h"
#include "ingest/record_decoder.h"

struct ring_buffer;

namespace eacgm::ingest {

struct EventSink {
  std::function<void(const CallEvent&)> on_call;
  // Discovery hints; `stopped`: the kernel stopped the process until it is scanned
  // (the receiver must send SIGCONT).
  std::function<void(std::uint32_t pid, bool exec, bool stopped)> on_hint;
  std::function<void()> on_idle;  // after each poll round (flush outputs)
};

class RingReader {
 public:
  static Result<std::unique_ptr<RingReader>> create(int ringbuf_fd, const probe::ProbeTable& table,
                                                    EventSink sink, int poll_timeout_ms);
  ~RingReader();
  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;

  void start();
  // Drains what the kernel has queued, then stops the thread.
  void stop();
  DecodeCounters counters() const;
  KernelNameCounters kernel_name_counters() const;

 private:
  RingReader(const probe::ProbeTable& table, EventSink sink, int timeout)
      : decoder_(table), sink_(std::move(sink)), timeout_ms_(timeout) {}
  static int on_record(void* ctx, void* data, std::size_t size);
  void loop();
  void publish_counters();

  ring_buffer* rb_ = nullptr;
  RecordDecoder decoder_;
  NcclCommTable nccl_comms_;  // rank/size/id of NCCL calls, before sinks see them
  KernelNames kernel_names_;  // kernel names of launches, before sinks see them
  EventSink sink_;
  int timeout_ms_;
  CallEvent event_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::atomic<std::uint64_t> calls_{0}, hints_{0}, malformed_{0}, unknown_{0};
  mutable std::atomic<std::uint64_t> names_from_memory_{0}, names_unreadable_{0};
};

}  // namespace eacgm::ingest
