// read_file_into and read_small_file: open, read to the end or the limit, close;
// read_file_at: a pread; read_proc_comm: a comm file read with them; the field readers.
#include "core/proc_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/unique_fd.h"

namespace eacgm {

int read_file_into(const std::string& path, std::string& out, std::size_t limit) {
  out.clear();
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return errno;
  constexpr std::size_t kChunk = std::size_t{64} * 1024;
  while (out.size() < limit) {
    const std::size_t had = out.size();
    out.resize(had + std::min(kChunk, limit - had));
    const ssize_t n = ::read(fd.get(), out.data() + had, out.size() - had);
    out.resize(had + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) break;
  }
  return 0;
}

std::optional<std::string> read_small_file(const std::string& path, std::size_t limit) {
  std::string out;
  if (read_file_into(path, out, limit) != 0) return std::nullopt;
  out.shrink_to_fit();  // a short file under a large limit keeps no large buffer
  return out;
}

std::optional<std::string> read_file_at(const std::string& path, std::uint64_t offset, std::size_t size) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::string out(size, '\0');
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::pread(fd.get(), out.data() + got, size - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    got += static_cast<std::size_t>(n);
  }
  return out;
}

std::string read_proc_comm(const std::string& proc_root, std::string_view pid) {
  std::string comm = read_small_file(proc_root + "/" + std::string(pid) + "/comm", 64).value_or("");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return comm;
}

std::string_view next_field(std::string_view& text) {
  constexpr std::string_view kBlanks = " \t\n";
  const std::size_t start = text.find_first_not_of(kBlanks);
  if (start == std::string_view::npos) {
    text = {};
    return {};
  }
  text.remove_prefix(start);
  const std::size_t end = text.find_first_of(kBlanks);
  const std::string_view field = text.substr(0, end);
  text = end == std::string_view::npos ? std::string_view{} : text.substr(end);
  return field;
}

std::string_view next_line(std::string_view& text) {
  const std::size_t eol = text.find('\n');
  const std::string_view line = text.substr(0, eol);
  text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
  return line;
}

std::optional<std::string_view> line_after(std::string_view text, std::string_view prefix) {
  while (!text.empty()) {
    const std::string_view line = next_line(text);
    if (line.starts_with(prefix)) return line.substr(prefix.size());
  }
  return std::nullopt;
}

}  // namespace eacgm
