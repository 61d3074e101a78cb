// A stand-in for the kubelet in the Kubernetes tests: the real pod-resources API (the
// same proto and gRPC service the agent's client calls, PodResourcesLister.List) served
// on a Unix socket by the test, with the pods the test sets, and the kubelet's log
// directories (/var/log/pods, /var/log/containers) laid out under a folder of the test's.
#pragma once

#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "podresources_v1.grpc.pb.h"

namespace eacgm::test {

struct FakePod {
  std::string namespace_, name, uid;
  struct Container {
    std::string name, id;           // id: the runtime's 64-hex id ("" not logged)
    std::vector<std::string> gpus;  // device ids of nvidia.com/gpu
  };
  std::vector<Container> containers;
  bool logged = true;  // has its /var/log/pods directory
};

class FakeKubelet final : public v1::PodResourcesLister::Service {
 public:
  FakeKubelet(std::string socket, std::string log_root)
      : socket_(std::move(socket)), log_root_(std::move(log_root)) {
    std::filesystem::create_directories(log_root_ + "/pods");
    std::filesystem::create_directories(log_root_ + "/containers");
    grpc::ServerBuilder b;
    b.AddListeningPort("unix://" + socket_, grpc::InsecureServerCredentials());
    b.RegisterService(this);
    server_ = b.BuildAndStart();
  }
  ~FakeKubelet() override {
    if (server_) server_->Shutdown();
  }
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;

  bool serving() const { return server_ != nullptr; }
  int lists() const {
    std::lock_guard<std::mutex> l(mutex_);
    return lists_;
  }

  // The pods now: the listing and the log directories are replaced.
  void set_pods(std::vector<FakePod> pods) {
    namespace fs = std::filesystem;
    for (const auto& e : fs::directory_iterator(log_root_ + "/pods")) fs::remove_all(e.path());
    for (const auto& e : fs::directory_iterator(log_root_ + "/containers")) fs::remove(e.path());
    for (const auto& p : pods) {
      if (!p.logged) continue;
      for (const auto& c : p.containers) {
        fs::create_directories(log_root_ + "/pods/" + p.namespace_ + "_" + p.name + "_" + p.uid + "/" +
                               c.name);
        if (!c.id.empty()) {
          std::ofstream(log_root_ + "/containers/" + p.name + "_" + p.namespace_ + "_" + c.name + "-" + c.id +
                        ".log")
              << "";
        }
      }
    }
    std::lock_guard<std::mutex> l(mutex_);
    pods_ = std::move(pods);
  }

  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* response) override {
    std::lock_guard<std::mutex> l(mutex_);
    ++lists_;
    for (const auto& p : pods_) {
      auto* pr = response->add_pod_resources();
      pr->set_name(p.name);
      pr->set_namespace_(p.namespace_);
      for (const auto& c : p.containers) {
        auto* cr = pr->add_containers();
        cr->set_name(c.name);
        if (c.gpus.empty()) continue;
        auto* d = cr->add_devices();
        d->set_resource_name("nvidia.com/gpu");
        for (const auto& g : c.gpus) d->add_device_ids(g);
      }
    }
    return grpc::Status::OK;
  }

 private:
  std::string socket_, log_root_;
  std::unique_ptr<grpc::Server> server_;
  mutable std::mutex mutex_;
  std::vector<FakePod> pods_;
  int lists_ = 0;
};

}  // namespace eacgm::test
