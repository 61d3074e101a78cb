// A file read whole with read(2): for /proc files of other processes, which fail mid-read
// (ESRCH) when the process exits, where a stream iterator would throw; a process's command
// name read that way; and the fields of /proc text, parsed without exceptions.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace eacgm {

// Up to `limit` bytes of the file at `path` into `out` (replaced): 0, or the errno of the
// open or of the read that failed (`out` then holds what was read before it), so that a
// caller can tell a process gone (ENOENT, ESRCH) from a file denied (EACCES, EPERM).
int read_file_into(const std::string& path, std::string& out, std::size_t limit = SIZE_MAX);

// Up to `limit` bytes of the file at `path`; nullopt when it cannot be opened or a read
// fails (a process gone, a directory). Never throws; the string holds only what was read.
std::optional<std::string> read_small_file(const std::string& path, std::size_t limit = 65536);

// `size` bytes at `offset` of the file at `path` (pread); nullopt when it cannot be opened
// or holds fewer bytes there.
std::optional<std::string> read_file_at(const std::string& path, std::uint64_t offset, std::size_t size);

// A process's command name (<proc_root>/<pid>/comm, without its newline); "" when it
// cannot be read (the process gone).
std::string read_proc_comm(const std::string& proc_root, std::string_view pid);
inline std::string read_proc_comm(std::uint32_t pid) { return read_proc_comm("/proc", std::to_string(pid)); }

// The next line of `text` (without its newline), `text` moved past it.
std::string_view next_line(std::string_view& text);

// The next field of `text` (fields are separated by spaces, tabs and newlines), `text`
// moved past it; "" when none is left.
std::string_view next_field(std::string_view& text);

// What follows `prefix` on the first line of `text` that starts with it ("CapEff:" in
// /proc/<pid>/status), without the newline; nullopt when no line does.
std::optional<std::string_view> line_after(std::string_view text, std::string_view prefix);

// `text` wholly as an integer in `base` (16: hex digits without "0x"); false, with `out`
// unchanged, when it is empty, not a number or out of T's range.
template <typename T>
bool parse_number(std::string_view text, T& out, int base = 10) {
  static_assert(std::is_integral_v<T>);
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  out = value;
  return true;
}

}  // namespace eacgm
