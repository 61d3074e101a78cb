// The file mappings of traced processes, read from /proc/<pid>/maps, and kept for a
// while after the process is gone: a short-lived program's records are often decoded
// after it exited, and its kernel names are then read from the files it had mapped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace eacgm::ingest {

struct FileMapping {
  std::uint64_t start = 0, end = 0, offset = 0;
  bool executable = false;
  std::string path;       // as shown in /proc/<pid>/maps
  std::string open_path;  // through /proc/<pid>/root (another mount namespace's files)
};
using ProcessMappings = std::vector<FileMapping>;

// File-backed mappings of `pid` (not "(deleted)" ones); nullopt when the maps cannot be
// read (the process is gone).
std::optional<ProcessMappings> read_process_mappings(std::uint32_t pid);

// The NUL-terminated string at `addr` of a process that mapped `maps`, read from the
// mapped file itself (a program's .rodata), at most `max_len` bytes; nullopt when no
// file mapping covers `addr` or the file cannot be read there.
std::optional<std::string> read_mapped_file_string(const ProcessMappings& maps, std::uint64_t addr,
                                                   std::size_t max_len);

// Mappings remembered per process, taken while the process was known to be alive (at
// its discovery hints, when a launched or --pid process is stopped until its libraries
// are attached). The session writes, the reader thread reads: one lock, taken only on
// hints and on lookups for processes whose own /proc entry is gone.
class ProcessMapsCache {
 public:
  explicit ProcessMapsCache(std::size_t max_processes = 256) : max_processes_(max_processes) {}
  // Reads the process's mappings now and keeps them (replacing older ones of that pid).
  void remember(std::uint32_t pid);
  std::shared_ptr<const ProcessMappings> find(std::uint32_t pid) const;

 private:
  std::size_t max_processes_;
  mutable std::mutex mutex_;
  std::map<std::uint32_t, std::shared_ptr<const ProcessMappings>> maps_;
  std::deque<std::uint32_t> order_;  // oldest first
};

}  // namespace eacgm::ingest
