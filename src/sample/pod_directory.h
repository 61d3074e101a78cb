// PodDirectory: names a process's pod and container, and says which GPUs each container
// was given and which pod holds each GPU, from two node-local sources:
//   - the kubelet's pod-resources API (PodResourcesLister.List on the kubelet's socket;
//     the gRPC client is src/kubelet/, handed in as a function): every pod on the node by
//     namespace/name, its containers and the devices each was allocated;
//   - the kubelet's log directories (sample/kubelet_logs.h): pod UID -> namespace/name,
//     container id -> container name — the join between a process's cgroup ids and the
//     pod-resources names, which carry no UID.
// A process whose pod the logs do not know is named by its HOSTNAME (a pod's hostname is
// its name) when exactly one listed pod has that name. Both are read again every
// `refresh` and, at most every `min_refresh`, when a process of an unknown pod UID asks.
// Without the socket the logs still name pods (no GPU assignment), and the first process
// in a pod gets one notice saying so. Tables are replaced whole on each refresh, so a
// pod that is gone leaves no name behind.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sample/kubelet_logs.h"
#include "sample/workload.h"

namespace eacgm::sample {

// One container as the pod-resources API lists it.
struct PodContainerResources {
  std::string namespace_;
  std::string pod;
  std::string container;
  struct Device {
    std::string resource;  // "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", ...
    std::string id;        // "GPU-<uuid>", "MIG-<uuid>", "GPU-<uuid>::<replica>" or an index
  };
  std::vector<Device> devices;
};
using PodResourcesList = std::function<Result<std::vector<PodContainerResources>>()>;

struct PodDirectoryOptions {
  std::string log_root = "/var/log";
  std::chrono::milliseconds refresh{30000};
  std::chrono::milliseconds min_refresh{2000};
  // Resource names whose devices are GPUs (a prefix match: "nvidia.com/" covers MIG
  // profiles, "nvidia.com/gpu.shared" of time-slicing renames, ...).
  std::vector<std::string> gpu_resource_prefixes{"nvidia.com/"};
};

// The GPU part of a device id: "GPU-<uuid>::3" (a time-slicing replica) -> "GPU-<uuid>".
std::string gpu_of_device_id(std::string_view id);

class PodDirectory {
 public:
  using Clock = std::chrono::steady_clock;
  // `list` may be empty, or fail with ENOENT (no kubelet socket): names then come from the
  // logs alone. `notice` gets one-line messages (a failing socket, once until it answers
  // again; no socket, once, when the first process in a pod is seen).
  PodDirectory(PodResourcesList list, PodDirectoryOptions options, std::function<void(std::string)> notice,
               std::function<Clock::time_point()> now = Clock::now);

  // Fills pod, namespace_, container and gpus of `w` from its container_id and pod_uid;
  // `hostname` is the process's HOSTNAME. Any thread.
  void name(Workload& w, std::string_view hostname);
  // The GPUs (device ids with the replica suffix cut) the container was allocated.
  std::vector<std::string> gpus_of(const Workload& w);
  // The containers allocated a GPU, by its UUID or its index ("GPU-..." / "MIG-..." / "0").
  std::vector<ContainerRef> holders_of_gpu(std::string_view uuid, unsigned index);
  // Reads both sources now.
  void refresh();

  struct Stats {
    std::uint64_t refreshes = 0;
    std::uint64_t list_failures = 0;
    std::size_t pods = 0;         // listed by the kubelet
    std::size_t logged_pods = 0;  // known from the logs
    bool socket_answered = false;
  };
  Stats stats() const;

 private:
  struct Tables {
    KubeletLogNames logs;
    std::vector<PodContainerResources> listed;
  };
  std::shared_ptr<const Tables> tables_for(std::string_view uid);
  std::shared_ptr<const Tables> current() const;
  void name_only(Workload& w, std::string_view hostname);
  bool is_gpu(std::string_view resource) const;

  PodResourcesList list_;
  PodDirectoryOptions options_;
  std::function<void(std::string)> notice_;
  std::function<Clock::time_point()> now_;
  std::mutex refresh_mutex_;  // one refresh at a time
  mutable std::mutex mutex_;  // tables_, stats_, last_refresh_
  std::shared_ptr<const Tables> tables_;
  Clock::time_point last_refresh_{};
  bool refreshed_ = false;
  bool list_failing_ = false;
  bool told_no_socket_ = false;
  bool socket_absent_ = false;
  Stats stats_;
};

}  // namespace eacgm::sample
