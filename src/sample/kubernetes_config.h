// [kubernetes]: naming the pods of traced processes (docs/kubernetes.md). A process's pod
// UID and container id come from its cgroup path whatever this says; names and GPU
// assignment from the kubelet's pod-resources socket and log directories.
#pragma once

#include <string>

namespace eacgm {
class ConfigSections;
}  // namespace eacgm

namespace eacgm::sample {

struct KubernetesConfig {
  bool enabled = true;  // false: no kubelet is asked, pods keep their UIDs only
  std::string pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::string log_root = "/var/log";  // its pods/ and containers/ name pods and containers
  double refresh_s = 30.0;            // both read again this often (and on an unknown pod)
  // /metrics: per-process series of processes in a named pod carry pod labels instead of
  // pid and comm, summed per container ("auto": so whenever pods are named; "pid": pid
  // labels always, with pod labels added).
  std::string process_series = "auto";
  bool operator==(const KubernetesConfig&) const = default;
};

// Adds [kubernetes] to the file's sections, read into `kubernetes`.
void add_kubernetes_section(ConfigSections& sections, KubernetesConfig& kubernetes);

}  // namespace eacgm::sample
