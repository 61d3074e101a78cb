// The scheduler daemon's sockets and message handling (see sched_server.h).
#include "govern/sched/sched_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "core/prometheus_text.h"
#include "core/unique_fd.h"
#include "govern/protocol/codec.h"
#include "govern/sched/memory_accounts.h"
#include "govern/sched/metrics_text.h"
#include "govern/sched/token_scheduler.h"

namespace eacgm::govern::sched {

using protocol::Decoded;
using protocol::DecodeStatus;
using protocol::ErrorCode;
using protocol::Message;

namespace {

constexpr std::size_t kMaxOutput = std::size_t{64} * 1024;
constexpr std::size_t kMaxHttpRequest = std::size_t{8} * 1024;

Micros now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string errno_text() { return std::strerror(errno); }

Result<UniqueFd> listen_unix(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return make_error(fmt::format("socket path {} is too long", path));
  // A stale socket of an earlier run is replaced; any other file is left alone.
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return make_error(
          fmt::format("{} exists and is not a socket; remove it or choose another socket path", path));
    unlink(path.c_str());
  }
  auto slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) mkdir(path.substr(0, slash).c_str(), 0755);
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return make_error(fmt::format("socket(AF_UNIX): {}", errno_text()));
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd.get(), 64) != 0)
    return make_error(fmt::format("cannot listen on {}: {}", path, errno_text()));
  // Any local user may connect: the peer's uid (SO_PEERCRED) decides its tenant.
  chmod(path.c_str(), 0666);
  return fd;
}

Result<UniqueFd> listen_tcp(const std::string& host_port) {
  auto colon = host_port.rfind(':');
  if (colon == std::string::npos)
    return make_error(fmt::format("\"{}\" is not host:port (e.g. 127.0.0.1:9477)", host_port));
  std::string host = host_port.substr(0, colon);
  std::string port = host_port.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) return make_error(fmt::format("cannot resolve {}: {}", host_port, gai_strerror(rc)));
  UniqueFd fd(socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  int one = 1;
  if (fd) setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const bool listening =
      fd && bind(fd.get(), res->ai_addr, res->ai_addrlen) == 0 && listen(fd.get(), 64) == 0;
  const std::string e = listening ? std::string() : errno_text();
  freeaddrinfo(res);
  if (!listening) return make_error(fmt::format("cannot listen on {}: {}", host_port, e));
  return fd;
}

bool equal_secret(const std::string& a, const std::string& b) {
  // Constant time in the secret's content, so timing does not reveal a prefix.
  unsigned diff = static_cast<unsigned>(a.size() ^ b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i]) ^ (i < b.size() ? static_cast<unsigned char>(b[i]) : 0u);
  return diff == 0;
}

enum class ConnKind { kUnix, kTcp, kMetrics };

struct Conn {
  UniqueFd fd;
  ConnKind kind = ConnKind::kUnix;
  ClientId id = 0;
  std::uint32_t uid = 0;
  std::uint32_t pid = 0;
  bool introduced = false;
  std::string tenant;
  std::vector<std::uint8_t> in;
  std::string out;
  bool closing = false;                           // close once `out` is written
  std::map<int, std::uint32_t> token_request_id;  // device -> request id awaiting a grant
};

}  // namespace

struct SchedServer::Impl {
  SchedulerConfig cfg;
  std::string config_path;
  struct timespec config_mtime {};
  Micros next_reload_check = 0;
  UniqueFd unix_listener, tcp_listener, metrics_listener;
  std::vector<GpuScheduler> gpus;
  MemoryAccounts memory;
  std::map<int, Conn> conns;  // by descriptor; each Conn owns its own
  std::map<ClientId, int> fd_of;
  ClientId next_id = 1;
  ServerCounters counters;

  ~Impl() {
    if (unix_listener) unlink(cfg.socket.c_str());
  }

  void log(const std::string& line) { std::fprintf(stderr, "eacgm-sched: %s\n", line.c_str()); }

  void apply_config() {
    std::vector<TenantShare> shares;
    for (const TenantConfig& t : cfg.tenants) shares.push_back({t.name, t.request, t.limit});
    Micros window = static_cast<Micros>(cfg.window_seconds * 1e6);
    while (static_cast<int>(gpus.size()) < cfg.gpus) gpus.emplace_back(window, 1000, 1000);
    for (GpuScheduler& g : gpus)
      g.configure(shares, window, cfg.min_slice_ms * 1000ll, cfg.max_slice_ms * 1000ll);
  }

  const TenantConfig* tenant(const std::string& name) const {
    for (const TenantConfig& t : cfg.tenants) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }

  void maybe_reload(Micros now) {
    if (config_path.empty() || now < next_reload_check) return;
    next_reload_check = now + 1000000;
    struct stat st {};
    if (stat(config_path.c_str(), &st) != 0) return;
    if (st.st_mtim.tv_sec == config_mtime.tv_sec && st.st_mtim.tv_nsec == config_mtime.tv_nsec) return;
    config_mtime = st.st_mtim;
    auto next = load_scheduler_config(config_path);
    if (!next) {
      ++counters.reload_errors;
      log(fmt::format("keeping the previous config: {}", next.error()));
      return;
    }
    // Sockets stay as they were bound; tenants, shares, limits and slices change.
    std::string socket = cfg.socket, tcp = cfg.tcp, metrics = cfg.metrics;
    int gpus_before = cfg.gpus;
    cfg = std::move(next).value();
    if (cfg.socket != socket || cfg.tcp != tcp || cfg.metrics != metrics || cfg.gpus != gpus_before)
      log("socket, tcp, metrics and gpus changes take effect at the next start");
    cfg.socket = socket;
    cfg.tcp = tcp;
    cfg.metrics = metrics;
    cfg.gpus = gpus_before;
    apply_config();
    ++counters.reloads;
    log(fmt::format("reloaded {} ({} tenants)", config_path, cfg.tenants.size()));
    // Clients of removed tenants are disconnected; they reconnect and are refused.
    for (auto& [fd, c] : conns) {
      if (c.introduced && tenant(c.tenant) == nullptr) c.closing = true;
    }
  }

  void send(Conn& c, const Message& m, std::uint32_t request_id) {
    protocol::Frame f;
    if (!protocol::encode(m, request_id, &f)) return;
    if (c.out.size() + f.size > kMaxOutput) {
      c.closing = true;  // a client that does not read its replies
      c.out.clear();
      return;
    }
    c.out.append(reinterpret_cast<const char*>(f.bytes), f.size);
  }

  void refuse(Conn& c, ErrorCode code, const std::string& why, std::uint32_t request_id) {
    send(c, protocol::ErrorReply{code, why.substr(0, 255)}, request_id);
    c.closing = true;
  }

  void deliver(const std::vector<Grant>& grants, int device) {
    for (const Grant& g : grants) {
      auto f = fd_of.find(g.client);
      if (f == fd_of.end()) continue;
      Conn& c = conns.at(f->second);
      std::uint32_t rid = c.token_request_id[device];
      send(c, protocol::TokenGrant{static_cast<std::uint16_t>(device), g.slice_us}, rid);
      flush(c);
    }
  }

  void hello(Conn& c, const protocol::Hello& h, std::uint32_t rid) {
    const TenantConfig* t = nullptr;
    if (c.kind == ConnKind::kTcp) {
      t = tenant(h.tenant);
      if (t == nullptr || t->secret.empty() || !equal_secret(h.secret, t->secret)) {
        ++counters.refused_clients;
        return refuse(
            c, ErrorCode::kNotAuthorized,
            fmt::format("tenant \"{}\" unknown or secret wrong (TCP clients need the tenant's secret)",
                        h.tenant),
            rid);
      }
    } else if (!h.tenant.empty()) {
      t = tenant(h.tenant);
      if (t == nullptr) {
        ++counters.refused_clients;
        return refuse(c, ErrorCode::kUnknownTenant,
                      fmt::format("no tenant \"{}\" in the scheduler config", h.tenant), rid);
      }
      bool allowed = c.uid == 0 || t->uids.empty() || std::count(t->uids.begin(), t->uids.end(), c.uid) != 0;
      if (!allowed) {
        ++counters.refused_clients;
        return refuse(c, ErrorCode::kNotAuthorized,
                      fmt::format("uid {} may not claim tenant \"{}\" (not in its uids)", c.uid, h.tenant),
                      rid);
      }
    } else {
      for (const TenantConfig& x : cfg.tenants) {
        if (std::count(x.uids.begin(), x.uids.end(), c.uid) != 0) {
          if (t != nullptr) {
            t = nullptr;  // ambiguous: the client must name its tenant
            break;
          }
          t = &x;
        }
      }
      if (t == nullptr) {
        ++counters.refused_clients;
        return refuse(c, ErrorCode::kUnknownTenant,
                      fmt::format("uid {} belongs to no single tenant; set EACGM_TENANT", c.uid), rid);
      }
    }
    c.introduced = true;
    c.tenant = t->name;
    c.pid = h.pid;
    send(c, protocol::HelloReply{t->name, t->memory_limit, cfg.max_slice_ms * 1000}, rid);
  }

  void handle(Conn& c, const Decoded& d) {
    const Message& m = d.message;
    if (auto* h = std::get_if<protocol::Hello>(&m)) return hello(c, *h, d.request_id);
    if (!c.introduced) return refuse(c, ErrorCode::kNotIntroduced, "send Hello first", d.request_id);
    const TenantConfig* t = tenant(c.tenant);
    if (t == nullptr)
      return refuse(c, ErrorCode::kUnknownTenant, "tenant removed from the config", d.request_id);
    auto bad_device = [&](int device) {
      if (device < cfg.gpus) return false;
      refuse(c, ErrorCode::kBadDevice,
             fmt::format("GPU {} is not scheduled here (gpus = {})", device, cfg.gpus), d.request_id);
      return true;
    };
    Micros now = now_us();
    if (auto* r = std::get_if<protocol::TokenRequest>(&m)) {
      if (bad_device(r->device)) return;
      c.token_request_id[r->device] = d.request_id;
      std::vector<Grant> grants;
      gpus[r->device].request(c.id, c.tenant, r->used_us, r->predicted_us, now, &grants);
      return deliver(grants, r->device);
    }
    if (auto* r = std::get_if<protocol::MemReserve>(&m)) {
      if (bad_device(r->device)) return;
      bool ok = memory.reserve(c.id, c.tenant, r->device, r->bytes, t->memory_limit);
      send(c, protocol::MemReply{r->device, ok, memory.used(c.tenant, r->device), t->memory_limit},
           d.request_id);
      return;
    }
    if (auto* r = std::get_if<protocol::MemRelease>(&m)) {
      if (bad_device(r->device)) return;
      memory.release(c.id, r->device, r->bytes);
      return;
    }
    if (auto* r = std::get_if<protocol::MemQuery>(&m)) {
      if (bad_device(r->device)) return;
      send(c, protocol::MemReply{r->device, true, memory.used(c.tenant, r->device), t->memory_limit},
           d.request_id);
      return;
    }
    ++counters.protocol_errors;
    refuse(c, ErrorCode::kMalformed, "a scheduler-to-client message sent to the scheduler", d.request_id);
  }

  void read_client(Conn& c) {
    std::uint8_t buf[4096];
    for (;;) {
      ssize_t n = recv(c.fd.get(), buf, sizeof buf, 0);
      if (n > 0) {
        c.in.insert(c.in.end(), buf, buf + n);
        if (c.kind != ConnKind::kMetrics) consume(c);
        if (c.closing) return;
        continue;
      }
      if (n == 0) {
        c.closing = true;
        c.out.clear();
        return;
      }
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        c.closing = true;
        c.out.clear();
      }
      break;
    }
    if (c.kind == ConnKind::kMetrics) http(c);
  }

  void consume(Conn& c) {
    std::size_t pos = 0;
    while (pos < c.in.size() && !c.closing) {
      Decoded d;
      DecodeStatus s = protocol::decode(c.in.data() + pos, c.in.size() - pos, &d);
      if (s == DecodeStatus::kNeedMore) break;
      if (s != DecodeStatus::kOk) {
        ++counters.protocol_errors;
        log(fmt::format("closing client pid {} ({}): {}", c.pid,
                        c.tenant.empty() ? "not introduced" : c.tenant, protocol::describe(s)));
        refuse(c, s == DecodeStatus::kBadVersion ? ErrorCode::kUnsupportedVersion : ErrorCode::kMalformed,
               protocol::describe(s), 0);
        break;
      }
      pos += d.consumed;
      handle(c, d);
    }
    c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(std::min(pos, c.in.size())));
  }

  void http(Conn& c) {
    std::string req(c.in.begin(), c.in.end());
    if (req.find("\r\n\r\n") == std::string::npos && req.find("\n\n") == std::string::npos) {
      if (req.size() > kMaxHttpRequest) c.closing = true;
      return;
    }
    std::string body, status = "200 OK";
    if (req.rfind("GET /metrics", 0) == 0) {
      body = metrics_text(now_us());
    } else {
      status = "404 Not Found";
      body = "eacgm-sched serves GET /metrics\n";
    }
    c.out =
        fmt::format("HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                    status, content_type(ExpositionFormat::kPrometheusText), body.size(), body);
    c.in.clear();
    c.closing = true;
  }

  std::string metrics_text(Micros now) {
    std::vector<std::vector<TenantTimes>> times;
    for (GpuScheduler& g : gpus) times.push_back(g.times(now));
    std::map<std::string, int> per_tenant;
    for (auto& [fd, c] : conns) {
      if (c.introduced) ++per_tenant[c.tenant];
    }
    std::vector<std::pair<std::string, int>> clients(per_tenant.begin(), per_tenant.end());
    return render_metrics(cfg, times, memory, clients, counters);
  }

  void flush(Conn& c) {
    while (!c.out.empty()) {
      ssize_t n = ::send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (n > 0) {
        c.out.erase(0, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      c.out.clear();
      c.closing = true;
      return;
    }
  }

  void accept_on(int listen_fd, ConnKind kind) {
    for (;;) {
      UniqueFd accepted(accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
      if (!accepted) return;
      const int fd = accepted.get();
      Conn c;
      c.fd = std::move(accepted);
      c.kind = kind;
      c.id = next_id++;
      if (kind == ConnKind::kUnix) {
        ucred cred{};
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) continue;  // c closes it
        c.uid = cred.uid;
        c.pid = static_cast<std::uint32_t>(cred.pid);
      }
      fd_of[c.id] = fd;
      conns.emplace(fd, std::move(c));
    }
  }

  void drop(int fd) {
    Conn& c = conns.at(fd);
    Micros now = now_us();
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      std::vector<Grant> grants;
      gpus[g].drop_client(c.id, now, &grants);
      fd_of.erase(c.id);
      deliver(grants, static_cast<int>(g));
    }
    memory.drop_client(c.id);
    fd_of.erase(c.id);
    conns.erase(fd);  // closes it
  }

  void tick(Micros now) {
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      if (gpus[g].next_deadline() != 0 && gpus[g].next_deadline() <= now) {
        std::vector<Grant> grants;
        gpus[g].tick(now, &grants);
        deliver(grants, static_cast<int>(g));
      }
    }
  }

  int poll_timeout_ms(Micros now) const {
    Micros next = now + 200000;
    for (const GpuScheduler& g : gpus) {
      if (g.next_deadline() != 0) next = std::min(next, g.next_deadline());
    }
    return static_cast<int>(std::max<Micros>(0, (next - now + 999) / 1000));
  }
};

SchedServer::SchedServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SchedServer::~SchedServer() = default;

Result<std::unique_ptr<SchedServer>> SchedServer::start(SchedulerConfig cfg, std::string config_path) {
  auto impl = std::make_unique<Impl>();
  impl->cfg = std::move(cfg);
  impl->config_path = std::move(config_path);
  struct stat st {};
  if (!impl->config_path.empty() && stat(impl->config_path.c_str(), &st) == 0)
    impl->config_mtime = st.st_mtim;
  impl->next_reload_check = now_us() + 1000000;
  auto u = listen_unix(impl->cfg.socket);
  if (!u) return std::move(u).take_error();
  impl->unix_listener = std::move(*u);
  if (!impl->cfg.tcp.empty()) {
    auto t = listen_tcp(impl->cfg.tcp);
    if (!t) return std::move(t).take_error();
    impl->tcp_listener = std::move(*t);
  }
  if (!impl->cfg.metrics.empty()) {
    auto m = listen_tcp(impl->cfg.metrics);
    if (!m) return make_error(fmt::format("metrics: {}", m.error()));
    impl->metrics_listener = std::move(*m);
  }
  impl->apply_config();
  return std::unique_ptr<SchedServer>(new SchedServer(std::move(impl)));
}

void SchedServer::run(const std::atomic<bool>& stop) {
  Impl& s = *impl_;
  std::vector<pollfd> fds;
  while (!stop.load(std::memory_order_relaxed)) {
    Micros now = now_us();
    s.maybe_reload(now);
    s.tick(now);
    fds.clear();
    for (int fd : {s.unix_listener.get(), s.tcp_listener.get(), s.metrics_listener.get()}) {
      if (fd >= 0) fds.push_back({fd, POLLIN, 0});
    }
    std::size_t first_conn = fds.size();
    for (auto& [fd, c] : s.conns)
      fds.push_back({fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
    int n = poll(fds.data(), fds.size(), s.poll_timeout_ms(now));
    if (n < 0 && errno != EINTR) {
      s.log(fmt::format("poll: {}", errno_text()));
      return;
    }
    if (n <= 0) continue;
    for (std::size_t i = 0; i < first_conn; ++i) {
      if ((fds[i].revents & POLLIN) == 0) continue;
      ConnKind kind = fds[i].fd == s.unix_listener.get()  ? ConnKind::kUnix
                      : fds[i].fd == s.tcp_listener.get() ? ConnKind::kTcp
                                                          : ConnKind::kMetrics;
      s.accept_on(fds[i].fd, kind);
    }
    for (std::size_t i = first_conn; i < fds.size(); ++i) {
      auto it = s.conns.find(fds[i].fd);
      if (it == s.conns.end()) continue;
      Conn& c = it->second;
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) s.read_client(c);
      s.flush(c);
      if (c.closing && c.out.empty()) s.drop(fds[i].fd);
    }
  }
}

}  // namespace eacgm::govern::sched
