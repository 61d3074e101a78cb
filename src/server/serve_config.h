// [serve]: where `eacgm serve` listens and what it serves (flags override these).
#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"

namespace eacgm {
class ConfigSections;
}  // namespace eacgm

namespace eacgm::server {

struct ServeConfig {
  std::string listen = "127.0.0.1:9977";  // HOST:PORT; not loopback needs a token file
  std::string token_file;                 // bearer token, mode 0600; "" none
  // Where other machines reach this agent's API (http://HOST:PORT), as the fleet's store
  // lists it; "" : from listen (a wildcard address becomes the host's name).
  std::string advertise_url;
  std::uint32_t max_clients = 8;             // connections served at once
  bool dcgm_metrics = true;                  // DCGM_FI_* families on /metrics
  std::uint32_t max_function_series = 2000;  // (domain, function) series; the rest as "other"
  std::uint32_t max_process_series = 500;    // processes on /metrics and the API; the rest folded
  std::uint32_t max_histogram_series = 200;  // duration histograms: the functions with the most time
  // The daemon finds new processes and libraries through exec and loader hints; its
  // periodic /proc rescan ([trace] rescan_interval_s for trace/run) is only the fallback.
  double rescan_interval_s = 10.0;
};

// "" or an http:// or https:// URL (advertise_url, --advertise-url).
Status check_advertise_url(const std::string& url);

// Adds [serve] to the file's sections, read into `serve`.
void add_serve_section(ConfigSections& sections, ServeConfig& serve);

}  // namespace eacgm::server
