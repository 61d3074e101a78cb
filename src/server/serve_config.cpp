// [serve]'s keys and their ranges.
#include "server/serve_config.h"

#include <string_view>

#include "core/config_reader.h"

namespace eacgm::server {
namespace {

Status read_serve(const ConfigTable& table, ServeConfig& serve) {
  constexpr std::string_view kKeys[] = {
      "listen",           "token_file",          "advertise_url",      "max_clients",
      "dcgm_metrics",     "max_function_series", "max_process_series", "max_histogram_series",
      "rescan_interval_s"};
  if (auto s = table.check_keys(kKeys); !s) return s;
  if (auto s = table.read_string("listen", serve.listen); !s) return s;
  if (auto s = table.read_string("token_file", serve.token_file); !s) return s;
  if (auto s = table.read_string("advertise_url", serve.advertise_url); !s) return s;
  if (auto s = check_advertise_url(serve.advertise_url); !s) return table.fail_at("advertise_url", s.error());
  if (auto s = table.read_integer("max_clients", 1, 256, serve.max_clients); !s) return s;
  if (auto s = table.read_bool("dcgm_metrics", serve.dcgm_metrics); !s) return s;
  if (auto s = table.read_integer("max_function_series", 1, 100000, serve.max_function_series); !s) return s;
  if (auto s = table.read_integer("max_histogram_series", 0, 100000, serve.max_histogram_series); !s)
    return s;
  if (auto s = table.read_number("rescan_interval_s", 0.1, 3600, serve.rescan_interval_s); !s) return s;
  return table.read_integer("max_process_series", 1, 100000, serve.max_process_series);
}

}  // namespace

Status check_advertise_url(const std::string& url) {
  if (url.empty()) return {};
  for (std::string_view scheme : {"http://", "https://"}) {
    if (url.size() > scheme.size() && url.compare(0, scheme.size(), scheme) == 0) return {};
  }
  return make_error("\"" + url + "\" is no URL of the agent's API: give http://HOST:PORT");
}

void add_serve_section(ConfigSections& sections, ServeConfig& serve) {
  sections.add_table<read_serve>("serve", serve);
}

}  // namespace eacgm::server
