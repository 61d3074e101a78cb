// A client of the kubelet's pod-resources API (gRPC PodResourcesLister.List over the
// kubelet's Unix socket, Debian's gRPC): every pod on the node with its containers and
// the devices each was allocated, for sample::PodDirectory.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/result.h"
#include "sample/pod_directory.h"

namespace eacgm::kubelet {

inline constexpr const char* kDefaultPodResourcesSocket = "/var/lib/kubelet/pod-resources/kubelet.sock";

// One List call on the socket at `socket_path` (a file path, not a URI). Fails, with a
// message naming the socket, when it is absent, refuses, or does not answer within
// `deadline`.
Result<std::vector<sample::PodContainerResources>> list_pod_resources(const std::string& socket_path,
                                                                      std::chrono::milliseconds deadline);

// list_pod_resources as a PodResourcesList; while no socket is at `socket_path` it fails
// with ENOENT, which PodDirectory takes as "no kubelet" (pods named from the logs alone).
sample::PodResourcesList pod_resources_source(
    const std::string& socket_path, std::chrono::milliseconds deadline = std::chrono::milliseconds(1000));

}  // namespace eacgm::kubelet
