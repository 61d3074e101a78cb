// libbpf's messages during an operation, kept so that its error can quote them, and
// errnos and libbpf errors in words.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace eacgm::probe {

// Prints every libbpf message (verifier logs included) to stderr as it comes, instead of
// keeping them for errors: the program's edge sets it from EACGM_LIBBPF_DEBUG. libbpf's
// print callback is one per process, and so is this switch.
void set_libbpf_debug(bool on);

// Makes libbpf's print callback the one that feeds LibbpfLogCapture (or stderr, with
// set_libbpf_debug): BpfTracer::open sets it before its first libbpf call.
void route_libbpf_messages();

// libbpf's messages during one operation (load, attach), kept rather than printed so
// that operation's error can quote them. Captures on the creating thread until
// destroyed (nesting restores the outer capture); bounded, keeping the latest lines.
class LibbpfLogCapture {
 public:
  LibbpfLogCapture();
  ~LibbpfLogCapture();
  LibbpfLogCapture(const LibbpfLogCapture&) = delete;
  LibbpfLogCapture& operator=(const LibbpfLogCapture&) = delete;

  static constexpr std::size_t kMaxBytes = 16u << 10;
  void append(std::string_view text);
  const std::string& text() const { return text_; }
  // The last `n` lines, each as "\n  libbpf: LINE" (empty when nothing was logged).
  std::string last_lines(std::size_t n = 3) const;

 private:
  std::string text_;
  LibbpfLogCapture* outer_ = nullptr;
};

// An errno or a libbpf error (a negated errno) in words.
std::string errno_text(int err);

}  // namespace eacgm::probe
