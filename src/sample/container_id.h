// The container a process runs in, read from its /proc/<pid>/cgroup (the id that Docker,
// containerd and CRI-O put in the cgroup path; container_id_from_cgroup parses it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace eacgm::sample {

// The 64-hex container id of a process; nullopt when the process is in no container or
// its cgroup file cannot be read (it has exited).
std::optional<std::string> read_container_id(std::uint32_t pid);

}  // namespace eacgm::sample
