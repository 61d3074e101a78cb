// Container and pod ids from cgroup paths (see cgroup_ids.h for the shapes).
#include "sample/cgroup_ids.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/proc_file.h"

namespace eacgm::sample {
namespace {

bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
bool is_id_char(char c) { return is_lower_hex(c) || (c >= 'g' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The innermost 64-hex run in `component` that stands alone (not part of a longer word).
std::string_view container_id_in(std::string_view s) {
  std::string_view found;
  for (std::size_t i = 0; i + 64 <= s.size();) {
    if (!is_lower_hex(s[i]) || (i > 0 && is_id_char(s[i - 1]))) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && is_lower_hex(s[j])) ++j;
    if (j - i == 64 && (j == s.size() || !is_id_char(s[j]))) found = s.substr(i, 64);
    i = j;
  }
  return found;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::string qos_word(std::string_view s) {
  for (std::string_view q : {"burstable", "besteffort", "guaranteed"}) {
    if (s == q) return std::string(q);
  }
  return {};
}

// One line's path, component by component.
CgroupIds parse_path(std::string_view path) {
  CgroupIds ids;
  bool in_kubepods = false;
  bool conmon = false;
  std::string_view prev;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view c = path.substr(start, end - start);
    start = end + 1;
    if (c.empty()) continue;
    const std::string_view parent = prev;
    prev = c;
    // systemd driver: [kubelet-]kubepods[-<qos>][-pod<uid>].slice
    if (ends_with(c, ".slice")) {
      std::string_view name = c.substr(0, c.size() - 6);
      if (starts_with(name, "kubelet-")) name.remove_prefix(8);  // kind and similar nested kubelets
      if (starts_with(name, "kubepods")) {
        in_kubepods = true;
        name.remove_prefix(8);
        if (starts_with(name, "-")) name.remove_prefix(1);
        const std::size_t pod = name.find("pod");
        const std::string_view qos = pod == std::string_view::npos ? name : name.substr(0, pod);
        std::string q = qos_word(ends_with(qos, "-") ? qos.substr(0, qos.size() - 1) : qos);
        if (!q.empty()) ids.qos = q;
        if (pod != std::string_view::npos) {
          if (std::string uid = canonical_pod_uid(name.substr(pod + 3)); !uid.empty()) ids.pod_uid = uid;
        }
      }
      continue;
    }
    // cgroupfs driver: kubepods/<qos>/pod<uid>/<id>
    if (c == "kubepods") {
      in_kubepods = true;
      continue;
    }
    if (in_kubepods && ids.pod_uid.empty()) {
      if (std::string q = qos_word(c); !q.empty()) {
        ids.qos = q;
        continue;
      }
      if (starts_with(c, "pod")) {
        if (std::string uid = canonical_pod_uid(c.substr(3)); !uid.empty()) {
          ids.pod_uid = uid;
          continue;
        }
      }
    }
    // The container's own cgroup: <runtime>-<id>.scope (systemd) or <id> (cgroupfs).
    const std::string_view id = container_id_in(c);
    if (id.empty()) continue;
    ids.container_id = std::string(id);
    conmon = starts_with(c, "crio-conmon-");
    if (starts_with(c, "cri-containerd-")) {
      ids.runtime = "containerd";
    } else if (starts_with(c, "crio-")) {
      ids.runtime = "crio";
    } else if (starts_with(c, "docker-") || parent == "docker") {
      ids.runtime = "docker";
    } else if (starts_with(c, "libpod-")) {
      ids.runtime = "podman";
    } else {
      ids.runtime.clear();  // cgroupfs: the path does not name the runtime
    }
  }
  if (!ids.pod_uid.empty() && ids.qos.empty()) ids.qos = "guaranteed";  // kubepods/pod<uid> directly
  if (ids.pod_uid.empty()) ids.qos.clear();
  if (conmon) ids.container_id.clear();
  return ids;
}

}  // namespace

std::string canonical_pod_uid(std::string_view s) {
  if (s.size() == 32 && std::all_of(s.begin(), s.end(), is_lower_hex)) return std::string(s);
  if (s.size() != 36) return {};
  std::string uid(s);
  for (std::size_t i = 0; i < uid.size(); ++i) {
    const bool dash_place = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash_place) {
      if (uid[i] != '-' && uid[i] != '_') return {};
      uid[i] = '-';
    } else if (!is_lower_hex(uid[i])) {
      return {};
    }
  }
  return uid;
}

CgroupIds parse_cgroup_ids(std::string_view text) {
  CgroupIds best;
  std::size_t line_start = 0;
  while (line_start < text.size()) {
    std::size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    const std::string_view line = text.substr(line_start, line_end - line_start);
    line_start = line_end + 1;
    // hierarchy-id:controllers:path (the path may itself hold ':').
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    CgroupIds ids = parse_path(line.substr(second + 1));
    const auto score = [](const CgroupIds& i) {
      return (i.pod_uid.empty() ? 0 : 2) + (i.container_id.empty() ? 0 : 1);
    };
    if (score(ids) > score(best)) best = std::move(ids);
  }
  return best;
}

CgroupIds read_cgroup_ids(std::uint32_t pid, std::string_view proc_root) {
  const auto text = read_small_file(fmt::format("{}/{}/cgroup", proc_root, pid));
  return text ? parse_cgroup_ids(*text) : CgroupIds{};
}

}  // namespace eacgm::sample
