// A small file read whole with read(2): for /proc files of other processes, which fail
// mid-read (ESRCH) when the process exits, where a stream iterator would throw.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace eacgm {

// Up to `limit` bytes of the file at `path`; nullopt when it cannot be opened or a read
// fails (a process gone, a directory). Never throws; the string holds only what was read.
std::optional<std::string> read_small_file(const std::string& path, std::size_t limit = 65536);

}  // namespace eacgm
