// Formatting and buffered writing of the event stream.
#include "export/event_stream.h"

#include <string_view>

#include "export/event_format.h"
#include "export/gpu_lines.h"

namespace eacgm::exporting {

void EventStream::on_calls(std::span<const CallEvent> calls) {
  for (const auto& e : calls) {
    if (format_ == Format::kJsonLines) {
      append_jsonl(buf_, e);
    } else {
      append_text(buf_, e);
    }
  }
  if (buf_.size() >= (64u << 10)) flush();
}

void EventStream::on_gpu(const GpuSnapshot& s) {
  if (format_ == Format::kJsonLines) {
    append_gpu_jsonl(buf_, s);
  } else if (!last_text_gpu_ || s.time - *last_text_gpu_ >= text_gpu_period_) {
    append_gpu_text(buf_, s);
    last_text_gpu_ = s.time;
  }
}

void EventStream::flush() {
  output_.write_lines(std::string_view(buf_.data(), buf_.size()));
  buf_.clear();
  output_.flush();
}

void EventStream::on_end(const CounterValues&) { flush(); }

}  // namespace eacgm::exporting
