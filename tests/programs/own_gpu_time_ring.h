// For programs that carry the hook (tests/programs, bench): this process's GPU-time ring
// header, mapped read-only (the hook's counters: timed launches, timing's cost), or nullptr
// with a line on stderr naming `who` and the path when the hook made no ring.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "core/gpu_time_ring.h"

namespace eacgm::test {

inline const gpu_time::Header* own_gpu_time_ring(const char* who) {
  const std::string path = "/dev/shm/" + std::string(gpu_time::kShmPrefix) + std::to_string(getpid());
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  void* base = fd < 0 ? MAP_FAILED : mmap(nullptr, gpu_time::kHeaderBytes, PROT_READ, MAP_SHARED, fd, 0);
  if (fd >= 0) close(fd);
  if (base == MAP_FAILED) {
    std::fprintf(stderr, "%s: the hook made no ring at %s\n", who, path.c_str());
    return nullptr;
  }
  return static_cast<const gpu_time::Header*>(base);
}

}  // namespace eacgm::test
