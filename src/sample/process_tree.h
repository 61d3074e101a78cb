// Which processes belong to a traced process tree, from the parent links in /proc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/proc_stat.h"

namespace eacgm::sample {

// Why stopping `pid` with SIGSTOP would be noticed by another process, or nullopt when
// it would not: a terminal's foreground job (its shell would report it stopped and take
// the terminal back) or a process under a debugger (TracerPid).
std::optional<std::string> stop_hazard(std::uint32_t pid, const std::string& proc_root = "/proc");

// The parent of `pid` from /proc/<pid>/stat (`proc_root` for tests); nullopt when the
// process is gone or the file cannot be read.
std::optional<std::uint32_t> parent_pid(std::uint32_t pid, const std::string& proc_root = "/proc");

// True when `pid` is one of `roots` or descends from one of them.
bool in_process_tree(std::uint32_t pid, const std::vector<int>& roots,
                     const std::string& proc_root = "/proc");

}  // namespace eacgm::sample
