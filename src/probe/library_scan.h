// Finding the libraries to probe: executable file mappings of running processes
// (/proc/<pid>/maps) and the dynamic loader's cache (/etc/ld.so.cache).
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/ld_cache.h"
#include "core/result.h"

namespace eacgm::probe {

struct MappedFile {
  std::string path;         // path as shown in /proc/<pid>/maps
  std::string open_path;    // openable from here: /proc/<pid>/root<path> across mount namespaces, else path
  std::uint64_t dev = 0;    // makedev(major, minor), comparable with file_identity()
  std::uint64_t inode = 0;  // identity: uprobes are per inode
  std::vector<int> pids;    // processes that map it executable
};

// Executable, file-backed mappings of the given pids (all processes when pids is empty);
// skips "(deleted)" and non-regular files; dedupes by (dev, inode). Processes that vanish
// mid-scan are skipped silently; permission errors are reported once in warnings.
struct MapsScan {
  std::vector<MappedFile> files;
  std::vector<std::string> warnings;
  // (dev, inode) of every executable file mapping seen, "(deleted)" and skipped ones
  // included: what is still in use, though not attachable by path.
  std::set<std::pair<std::uint64_t, std::uint64_t>> mapped;
};
MapsScan scan_maps(const std::vector<int>& pids = {});
// The warning for `denied` processes whose maps could not be read (EACCES/EPERM `err`
// of the first, `first_pid`): the errno text, what refuses root (the ptrace access
// check: CAP_SYS_PTRACE, dumpability, security modules) or a plain user, and that the
// pid may be another PID namespace's, a kernel thread's or an exited process's.
std::string maps_denied_warning(int denied, int first_pid, int err, bool as_root);
std::vector<MappedFile> scan_pid_maps(int pid);  // one process

using eacgm::CachedLibrary;
using eacgm::parse_ld_cache;

// /etc/ld.so.cache parsed directly ("glibc-ld.so.cache1.1", alone or after the old
// "ld.so-1.7.0" table); runs `ldconfig -p` only if that fails.
Result<std::vector<CachedLibrary>> ld_cache_libraries(const std::string& cache_path = "/etc/ld.so.cache");

// stat() -> (dev, inode), dev as makedev(major, minor) like MappedFile::dev.
Result<std::pair<std::uint64_t, std::uint64_t>> file_identity(const std::string& path);

}  // namespace eacgm::probe
