// Where the server listens: "HOST:PORT" parsed and written as URLs write them, and which
// addresses count as loopback (the only ones served without a token).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace eacgm::server {

// 9977: clear of the exporters a GPU node usually runs (node-exporter 9100, dcgm-exporter
// 9400, Prometheus 9090, Alertmanager 9093, Pushgateway 9091, cAdvisor and most web
// consoles 8080, nvidia_gpu_exporter 9835) and not in /etc/services.
inline constexpr std::uint16_t kDefaultPort = 9977;
inline constexpr std::string_view kDefaultAddress = "127.0.0.1";

// 127.0.0.0/8, ::1, ::ffff:127.x.y.z and "localhost". Anything else, including 0.0.0.0,
// :: and host names, counts as reachable from the network.
bool is_loopback_address(std::string_view address);

struct ListenAddress {
  std::string host;
  std::uint16_t port = kDefaultPort;
};
// "HOST:PORT", or "[V6]:PORT" for an IPv6 address: as a URL writes them.
std::string host_port(std::string_view host, std::uint16_t port);

// "HOST:PORT", "[V6]:PORT", "HOST" (default port) or ":PORT" / "PORT" (default address).
Result<ListenAddress> parse_listen_address(std::string_view text);

// Whether `address` is an address or a host name the resolver knows; else an error
// saying so for `where` (the "HOST:PORT" being set up).
Status check_listen_host(const std::string& address, std::string_view where);

}  // namespace eacgm::server
