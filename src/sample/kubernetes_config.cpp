// [kubernetes]'s keys: the kubelet's socket and log directory must be absolute paths.
#include "sample/kubernetes_config.h"

#include <string_view>

#include "core/config_reader.h"

namespace eacgm::sample {
namespace {

Status read_kubernetes(const ConfigTable& table, KubernetesConfig& k) {
  constexpr std::string_view kKeys[] = {"enabled", "pod_resources_socket", "log_root", "refresh_s",
                                        "process_series"};
  if (auto s = table.check_keys(kKeys); !s) return s;
  if (auto s = table.read_bool("enabled", k.enabled); !s) return s;
  if (auto s = table.read_string("pod_resources_socket", k.pod_resources_socket); !s) return s;
  if (auto s = table.read_string("log_root", k.log_root); !s) return s;
  if (auto s = table.read_number("refresh_s", 1, 86400, k.refresh_s); !s) return s;
  if (auto s = table.read_string("process_series", k.process_series); !s) return s;
  if (k.process_series != "auto" && k.process_series != "pid") {
    return table.fail_at("process_series",
                         {"process_series must be \"auto\" or \"pid\", not \"", k.process_series, "\""});
  }
  for (const std::string_view key : {"pod_resources_socket", "log_root"}) {
    const std::string& v = key == "log_root" ? k.log_root : k.pod_resources_socket;
    if (v.empty() || v[0] != '/') return table.fail_at(key, {key, " must be an absolute path"});
  }
  return {};
}

}  // namespace

void add_kubernetes_section(ConfigSections& sections, KubernetesConfig& k) {
  sections.add_table<read_kubernetes>("kubernetes", k);
}

}  // namespace eacgm::sample
