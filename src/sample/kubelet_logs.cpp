// The kubelet's log directory names, parsed (see kubelet_logs.h).
#include "sample/kubelet_logs.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "sample/cgroup_ids.h"

namespace eacgm::sample {
namespace {

bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// A DNS-1123 name as Kubernetes uses for namespaces, pods and containers: lower-case
// letters, digits, '-' and '.', at most 253 characters.
bool is_k8s_name(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
}

}  // namespace

std::optional<std::pair<std::string, PodRef>> parse_pod_log_dir(std::string_view name) {
  const std::size_t a = name.find('_');
  const std::size_t b = a == std::string_view::npos ? a : name.find('_', a + 1);
  if (b == std::string_view::npos || name.find('_', b + 1) != std::string_view::npos) return std::nullopt;
  const std::string_view ns = name.substr(0, a);
  const std::string_view pod = name.substr(a + 1, b - a - 1);
  const std::string_view uid = name.substr(b + 1);
  if (!is_k8s_name(ns) || !is_k8s_name(pod) || uid.empty() || canonical_pod_uid(uid) != uid)
    return std::nullopt;
  return std::pair{std::string(uid), PodRef{std::string(ns), std::string(pod)}};
}

std::optional<std::pair<std::string, ContainerRef>> parse_container_log_name(std::string_view name) {
  constexpr std::string_view kSuffix = ".log";
  if (name.size() < kSuffix.size() + 65 || name.substr(name.size() - kSuffix.size()) != kSuffix) {
    return std::nullopt;
  }
  name.remove_suffix(kSuffix.size());
  const std::string_view id = name.substr(name.size() - 64);
  if (!std::all_of(id.begin(), id.end(), is_lower_hex) || name[name.size() - 65] != '-') return std::nullopt;
  name.remove_suffix(65);
  const std::size_t a = name.find('_');
  const std::size_t b = a == std::string_view::npos ? a : name.find('_', a + 1);
  if (b == std::string_view::npos || name.find('_', b + 1) != std::string_view::npos) return std::nullopt;
  const std::string_view pod = name.substr(0, a);
  const std::string_view ns = name.substr(a + 1, b - a - 1);
  const std::string_view container = name.substr(b + 1);
  if (!is_k8s_name(ns) || !is_k8s_name(pod) || !is_k8s_name(container)) return std::nullopt;
  return std::pair{std::string(id), ContainerRef{std::string(ns), std::string(pod), std::string(container)}};
}

KubeletLogNames read_kubelet_log_names(const std::string& log_root, std::size_t max_entries) {
  namespace fs = std::filesystem;
  KubeletLogNames out;
  std::error_code ec;
  std::size_t n = 0;
  for (fs::directory_iterator it(fs::path(log_root) / "pods", ec), end; !ec && it != end && n < max_entries;
       it.increment(ec), ++n) {
    auto parsed = parse_pod_log_dir(it->path().filename().string());
    if (!parsed) continue;
    std::vector<std::string>& names = out.containers_of_uid[parsed->first];
    std::error_code inner;
    for (fs::directory_iterator c(it->path(), inner), cend; !inner && c != cend && names.size() < 64;
         c.increment(inner)) {
      const std::string container = c->path().filename().string();
      if (is_k8s_name(container)) names.push_back(container);
    }
    std::sort(names.begin(), names.end());
    out.pods_by_uid.emplace(std::move(parsed->first), std::move(parsed->second));
  }
  ec.clear();
  n = 0;
  for (fs::directory_iterator it(fs::path(log_root) / "containers", ec), end;
       !ec && it != end && n < max_entries; it.increment(ec), ++n) {
    if (auto parsed = parse_container_log_name(it->path().filename().string())) {
      out.containers_by_id.emplace(std::move(parsed->first), std::move(parsed->second));
    }
  }
  return out;
}

}  // namespace eacgm::sample
