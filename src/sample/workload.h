// Workload: what a process belongs to beyond itself — its container, its Kubernetes pod
// and its batch job — for the labels of the API, /metrics, the store and the UI.
// The ids come from the process itself (its cgroup path and environment); the names
// from the node's kubelet (sample/pod_directory.h). Any field may be empty: unknown.
#pragma once

#include <string>
#include <vector>

namespace eacgm::sample {

struct Workload {
  std::string container_id;       // the runtime's container id (64 hex) from the cgroup path
  std::string pod_uid;            // the pod's UID (dashed form) from the cgroup path
  std::string pod;                // pod name, from the kubelet
  std::string namespace_;         // the pod's namespace, from the kubelet
  std::string container;          // container name within the pod, from the kubelet
  std::string job;                // batch job id: SLURM_JOB_ID, else TORCHELASTIC_RUN_ID
  std::string job_step;           // SLURM_STEP_ID when the job is Slurm's
  std::vector<std::string> gpus;  // the GPUs the kubelet gave its container (UUIDs or indices)

  bool in_pod() const { return !pod_uid.empty(); }
  bool operator==(const Workload&) const = default;
};

}  // namespace eacgm::sample
