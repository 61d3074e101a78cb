// Process memory reads, a chunk at a time so no read straddles a page boundary: a
// string that ends just before an unmapped page still reads whole.
#include "ingest/process_memory.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>

#include "core/unique_fd.h"

namespace eacgm::ingest {
namespace {

// No page is smaller, so a chunk aligned to this never spans two pages.
constexpr std::size_t kChunk = 4096;

class MemFile {
 public:
  explicit MemFile(std::uint32_t pid) {
    std::string path = "/proc/" + std::to_string(pid) + "/mem";
    fd_.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  }
  ssize_t read(char* buf, std::size_t len, std::uint64_t at) const {
    if (!fd_ || at > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max())) return -1;
    return ::pread(fd_.get(), buf, len, static_cast<off_t>(at));
  }

 private:
  UniqueFd fd_;
};

// One read of [at, at + len) into buf: process_vm_readv, or /proc/<pid>/mem where that
// call is refused (`mem` is opened then, and used for the reads that follow).
ssize_t read_once(std::uint32_t pid, std::optional<MemFile>& mem, char* buf, std::size_t len,
                  std::uint64_t at) {
  ssize_t n = -1;
  if (!mem) {
    iovec local{buf, len};
    // NOLINTNEXTLINE(performance-no-int-to-ptr): an address in the other process
    iovec remote{reinterpret_cast<void*>(at), len};
    n = ::process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0);
    // ESRCH: the process is gone; EFAULT: nothing mapped there. Anything else is
    // the call itself being refused, which /proc/<pid>/mem may still allow.
    if (n < 0 && errno != ESRCH && errno != EFAULT) mem.emplace(pid);
  }
  if (mem) n = mem->read(buf, len, at);
  return n;
}

}  // namespace

bool read_process_bytes(std::uint32_t pid, std::uint64_t addr, void* out, std::size_t len) {
  if (pid == 0 || addr == 0 || addr + len < addr) return false;
  std::optional<MemFile> mem;
  auto* dst = static_cast<char*>(out);
  std::size_t done = 0;
  while (done < len) {
    const ssize_t n = read_once(pid, mem, dst + done, len - done, addr + done);
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<std::string> read_process_string(std::uint32_t pid, std::uint64_t addr, std::size_t max_len) {
  if (pid == 0 || addr == 0) return std::nullopt;
  std::string out;
  std::array<char, kChunk> buf{};
  std::optional<MemFile> mem;  // opened once process_vm_readv is refused (seccomp, no syscall)
  while (out.size() < max_len) {
    const std::uint64_t at = addr + out.size();
    if (at < addr) return std::nullopt;  // wrapped past the end of the address space
    const std::size_t len = std::min<std::size_t>(kChunk - (at % kChunk), max_len - out.size());
    const ssize_t n = read_once(pid, mem, buf.data(), len, at);
    if (n <= 0) return std::nullopt;
    const auto got = static_cast<std::size_t>(n);
    if (const void* nul = std::memchr(buf.data(), '\0', got)) {
      out.append(buf.data(), static_cast<const char*>(nul) - buf.data());
      return out;
    }
    out.append(buf.data(), got);  // a short read: the next one says whether more is readable
  }
  return out;
}

}  // namespace eacgm::ingest
