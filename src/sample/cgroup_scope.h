// CgroupScope: the cgroup v2 subtree a trace is limited to ([trace] cgroup): several agents
// share one machine, each tracing only its own tenant's (or test node's) processes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/unique_fd.h"

namespace eacgm::sample {

// The mount point of the cgroup v2 (unified) hierarchy in `mounts` (/proc/self/mounts'
// text); an error naming what to do when there is none (a cgroup v1-only machine).
Result<std::string> cgroup2_mount(std::string_view mounts);

// The process's cgroup v2 path from <proc_root>/<pid>/cgroup (its "0::" line, such as
// "/kubepods/pod1/c2"); nullopt when the process is gone or has none.
std::optional<std::string> process_cgroup(std::uint32_t pid, const std::string& proc_root = "/proc");

// Whether the cgroup `path` is `scope` or below it ("/a/b" is in "/a", "/ab" is not).
bool cgroup_within(std::string_view path, std::string_view scope);

class CgroupScope {
 public:
  // `where`: a cgroup v2 directory ("/sys/fs/cgroup/node-a"), or a path as
  // /proc/PID/cgroup writes it ("/node-a"), taken below the hierarchy's mount point.
  // Errors name the path and what to do (create it, mount cgroup v2).
  static Result<CgroupScope> open(const std::string& where, const std::string& proc_root = "/proc");

  const std::string& path() const { return path_; }            // "/node-a"
  const std::string& directory() const { return directory_; }  // "/sys/fs/cgroup/node-a"
  int fd() const { return fd_.get(); }                         // the directory, for BPF
  // Whether the process is in the subtree now; false once it is gone.
  bool contains(std::uint32_t pid) const;

 private:
  std::string path_;
  std::string directory_;
  std::string proc_root_;
  UniqueFd fd_;
};

}  // namespace eacgm::sample
