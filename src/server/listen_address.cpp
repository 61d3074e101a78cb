// Listen addresses: parsing "HOST:PORT" forms, writing them back, the loopback rule and
// the resolver's word on a host name.
#include "server/listen_address.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace eacgm::server {

std::string host_port(std::string_view host, std::uint16_t port) {
  return host.find(':') != std::string_view::npos ? fmt::format("[{}]:{}", host, port)
                                                  : fmt::format("{}:{}", host, port);
}

bool is_loopback_address(std::string_view address) {
  if (address == "localhost") return true;
  std::string a(address);
  if (a.size() > 2 && a.front() == '[' && a.back() == ']') a = a.substr(1, a.size() - 2);
  in_addr v4{};
  if (::inet_pton(AF_INET, a.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, a.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

Result<ListenAddress> parse_listen_address(std::string_view text) {
  ListenAddress out;
  out.host = std::string(kDefaultAddress);
  auto parse_port = [&](std::string_view p) -> Status {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
    if (p.empty() || ec != std::errc{} || end != p.data() + p.size() || v > 65535) {
      return make_error(fmt::format("bad port in listen address \"{}\"", text));
    }
    out.port = static_cast<std::uint16_t>(v);
    return {};
  };
  if (text.empty()) return make_error("empty listen address");
  // A URL (the address the agent is reached at, as `--server` takes it): it listens on
  // HOST:PORT, without the scheme.
  if (const auto scheme = text.find("://"); scheme != std::string_view::npos) {
    std::string_view rest = text.substr(scheme + 3);
    rest = rest.substr(0, rest.find('/'));
    return make_error(fmt::format(
        "listen address \"{}\" is a URL; drop the scheme \"{}\" and write HOST:PORT{}", text,
        text.substr(0, scheme + 3), rest.empty() ? std::string() : fmt::format(" (\"{}\")", rest)));
  }
  if (text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return make_error(fmt::format("bad listen address \"{}\"", text));
    out.host = std::string(text.substr(1, close - 1));
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return make_error(fmt::format("bad listen address \"{}\"", text));
      if (auto s = parse_port(rest.substr(1)); !s) return std::move(s).take_error();
    }
    return out;
  }
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    if (std::all_of(text.begin(), text.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      if (auto s = parse_port(text); !s) return std::move(s).take_error();
    } else {
      out.host = std::string(text);
    }
    return out;
  }
  if (text.find(':') != colon)
    return make_error(fmt::format("put an IPv6 address in brackets: \"[{}]:PORT\"", text));
  if (colon > 0) out.host = std::string(text.substr(0, colon));
  if (auto s = parse_port(text.substr(colon + 1)); !s) return std::move(s).take_error();
  return out;
}

Status check_listen_host(const std::string& address, std::string_view where) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(address.c_str(), nullptr, &hints, &found); rc != 0) {
    return make_error(fmt::format("cannot listen on {}: '{}' is not an address or a known host name ({})",
                                  where, address, ::gai_strerror(rc)));
  }
  ::freeaddrinfo(found);
  return {};
}

}  // namespace eacgm::server
