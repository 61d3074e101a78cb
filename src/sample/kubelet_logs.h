// Pod and container names from the kubelet's log directories, which every node has
// (the CRI logging layout): /var/log/pods/<namespace>_<pod>_<pod-uid>/<container>/ and
// the links /var/log/containers/<pod>_<namespace>_<container>-<container-id>.log. They
// join the ids a process's cgroup path gives (sample/cgroup_ids.h) to names; Kubernetes
// names (DNS-1123) hold no `_`, which makes the split exact.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace eacgm::sample {

struct PodRef {
  std::string namespace_;
  std::string pod;
  bool operator==(const PodRef&) const = default;
};

struct ContainerRef {
  std::string namespace_;
  std::string pod;
  std::string container;
  bool operator==(const ContainerRef&) const = default;
};

struct KubeletLogNames {
  std::map<std::string, PodRef, std::less<>> pods_by_uid;
  std::map<std::string, std::vector<std::string>, std::less<>> containers_of_uid;  // sorted names
  std::map<std::string, ContainerRef, std::less<>> containers_by_id;
};

// "<namespace>_<pod>_<uid>" (a /var/log/pods entry) -> the uid and the names.
std::optional<std::pair<std::string, PodRef>> parse_pod_log_dir(std::string_view name);
// "<pod>_<namespace>_<container>-<64 hex>.log" (a /var/log/containers entry) -> the id
// and the names.
std::optional<std::pair<std::string, ContainerRef>> parse_container_log_name(std::string_view name);

// Reads both directories under `log_root` (normally /var/log). Missing directories give
// empty tables; entries of other shapes are skipped. At most `max_entries` of each.
KubeletLogNames read_kubelet_log_names(const std::string& log_root, std::size_t max_entries = 65536);

}  // namespace eacgm::sample
