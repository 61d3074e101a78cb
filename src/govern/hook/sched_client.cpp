// Blocking request/reply over a non-blocking socket with poll() deadlines: a slow or
// dead scheduler costs at most the timeout, and then the back-off keeps later calls from
// waiting again until it is due.
#include "govern/hook/sched_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace eacgm::govern::hook {

using protocol::Message;

namespace {

constexpr std::int64_t kFirstBackoffUs = 100000;
constexpr std::int64_t kMaxBackoffUs = 5000000;

bool wait_fd(int fd, short events, std::int64_t deadline_us) {
  for (;;) {
    std::int64_t left = deadline_us - monotonic_us();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, static_cast<int>((left + 999) / 1000));
    if (n > 0) return (p.revents & (events | POLLHUP | POLLERR)) != 0;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

int connect_unix(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return -1;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  return fd;
}

int connect_tcp(const std::string& host_port, std::int64_t deadline_us) {
  auto colon = host_port.rfind(':');
  if (colon == std::string::npos) return -1;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host_port.substr(0, colon).c_str(), host_port.substr(colon + 1).c_str(), &hints, &res) != 0)
    return -1;
  int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
    int err = 0;
    socklen_t len = sizeof err;
    if (errno != EINPROGRESS || !wait_fd(fd, POLLOUT, deadline_us) ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  return fd;
}

int env_int(const char* name, int fallback, int lo, int hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < lo || x > hi) {
    std::fprintf(stderr, "eacgm hook: ignoring %s=%s: not a whole number from %d to %d; using %d\n", name, v,
                 lo, hi, fallback);
    return fallback;
  }
  return static_cast<int>(x);
}

std::string env_str(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

}  // namespace

std::int64_t monotonic_us() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

SchedClientConfig sched_config_from_env() {
  SchedClientConfig c;
  c.socket_path = env_str("EACGM_SCHED_SOCKET");
  c.tcp_address = env_str("EACGM_SCHED_ADDR");
  c.tenant = env_str("EACGM_TENANT");
  c.secret = env_str("EACGM_TENANT_SECRET");
  c.timeout_ms = env_int("EACGM_SCHED_TIMEOUT_MS", 10000, 1, 3600000);
  c.fail_closed = env_int("EACGM_FAIL_CLOSED", 0, 0, 1) == 1;
  if (c.tenant.size() > protocol::kMaxNameLength || c.secret.size() > protocol::kMaxSecretLength) {
    std::fputs(
        "eacgm hook: EACGM_TENANT (64) or EACGM_TENANT_SECRET (128) is too long; not using the scheduler\n",
        stderr);
    c.socket_path.clear();
    c.tcp_address.clear();
  }
  return c;
}

void SchedClient::disconnect_locked(bool refused) {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  backoff_us_ = refused ? kMaxBackoffUs
                        : (backoff_us_ == 0 ? kFirstBackoffUs : std::min(backoff_us_ * 2, kMaxBackoffUs));
  retry_at_us_ = monotonic_us() + backoff_us_;
}

bool SchedClient::send_locked(const Message& m, std::uint32_t id, std::int64_t deadline_us) {
  protocol::Frame f;
  if (!protocol::encode(m, id, &f)) return false;
  std::size_t off = 0;
  while (off < f.size) {
    ssize_t n = ::send(fd_, f.bytes + off, f.size - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait_fd(fd_, POLLOUT, deadline_us)) continue;
    return false;
  }
  return true;
}

bool SchedClient::receive_locked(std::uint32_t id, Message* reply, std::int64_t deadline_us) {
  std::uint8_t buf[protocol::kHeaderSize + protocol::kMaxPayload];
  std::size_t have = 0;
  for (;;) {
    if (have > 0) {
      protocol::Decoded d;
      protocol::DecodeStatus s = protocol::decode(buf, have, &d);
      if (s == protocol::DecodeStatus::kOk) {
        if (d.request_id != id) return false;  // one request at a time: anything else is a broken stream
        *reply = std::move(d.message);
        return true;
      }
      if (s != protocol::DecodeStatus::kNeedMore) return false;
    }
    if (have == sizeof buf) return false;
    ssize_t n = recv(fd_, buf + have, sizeof buf - have, 0);
    if (n > 0) {
      have += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_fd(fd_, POLLIN, deadline_us)) continue;
    return false;
  }
}

bool SchedClient::connect_locked(std::int64_t deadline_us) {
  if (fd_ >= 0) return true;
  if (monotonic_us() < retry_at_us_) return false;
  fd_ =
      !cfg_.socket_path.empty() ? connect_unix(cfg_.socket_path) : connect_tcp(cfg_.tcp_address, deadline_us);
  if (fd_ < 0) {
    if (!warned_) {
      std::fprintf(stderr,
                   "eacgm hook: cannot reach the scheduler at %s (%s); %s and retrying with back-off\n",
                   !cfg_.socket_path.empty() ? cfg_.socket_path.c_str() : cfg_.tcp_address.c_str(),
                   std::strerror(errno),
                   cfg_.fail_closed ? "failing closed (launches refused, allocations out of memory)"
                                    : "failing open (running without quotas)");
      warned_ = true;
    }
    disconnect_locked(false);
    return false;
  }
  protocol::Hello hello;
  hello.pid = static_cast<std::uint32_t>(getpid());
  hello.tenant = cfg_.tenant;
  hello.secret = cfg_.secret;
  std::uint32_t id = next_id_++;
  Message reply;
  if (!send_locked(hello, id, deadline_us) || !receive_locked(id, &reply, deadline_us)) {
    disconnect_locked(false);
    return false;
  }
  if (auto* e = std::get_if<protocol::ErrorReply>(&reply)) {
    std::fprintf(stderr, "eacgm hook: the scheduler refused this process: %s\n", e->message.c_str());
    disconnect_locked(true);
    return false;
  }
  auto* ok = std::get_if<protocol::HelloReply>(&reply);
  if (ok == nullptr) {
    disconnect_locked(false);
    return false;
  }
  memory_limit_ = ok->memory_limit;
  backoff_us_ = 0;
  if (warned_) std::fputs("eacgm hook: connected to the scheduler\n", stderr);
  warned_ = false;
  return true;
}

bool SchedClient::transact(const Message& request, Message* reply, bool expect_reply) {
  std::int64_t deadline = monotonic_us() + static_cast<std::int64_t>(cfg_.timeout_ms) * 1000;
  std::unique_lock<std::timed_mutex> lock(mu_, std::defer_lock);
  if (!lock.try_lock_for(std::chrono::milliseconds(cfg_.timeout_ms))) return false;
  if (!connect_locked(deadline)) return false;
  std::uint32_t id = next_id_++;
  if (!send_locked(request, id, deadline) || (expect_reply && !receive_locked(id, reply, deadline))) {
    disconnect_locked(false);
    return false;
  }
  if (expect_reply) {
    if (auto* e = std::get_if<protocol::ErrorReply>(reply)) {
      std::fprintf(stderr, "eacgm hook: the scheduler refused a request: %s\n", e->message.c_str());
      disconnect_locked(e->code == protocol::ErrorCode::kNotAuthorized ||
                        e->code == protocol::ErrorCode::kUnknownTenant);
      return false;
    }
  }
  return true;
}

bool SchedClient::token(int device, std::uint32_t used_us, std::uint32_t predicted_us,
                        std::uint32_t* slice_us) {
  Message reply;
  if (!transact(protocol::TokenRequest{static_cast<std::uint16_t>(device), used_us, predicted_us}, &reply,
                true))
    return false;
  auto* g = std::get_if<protocol::TokenGrant>(&reply);
  if (g == nullptr) return false;
  *slice_us = g->slice_us;
  return true;
}

bool SchedClient::mem_reserve(int device, std::uint64_t bytes, bool* granted) {
  Message reply;
  if (!transact(protocol::MemReserve{static_cast<std::uint16_t>(device), bytes}, &reply, true)) return false;
  auto* r = std::get_if<protocol::MemReply>(&reply);
  if (r == nullptr) return false;
  *granted = r->granted;
  return true;
}

void SchedClient::mem_release(int device, std::uint64_t bytes) {
  Message none;
  transact(protocol::MemRelease{static_cast<std::uint16_t>(device), bytes}, &none, false);
}

bool SchedClient::mem_query(int device, std::uint64_t* used, std::uint64_t* limit) {
  Message reply;
  if (!transact(protocol::MemQuery{static_cast<std::uint16_t>(device)}, &reply, true)) return false;
  auto* r = std::get_if<protocol::MemReply>(&reply);
  if (r == nullptr) return false;
  *used = r->used;
  *limit = r->limit;
  return true;
}

std::uint64_t SchedClient::memory_limit() {
  std::unique_lock<std::timed_mutex> lock(mu_, std::defer_lock);
  if (!lock.try_lock_for(std::chrono::milliseconds(cfg_.timeout_ms))) return 0;
  connect_locked(monotonic_us() + static_cast<std::int64_t>(cfg_.timeout_ms) * 1000);
  return fd_ >= 0 ? memory_limit_ : 0;
}

void SchedClient::after_fork_child() {
  // The lock may have been held by a thread that does not exist in the child.
  new (&mu_) std::timed_mutex();
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  retry_at_us_ = 0;
  backoff_us_ = 0;
}

}  // namespace eacgm::govern::hook
