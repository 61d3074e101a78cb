// The container and Kubernetes pod a process runs in, read from its cgroup path
// (/proc/<pid>/cgroup): the kubelet names a pod's cgroup after the pod's UID and the
// runtime names a container's after its id, under either cgroup driver (cgroupfs:
// `/kubepods/burstable/pod<uid>/<id>`; systemd: `/kubepods.slice/kubepods-burstable.slice/
// kubepods-burstable-pod<uid with _>.slice/cri-containerd-<id>.scope`), cgroup v1 or v2,
// with containerd, CRI-O or Docker, and Docker or Podman outside Kubernetes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace eacgm::sample {

struct CgroupIds {
  std::string container_id;  // 64 lower-case hex; "" outside a container
  std::string pod_uid;       // dashed (8-4-4-4-12) or a static pod's 32-hex hash; "" outside a pod
  std::string qos;           // "guaranteed", "burstable", "besteffort"; "" outside a pod
  std::string runtime;       // "containerd", "crio", "docker", "podman"; "" when the path does not say

  bool operator==(const CgroupIds&) const = default;
};

// A pod UID as the kubelet writes it: 8-4-4-4-12 lower-case hex with `-` (cgroupfs,
// /var/log/pods) or `_` (systemd slice names), or the 32-hex hash it gives a static
// pod. Returned dashed; "" when `s` is none of those.
std::string canonical_pod_uid(std::string_view s);

// Parses the content of /proc/<pid>/cgroup. Under cgroup v1 any hierarchy's line that
// names the container will do; a line naming a pod wins over one that does not. CRI-O's
// `crio-conmon-<id>.scope` holds the container's monitor, not the container: it gives
// the pod but no container id.
CgroupIds parse_cgroup_ids(std::string_view cgroup_text);

// Reads and parses /proc/<pid>/cgroup (under `proc_root`); empty ids when the process is
// gone or the file cannot be read.
CgroupIds read_cgroup_ids(std::uint32_t pid, std::string_view proc_root = "/proc");

}  // namespace eacgm::sample
