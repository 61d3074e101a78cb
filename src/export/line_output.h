// LineOutput: whole lines to a FILE under an optional size limit (--max-size), with the
// bytes written, the lines left out and the failed writes counted; streams share it.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string_view>
#include <utility>

namespace eacgm::exporting {

class LineOutput {
 public:
  // `max_bytes`: once this much is written, further lines are counted, not written, and
  // `on_limit` is told once; 0: no limit. `reserved`: bytes of the limit kept for what
  // write_always adds at the end (a closing bracket), so the whole stays within it.
  LineOutput(FILE* out, std::uint64_t max_bytes, std::function<void(std::uint64_t max_bytes)> on_limit = {},
             std::uint64_t reserved = 0)
      : out_(out), max_bytes_(max_bytes), reserved_(reserved), on_limit_(std::move(on_limit)) {}

  // Writes the whole lines of `pending` (each ending in '\n') that fit the limit. Once a
  // line was left out nothing more is written, so the output is a prefix of the stream
  // (a shorter later line would otherwise fill the room behind a gap).
  void write_lines(std::string_view pending);
  // Writes `text` whatever the limit (a format's opening and closing).
  void write_always(std::string_view text);
  // fflush, counting a failure as a failed write.
  void flush();

  // Told once, on the writing thread, when a write finds the reader gone (EPIPE: the
  // other end of a pipe closed, as `| head` does); nothing more is written after it, and
  // it is not a failed write.
  void set_on_reader_gone(std::function<void()> on_reader_gone) {
    on_reader_gone_ = std::move(on_reader_gone);
  }
  // Any thread.
  bool reader_gone() const { return reader_gone_.load(std::memory_order_relaxed); }

  std::uint64_t write_errors() const { return write_errors_; }
  std::uint64_t bytes_written() const { return written_; }
  std::uint64_t lines_not_written() const { return lines_not_written_; }

 private:
  FILE* out_;
  std::uint64_t max_bytes_;
  std::uint64_t reserved_;
  std::function<void(std::uint64_t)> on_limit_;
  std::function<void()> on_reader_gone_;
  std::atomic<bool> reader_gone_{false};
  // A failed write or flush: the reader gone (EPIPE), or a failure to count.
  void failed(int err);
  std::uint64_t write_errors_ = 0;
  std::uint64_t written_ = 0;
  std::uint64_t lines_not_written_ = 0;
};

}  // namespace eacgm::exporting
