// libbpf's messages: kept per operation for its error to quote, or printed when
// debugging; and errnos in words.
#include "probe/libbpf_log.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <vector>

namespace eacgm::probe {

std::string errno_text(int err) { return std::strerror(err < 0 ? -err : err); }

namespace {

// libbpf's messages go to the capture open on the calling thread (libbpf logs
// synchronously, from the thread running the operation), or nowhere.
thread_local LibbpfLogCapture* t_capture = nullptr;
std::atomic<bool> g_libbpf_debug{false};

int capture_libbpf_log(enum libbpf_print_level level, const char* format, va_list args) {
  if (g_libbpf_debug.load(std::memory_order_relaxed)) return vfprintf(stderr, format, args);
  if (level == LIBBPF_DEBUG || t_capture == nullptr) return 0;
  char buf[1024];
  int n = vsnprintf(buf, sizeof(buf), format, args);
  if (n > 0) t_capture->append(std::string_view(buf, std::min(static_cast<std::size_t>(n), sizeof(buf) - 1)));
  return n;
}

}  // namespace

void set_libbpf_debug(bool on) { g_libbpf_debug.store(on, std::memory_order_relaxed); }

void route_libbpf_messages() { libbpf_set_print(capture_libbpf_log); }

LibbpfLogCapture::LibbpfLogCapture() : outer_(t_capture) { t_capture = this; }

LibbpfLogCapture::~LibbpfLogCapture() { t_capture = outer_; }

void LibbpfLogCapture::append(std::string_view text) {
  text_.append(text);
  if (text_.size() <= kMaxBytes) return;
  // Keep the latest whole lines: a failure's reason comes last.
  std::size_t cut = text_.size() - kMaxBytes;
  std::size_t eol = text_.find('\n', cut);
  text_.erase(0, eol == std::string::npos ? cut : eol + 1);
}

std::string LibbpfLogCapture::last_lines(std::size_t n) const {
  std::vector<std::string_view> lines;
  std::string_view rest(text_);
  while (!rest.empty()) {
    std::size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    if (!line.empty()) lines.push_back(line);
    rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 1);
  }
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) {
    out += "\n  libbpf: ";
    out += lines[i];
  }
  return out;
}

}  // namespace eacgm::probe
