// PodResourcesLister.List over the kubelet's socket (see pod_resources_client.h).
#include "kubelet/pod_resources_client.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <cerrno>
#include <memory>

#include "podresources_v1.grpc.pb.h"

namespace eacgm::kubelet {

Result<std::vector<sample::PodContainerResources>> list_pod_resources(const std::string& socket_path,
                                                                      std::chrono::milliseconds deadline) {
  // One channel per call: a refresh is every 30 s at most, and a kubelet restart then
  // needs no reconnect logic here.
  auto channel = grpc::CreateChannel("unix://" + socket_path, grpc::InsecureChannelCredentials());
  auto stub = v1::PodResourcesLister::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  v1::ListPodResourcesRequest request;
  v1::ListPodResourcesResponse response;
  const grpc::Status status = stub->List(&context, request, &response);
  if (!status.ok()) {
    return make_error(fmt::format("pod-resources List on {}: {} (gRPC status {})", socket_path,
                                  status.error_message(), static_cast<int>(status.error_code())));
  }
  std::vector<sample::PodContainerResources> out;
  for (const auto& pod : response.pod_resources()) {
    for (const auto& c : pod.containers()) {
      sample::PodContainerResources r;
      r.namespace_ = pod.namespace_();
      r.pod = pod.name();
      r.container = c.name();
      for (const auto& d : c.devices()) {
        for (const auto& id : d.device_ids()) r.devices.push_back({d.resource_name(), id});
      }
      out.push_back(std::move(r));
    }
    if (pod.containers().empty()) {
      sample::PodContainerResources r;
      r.namespace_ = pod.namespace_();
      r.pod = pod.name();
      out.push_back(std::move(r));
    }
  }
  return out;
}

sample::PodResourcesList pod_resources_source(const std::string& socket_path,
                                              std::chrono::milliseconds deadline) {
  return [socket_path, deadline]() -> Result<std::vector<sample::PodContainerResources>> {
    // Asked at each refresh: a kubelet that starts after the agent is found.
    struct stat st {};
    if (::stat(socket_path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
      return make_errno_error(ENOENT, "no socket at " + socket_path);
    }
    return list_pod_resources(socket_path, deadline);
  };
}

}  // namespace eacgm::kubelet
