// LineOutput: whole lines to a FILE under an optional size limit (--max-size), with the
// bytes written, the lines left out and the failed writes counted; streams share it.
#pragma once

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

  std::uint64_t write_errors() const { return write_errors_; }
  std::uint64_t bytes_written() const { return written_; }
  std::uint64_t lines_not_written() const { return lines_not_written_; }

 private:
  FILE* out_;
  std::uint64_t max_bytes_;
  std::uint64_t reserved_;
  std::function<void(std::uint64_t)> on_limit_;
  std::uint64_t write_errors_ = 0;
  std::uint64_t written_ = 0;
  std::uint64_t lines_not_written_ = 0;
};

}  // namespace eacgm::exporting
