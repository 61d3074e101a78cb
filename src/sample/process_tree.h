// Which processes belong to a traced process tree, from the parent links in /proc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace eacgm {

// The parent of `pid` from /proc/<pid>/stat (`proc_root` for tests); nullopt when the
// process is gone or the file cannot be read.
std::optional<std::uint32_t> parent_pid(std::uint32_t pid, const std::string& proc_root = "/proc");

// True when `pid` is one of `roots` or descends from one of them.
bool in_process_tree(std::uint32_t pid, const std::vector<int>& roots,
                     const std::string& proc_root = "/proc");

}  // namespace eacgm
