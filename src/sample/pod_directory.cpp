// Pod and container names, and GPU assignment, from the kubelet (see pod_directory.h).
#include "sample/pod_directory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <utility>

namespace eacgm::sample {

std::string gpu_of_device_id(std::string_view id) {
  const std::size_t replica = id.find("::");
  return std::string(id.substr(0, replica));
}

PodDirectory::PodDirectory(PodResourcesList list, PodDirectoryOptions options,
                           std::function<void(std::string)> notice, std::function<Clock::time_point()> now)
    : list_(std::move(list)),
      options_(std::move(options)),
      notice_(std::move(notice)),
      now_(std::move(now)),
      tables_(std::make_shared<Tables>()) {}

void PodDirectory::refresh() {
  const std::lock_guard<std::mutex> one(refresh_mutex_);
  auto fresh = std::make_shared<Tables>();
  fresh->logs = read_kubelet_log_names(options_.log_root);
  bool failed = false;
  bool absent = !list_;
  std::string failure;
  if (list_) {
    auto listed = list_();
    if (listed) {
      fresh->listed = std::move(*listed);
    } else if (listed.error_errno() == ENOENT) {
      absent = true;  // no kubelet here (yet): not a failure
    } else {
      failed = true;
      failure = listed.error();
    }
  }
  bool tell = false;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    // A failing List keeps the last good list (names do not vanish on one lost answer);
    // the logs are read afresh either way.
    if (failed) fresh->listed = tables_->listed;
    tables_ = fresh;
    last_refresh_ = now_();
    refreshed_ = true;
    ++stats_.refreshes;
    if (failed) ++stats_.list_failures;
    std::set<std::pair<std::string_view, std::string_view>> pods;
    for (const auto& c : fresh->listed) pods.emplace(c.namespace_, c.pod);
    stats_.pods = pods.size();
    stats_.logged_pods = fresh->logs.pods_by_uid.size();
    if (list_ && !failed) stats_.socket_answered = true;
    tell = failed && !list_failing_;
    list_failing_ = failed;
    socket_absent_ = absent;
  }
  if (tell && notice_) {
    notice_(
        fmt::format("kubernetes: the kubelet's pod-resources API failed ({}); pods keep the names last "
                    "listed and new ones are named from /var/log/pods alone, without their GPUs",
                    failure));
  }
}

std::shared_ptr<const PodDirectory::Tables> PodDirectory::current() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return tables_;
}

std::shared_ptr<const PodDirectory::Tables> PodDirectory::tables_for(std::string_view uid) {
  bool due = false;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto age = now_() - last_refresh_;
    due = !refreshed_ || age >= options_.refresh ||
          (!uid.empty() && !tables_->logs.pods_by_uid.contains(uid) && age >= options_.min_refresh);
  }
  if (due) refresh();
  bool tell = false;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    tell = !uid.empty() && socket_absent_ && !told_no_socket_;
    if (tell) told_no_socket_ = true;
  }
  if (tell && notice_) {
    notice_(
        "kubernetes: no kubelet pod-resources socket; pods are named from /var/log/pods and "
        "/var/log/containers, and which GPUs a pod was given is not known");
  }
  return current();
}

void PodDirectory::name(Workload& w, std::string_view hostname) {
  name_only(w, hostname);
  w.gpus = gpus_of(w);
}

void PodDirectory::name_only(Workload& w, std::string_view hostname) {
  if (w.pod_uid.empty() && w.container_id.empty()) return;
  const auto t = tables_for(w.pod_uid);
  if (!w.container_id.empty()) {
    if (auto it = t->logs.containers_by_id.find(w.container_id); it != t->logs.containers_by_id.end()) {
      w.namespace_ = it->second.namespace_;
      w.pod = it->second.pod;
      w.container = it->second.container;
      return;
    }
  }
  if (w.pod_uid.empty()) return;  // a container outside Kubernetes
  if (auto it = t->logs.pods_by_uid.find(w.pod_uid); it != t->logs.pods_by_uid.end()) {
    w.namespace_ = it->second.namespace_;
    w.pod = it->second.pod;
    // One container in the pod's log directory: it is the one.
    if (auto c = t->logs.containers_of_uid.find(w.pod_uid);
        c != t->logs.containers_of_uid.end() && c->second.size() == 1) {
      w.container = c->second.front();
    }
  } else if (!hostname.empty()) {
    // Not in the logs: the listed pod whose name is the process's hostname, if only one.
    const PodContainerResources* match = nullptr;
    for (const auto& c : t->listed) {
      if (c.pod != hostname) continue;
      if (match != nullptr && match->namespace_ != c.namespace_) return;  // ambiguous
      match = &c;
    }
    if (match == nullptr) return;
    w.namespace_ = match->namespace_;
    w.pod = match->pod;
  }
  if (w.container.empty()) {
    const PodContainerResources* only = nullptr;
    for (const auto& c : t->listed) {
      if (c.pod != w.pod || c.namespace_ != w.namespace_) continue;
      if (only != nullptr) return;  // several containers: which one is not known
      only = &c;
    }
    if (only != nullptr) w.container = only->container;
  }
}

bool PodDirectory::is_gpu(std::string_view resource) const {
  return std::any_of(options_.gpu_resource_prefixes.begin(), options_.gpu_resource_prefixes.end(),
                     [&](const std::string& p) { return resource.starts_with(p); });
}

std::vector<std::string> PodDirectory::gpus_of(const Workload& w) {
  std::vector<std::string> out;
  if (w.pod.empty()) return out;
  const auto t = current();
  for (const auto& c : t->listed) {
    if (c.pod != w.pod || c.namespace_ != w.namespace_ ||
        (!w.container.empty() && c.container != w.container)) {
      continue;
    }
    for (const auto& d : c.devices) {
      if (is_gpu(d.resource)) out.push_back(gpu_of_device_id(d.id));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<ContainerRef> PodDirectory::holders_of_gpu(std::string_view uuid, unsigned index) {
  std::vector<ContainerRef> out;
  const auto t = tables_for({});
  const std::string index_text = std::to_string(index);
  for (const auto& c : t->listed) {
    for (const auto& d : c.devices) {
      if (!is_gpu(d.resource)) continue;
      const std::string gpu = gpu_of_device_id(d.id);
      if ((!uuid.empty() && gpu == uuid) || gpu == index_text) {
        ContainerRef ref{c.namespace_, c.pod, c.container};
        if (std::find(out.begin(), out.end(), ref) == out.end()) out.push_back(std::move(ref));
      }
    }
  }
  return out;
}

PodDirectory::Stats PodDirectory::stats() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace eacgm::sample
