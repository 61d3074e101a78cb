// read_small_file: open, read to the end or the limit, close; read_proc_comm: a comm file
// read with it.
#include "core/proc_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "core/unique_fd.h"

namespace eacgm {

std::optional<std::string> read_small_file(const std::string& path, std::size_t limit) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::string out;
  std::array<char, 4096> buf{};
  while (out.size() < limit) {
    const std::size_t want = std::min(buf.size(), limit - out.size());
    const ssize_t n = ::read(fd.get(), buf.data(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    out.append(buf.data(), static_cast<std::size_t>(n));
  }
  return out;
}

std::string read_proc_comm(const std::string& proc_root, std::string_view pid) {
  std::string comm = read_small_file(proc_root + "/" + std::string(pid) + "/comm", 64).value_or("");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return comm;
}

}  // namespace eacgm
