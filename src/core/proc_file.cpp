// read_file_into and read_small_file: open, read to the end or the limit, close;
// read_proc_comm: a comm file read with them.
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

std::string read_proc_comm(const std::string& proc_root, std::string_view pid) {
  std::string comm = read_small_file(proc_root + "/" + std::string(pid) + "/comm", 64).value_or("");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return comm;
}

}  // namespace eacgm
