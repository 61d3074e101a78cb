// The size limit cut between lines, and buffered writes that count their failures.
#include "export/line_output.h"

#include <algorithm>
#include <cerrno>

namespace eacgm::exporting {

void LineOutput::write_lines(std::string_view pending) {
  std::string_view keep = pending;
  const std::uint64_t limit = max_bytes_ > reserved_ ? max_bytes_ - reserved_ : 0;
  if (max_bytes_ > 0 && (lines_not_written_ > 0 || written_ + pending.size() > limit)) {
    // Whole lines up to the limit; the rest is counted, never half-written.
    const std::uint64_t room = limit > written_ && lines_not_written_ == 0 ? limit - written_ : 0;
    const auto cut = room == 0 ? std::string_view::npos : pending.rfind('\n', room - 1);
    keep = cut == std::string_view::npos ? std::string_view{} : pending.substr(0, cut + 1);
    const auto rest = pending.substr(keep.size());
    const bool first = lines_not_written_ == 0;
    lines_not_written_ += static_cast<std::uint64_t>(std::count(rest.begin(), rest.end(), '\n'));
    if (first && lines_not_written_ > 0 && on_limit_) on_limit_(max_bytes_);
  }
  write_always(keep);
}

void LineOutput::write_always(std::string_view text) {
  if (text.empty() || reader_gone()) return;
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), out_) != text.size()) failed(errno);
  written_ += text.size();
}

void LineOutput::flush() {
  if (reader_gone()) return;
  errno = 0;
  if (std::fflush(out_) != 0) failed(errno);
}

void LineOutput::failed(int err) {
  if (err != EPIPE) {
    ++write_errors_;
    return;
  }
  reader_gone_.store(true, std::memory_order_relaxed);
  if (on_reader_gone_) on_reader_gone_();
}

}  // namespace eacgm::exporting
