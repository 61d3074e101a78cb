// Formatting and buffered writing of the event stream.
#include "export/event_stream.h"

#include <algorithm>
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
  if (buf_.size() > 0) {
    std::string_view pending(buf_.data(), buf_.size());
    std::string_view keep = pending;
    if (max_bytes_ > 0 && (lines_not_written_ > 0 || written_ + pending.size() > max_bytes_)) {
      // Whole lines up to the limit; the rest is counted, never half-written. Once a
      // line was left out nothing more is written, so the output is a prefix of the
      // stream (a shorter later line would otherwise fill the room behind a gap).
      const std::uint64_t room = max_bytes_ > written_ && lines_not_written_ == 0 ? max_bytes_ - written_ : 0;
      const auto cut = room == 0 ? std::string_view::npos : pending.rfind('\n', room - 1);
      keep = cut == std::string_view::npos ? std::string_view{} : pending.substr(0, cut + 1);
      const auto rest = pending.substr(keep.size());
      const bool first = lines_not_written_ == 0;
      lines_not_written_ += static_cast<std::uint64_t>(std::count(rest.begin(), rest.end(), '\n'));
      if (first && lines_not_written_ > 0 && on_limit_) on_limit_(max_bytes_);
    }
    if (!keep.empty()) {
      if (std::fwrite(keep.data(), 1, keep.size(), out_) != keep.size()) ++write_errors_;
      written_ += keep.size();
    }
    buf_.clear();
  }
  if (std::fflush(out_) != 0) ++write_errors_;
}

void EventStream::on_end(const CounterValues&) { flush(); }

}  // namespace eacgm::exporting
