// A file read whole with read(2): for /proc files of other processes, which fail mid-read
// (ESRCH) when the process exits, where a stream iterator would throw; and a process's
// command name read that way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace eacgm {

// Up to `limit` bytes of the file at `path` into `out` (replaced): 0, or the errno of the
// open or of the read that failed (`out` then holds what was read before it), so that a
// caller can tell a process gone (ENOENT, ESRCH) from a file denied (EACCES, EPERM).
int read_file_into(const std::string& path, std::string& out, std::size_t limit = SIZE_MAX);

// Up to `limit` bytes of the file at `path`; nullopt when it cannot be opened or a read
// fails (a process gone, a directory). Never throws; the string holds only what was read.
std::optional<std::string> read_small_file(const std::string& path, std::size_t limit = 65536);

// A process's command name (<proc_root>/<pid>/comm, without its newline); "" when it
// cannot be read (the process gone).
std::string read_proc_comm(const std::string& proc_root, std::string_view pid);
inline std::string read_proc_comm(std::uint32_t pid) { return read_proc_comm("/proc", std::to_string(pid)); }

}  // namespace eacgm
