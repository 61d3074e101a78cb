// A raw HTTP/1.1 client for the server tests: exact requests (bad methods, oversize
// bodies, wrong tokens) and clients that connect and never read.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace eacgm::server::testing {

inline int connect_to(std::uint16_t port, int rcvbuf = 0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (rcvbuf > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline bool send_all(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads until `done(buffer)` holds, EOF, or the timeout.
template <typename Done>
std::string read_until(int fd, Done done, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  std::string buf;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done(buf)) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char chunk[4096];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    buf.append(chunk, static_cast<std::size_t>(n));
  }
  return buf;
}

struct Reply {
  int status = 0;
  std::string head;  // status line and headers
  std::string body;

  // The value of a header (case-sensitive name as the server writes it); "" when absent.
  std::string header(const std::string& name) const {
    const auto at = head.find("\r\n" + name + ": ");
    if (at == std::string::npos) return {};
    const auto start = at + name.size() + 4;
    return head.substr(start, head.find("\r\n", start) - start);
  }
};

inline Reply parse_reply(const std::string& raw) {
  Reply r;
  const auto end = raw.find("\r\n\r\n");
  r.head = raw.substr(0, end);
  if (end != std::string::npos) r.body = raw.substr(end + 4);
  if (raw.size() > 12 && raw.starts_with("HTTP/1.1 ")) r.status = std::stoi(raw.substr(9, 3));
  return r;
}

// Sends `raw` (which should say Connection: close) and reads the reply to EOF.
inline Reply round_trip(std::uint16_t port, const std::string& raw) {
  const int fd = connect_to(port);
  if (fd < 0) return {};
  send_all(fd, raw);
  const std::string got = read_until(fd, [](const std::string&) { return false; });
  ::close(fd);
  return parse_reply(got);
}

inline Reply get(std::uint16_t port, const std::string& path, const std::string& extra_headers = "",
                 const std::string& method = "GET") {
  return round_trip(port, method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
                              extra_headers + "\r\n");
}

}  // namespace eacgm::server::testing
