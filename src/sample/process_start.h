// When a process started, as Unix time: its start in clock ticks since boot
// (/proc/<pid>/stat) plus the boot time (/proc/stat's `btime`).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace eacgm::sample {

// The boot time in the text of /proc/stat: its `btime` line, seconds since the epoch;
// nullopt when there is none or it holds no number.
std::optional<std::int64_t> parse_boot_time(std::string_view proc_stat);

// Unix ns of a process's start; nullopt when it is gone. The boot time is read once (0
// when /proc/stat has none: the start then counts from boot).
std::optional<std::int64_t> proc_start_ns(std::uint32_t pid);

}  // namespace eacgm::sample
