// EventStream: the trace as it happens, one line per call and per GPU sample (JSON
// Lines or text), buffered and written in large chunks from the output thread.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>

#include "core/consumer.h"
#include "export/line_output.h"

namespace eacgm::exporting {

class EventStream final : public Consumer {
 public:
  enum class Format { kJsonLines, kText };
  // `text_gpu_period`: text shows the GPUs at most this often (JSON Lines: every pass).
  // `max_bytes`: the stream stops writing (whole lines only) once it has written this
  // much, counts what it leaves out, and tells `on_limit` once; 0: no limit.
  EventStream(FILE* out, Format format, std::chrono::nanoseconds text_gpu_period, std::uint64_t max_bytes = 0,
              std::function<void(std::uint64_t max_bytes)> on_limit = {})
      : output_(out, max_bytes, std::move(on_limit)), format_(format), text_gpu_period_(text_gpu_period) {}

  void on_calls(std::span<const CallEvent> calls) override;
  void on_gpu(const GpuSnapshot& snapshot) override;
  void flush() override;
  void on_end(const CounterValues& counters) override;

  // What was written, left out at the size limit and failed to write; read after the trace.
  const LineOutput& output() const { return output_; }
  LineOutput& output() { return output_; }

 private:
  LineOutput output_;
  Format format_;
  std::chrono::nanoseconds text_gpu_period_;
  std::optional<std::chrono::system_clock::time_point> last_text_gpu_;
  fmt::memory_buffer buf_;
};

}  // namespace eacgm::exporting
