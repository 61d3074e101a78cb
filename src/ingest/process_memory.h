// Reading a traced process's memory from user space, for what the BPF program could
// not read (a string in a page not yet paged in: BPF cannot fault it in, this can).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace eacgm::ingest {

// The NUL-terminated string at `addr` in process `pid`, at most `max_len` bytes (a
// longer one is cut there). process_vm_readv, else pread on /proc/<pid>/mem (where the
// former is not allowed). nullopt when the memory cannot be read: the process exited,
// the address is not mapped, or the string runs into unreadable memory before its NUL.
std::optional<std::string> read_process_string(std::uint32_t pid, std::uint64_t addr,
                                               std::size_t max_len = 4096);

// Exactly `len` bytes at `addr` of process `pid` into `out` (the same two ways); false
// when any of them cannot be read.
bool read_process_bytes(std::uint32_t pid, std::uint64_t addr, void* out, std::size_t len);

}  // namespace eacgm::ingest
