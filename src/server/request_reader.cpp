// The event loop of server/request_reader.h: one thread, epoll over the listening socket,
// an eventfd for connections handed back, and every connection still reading a request.
#include "server/request_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/ascii_text.h"

namespace eacgm::server {
namespace {

using Clock = std::chrono::steady_clock;

// Where a connection is in its request.
enum class Phase {
  kIdle,  // no byte of a request yet: just accepted, or kept alive after a response
  kHead,  // part of the request line and headers
  kBody,  // the head is whole; the body its Content-Length promises is not yet
};

struct Slot {
  Connection conn;
  Phase phase = Phase::kIdle;
  bool kept_alive = false;  // idle after a response (not just accepted)
  Clock::time_point deadline;
  // When it became idle, as an order (connections accepted in one batch share a clock
  // reading): the oldest idle connection has the smallest.
  std::uint64_t idle_order = 0;
  std::size_t scanned = 0;   // bytes already searched for the end of the head
  std::size_t body_end = 0;  // in kBody: where the body ends in conn.bytes
};

}  // namespace

HeadFacts read_head(std::string_view head) {
  HeadFacts f;
  std::size_t eol = head.find("\r\n");
  const std::string_view line = head.substr(0, eol);
  const std::size_t sp1 = line.find(' ');
  if (sp1 != std::string_view::npos) {
    f.method = line.substr(0, sp1);
    const std::size_t sp2 = line.find(' ', sp1 + 1);
    f.target = line.substr(sp1 + 1, sp2 == std::string_view::npos ? std::string_view::npos : sp2 - sp1 - 1);
  }
  bool have_length = false;
  while (eol != std::string_view::npos) {
    const std::size_t start = eol + 2;
    eol = head.find("\r\n", start);
    const std::string_view header = head.substr(start, eol == std::string_view::npos ? eol : eol - start);
    const std::size_t colon = header.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = header.substr(0, colon);
    const std::string_view value = trim(header.substr(colon + 1));
    if (iequals(name, "Content-Length")) {
      std::uint64_t n = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (have_length || value.empty() || ec != std::errc{} || end != value.data() + value.size()) {
        f.bad_length = true;
      }
      have_length = true;
      f.content_length = n;
    } else if (iequals(name, "Transfer-Encoding")) {
      f.chunked = true;
    } else if (iequals(name, "Expect")) {
      f.expect_continue = iequals(value, "100-continue");
    }
  }
  return f;
}

struct RequestReader::Loop {
  ReaderLimits limits;
  ReaderCounters& counters;
  WantsBody wants_body;
  RequestReady ready;

  UniqueFd listen_fd;
  UniqueFd epoll_fd;
  UniqueFd wake_fd;
  std::thread thread;
  std::unordered_map<int, Slot> slots;
  std::uint64_t next_idle_order = 0;

  std::mutex mutex;  // guards the two below
  std::vector<std::pair<Connection, bool>> returned;
  bool stopped = false;
  std::atomic<bool> stopping{false};

  Loop(ReaderLimits l, ReaderCounters& c, WantsBody w, RequestReady r)
      : limits(l), counters(c), wants_body(std::move(w)), ready(std::move(r)) {}

  void wake() const {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd.get(), &one, sizeof one);
  }

  void close_connection(Connection& conn) {
    if (!conn.fd) return;
    conn.fd.reset();
    counters.open.fetch_sub(1, std::memory_order_relaxed);
  }

  void drop(int fd) {
    const auto it = slots.find(fd);
    if (it == slots.end()) return;
    ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, fd, nullptr);
    close_connection(it->second.conn);
    slots.erase(it);
  }

  void watch(Connection conn, bool kept_alive, Clock::time_point now) {
    const int fd = conn.fd.get();
    Slot s;
    s.conn = std::move(conn);
    s.kept_alive = kept_alive;
    s.idle_order = next_idle_order++;
    if (s.conn.bytes.empty()) {
      s.phase = Phase::kIdle;
      s.deadline = now + (kept_alive ? limits.keep_alive_timeout : limits.header_timeout);
    } else {
      s.phase = Phase::kHead;
      s.deadline = now + limits.header_timeout;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
      close_connection(s.conn);
      return;
    }
    slots.emplace(fd, std::move(s));
    advance(fd, now);
  }

  // The request on `fd` goes to a worker.
  void dispatch(int fd) {
    const auto it = slots.find(fd);
    ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, fd, nullptr);
    Connection conn = std::move(it->second.conn);
    slots.erase(it);
    ready(std::move(conn));
  }

  // Moves the connection on by what it has read: a whole request goes to a worker.
  void advance(int fd, Clock::time_point now) {
    Slot& s = slots.at(fd);
    std::string& bytes = s.conn.bytes;
    if (s.phase != Phase::kBody) {
      if (bytes.empty()) return;
      const std::size_t from = s.scanned > 3 ? s.scanned - 3 : 0;
      const std::size_t end = bytes.find("\r\n\r\n", from);
      if (end == std::string::npos) {
        s.scanned = bytes.size();
        if (bytes.size() > kMaxHeadBytes) {
          s.conn.head_too_large = true;
          dispatch(fd);
        }
        return;
      }
      const HeadFacts f = read_head(std::string_view(bytes).substr(0, end));
      const bool read_body = !f.chunked && !f.bad_length && f.content_length > 0 &&
                             f.content_length <= limits.max_body_bytes && wants_body(f.method, f.target);
      if (!read_body) {
        dispatch(fd);
        return;
      }
      s.phase = Phase::kBody;
      s.body_end = end + 4 + static_cast<std::size_t>(f.content_length);
      s.deadline = now + limits.body_timeout;
      if (f.expect_continue && bytes.size() < s.body_end) {
        // The worker is told not to send it again (http_server.cpp drops the header).
        static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
        [[maybe_unused]] const ssize_t n =
            ::send(fd, kContinue.data(), kContinue.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      }
    }
    if (bytes.size() >= s.body_end) dispatch(fd);
  }

  void on_readable(int fd, Clock::time_point now) {
    Slot& s = slots.at(fd);
    // Enough for the largest request; more (pipelined requests) waits in the socket.
    const std::size_t room = kMaxHeadBytes + limits.max_body_bytes + 1;
    std::array<char, 16384> buf{};
    bool ended = false;
    for (;;) {
      if (s.conn.bytes.size() >= room) break;
      const std::size_t want = std::min(buf.size(), room - s.conn.bytes.size());
      const ssize_t n = ::recv(fd, buf.data(), want, 0);
      if (n > 0) {
        if (s.phase == Phase::kIdle) {
          s.phase = Phase::kHead;
          // A new connection's deadline runs from its accept; a kept-alive one's head
          // from its first byte.
          if (s.kept_alive) s.deadline = now + limits.header_timeout;
        }
        s.conn.bytes.append(buf.data(), static_cast<std::size_t>(n));
        if (static_cast<std::size_t>(n) < want) break;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      ended = true;  // the client closed (perhaps only its side), or the connection failed
      break;
    }
    advance(fd, now);
    // A request finished before the client closed its side is still answered.
    if (ended) drop(fd);
  }

  // Makes room for one more connection: false when none is idle.
  bool shed_oldest_idle() {
    int oldest = -1;
    std::uint64_t since = 0;
    for (const auto& [fd, s] : slots) {
      if (s.phase == Phase::kIdle && (oldest < 0 || s.idle_order < since)) {
        since = s.idle_order;
        oldest = fd;
      }
    }
    if (oldest < 0) return false;
    counters.shed.fetch_add(1, std::memory_order_relaxed);
    drop(oldest);
    return true;
  }

  void accept_all(Clock::time_point now) {
    for (;;) {
      const int fd = ::accept4(listen_fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        // EMFILE/ENFILE: out of descriptors; the backlog holds the rest until one closes.
        if (errno == EMFILE || errno == ENFILE) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return;
      }
      Connection conn;
      conn.fd.reset(fd);
      counters.open.fetch_add(1, std::memory_order_relaxed);
      if (counters.open.load(std::memory_order_relaxed) > limits.max_connections && !shed_oldest_idle()) {
        counters.shed.fetch_add(1, std::memory_order_relaxed);
        close_connection(conn);
        continue;
      }
      // A response written in two pieces (headers, body) must not wait for the
      // client's delayed ACK (about 40 ms per request on a kept-open connection).
      int yes = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
      watch(std::move(conn), false, now);
    }
  }

  void take_returned(Clock::time_point now) {
    std::uint64_t n = 0;
    [[maybe_unused]] const ssize_t r = ::read(wake_fd.get(), &n, sizeof n);
    std::vector<std::pair<Connection, bool>> back;
    {
      std::lock_guard lock(mutex);
      back.swap(returned);
    }
    for (auto& [conn, keep] : back) {
      if (keep) {
        watch(std::move(conn), true, now);
      } else {
        close_connection(conn);
      }
    }
  }

  void expire(Clock::time_point now) {
    std::vector<int> due;
    for (const auto& [fd, s] : slots) {
      if (s.deadline > now) continue;
      due.push_back(fd);
      if (s.phase == Phase::kBody) {
        counters.body_timeouts.fetch_add(1, std::memory_order_relaxed);
      } else if (s.phase == Phase::kIdle && s.kept_alive) {
        counters.idle_timeouts.fetch_add(1, std::memory_order_relaxed);
      } else {
        counters.header_timeouts.fetch_add(1, std::memory_order_relaxed);
      }
    }
    for (const int fd : due) drop(fd);
  }

  int wait_ms(Clock::time_point now) const {
    Clock::time_point next = Clock::time_point::max();
    for (const auto& [fd, s] : slots) next = std::min(next, s.deadline);
    if (next == Clock::time_point::max()) return -1;
    if (next <= now) return 0;
    // Rounded up, so the loop wakes after the deadline rather than just before it.
    return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(next - now).count());
  }

  void run() {
    std::array<epoll_event, 64> events{};
    while (!stopping.load(std::memory_order_relaxed)) {
      const int n =
          ::epoll_wait(epoll_fd.get(), events.data(), static_cast<int>(events.size()), wait_ms(Clock::now()));
      const auto now = Clock::now();
      for (int i = 0; i < n; ++i) {
        const int fd = events[static_cast<std::size_t>(i)].data.fd;
        if (fd == listen_fd.get()) {
          accept_all(now);
        } else if (fd == wake_fd.get()) {
          take_returned(now);
        } else if (slots.contains(fd)) {
          on_readable(fd, now);
        }
      }
      expire(Clock::now());
    }
    std::vector<std::pair<Connection, bool>> back;
    {
      std::lock_guard lock(mutex);
      stopped = true;
      back.swap(returned);
    }
    for (auto& [conn, keep] : back) close_connection(conn);
    for (auto& [fd, s] : slots) close_connection(s.conn);
    slots.clear();
    listen_fd.reset();
  }
};

RequestReader::RequestReader(ReaderLimits limits, ReaderCounters& counters, WantsBody wants_body,
                             RequestReady ready)
    : loop_(std::make_unique<Loop>(limits, counters, std::move(wants_body), std::move(ready))) {}

RequestReader::~RequestReader() { stop(); }

Status RequestReader::start(UniqueFd listen_fd) {
  Loop& l = *loop_;
  if (l.thread.joinable()) return make_error("the request reader was already started");
  const int flags = ::fcntl(listen_fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(listen_fd.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    return make_errno_error(
        errno, fmt::format("cannot make the listening socket non-blocking: {}", std::strerror(errno)));
  }
  // A burst of new connections (a scrape among many clients) waits in the kernel, not refused.
  if (::listen(listen_fd.get(), SOMAXCONN) != 0) {
    return make_errno_error(errno, fmt::format("cannot listen: {}", std::strerror(errno)));
  }
  l.epoll_fd.reset(::epoll_create1(EPOLL_CLOEXEC));
  l.wake_fd.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!l.epoll_fd || !l.wake_fd) {
    return make_errno_error(errno,
                            fmt::format("cannot set up the HTTP event loop: {}", std::strerror(errno)));
  }
  for (const int fd : {listen_fd.get(), l.wake_fd.get()}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(l.epoll_fd.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
      return make_errno_error(errno,
                              fmt::format("cannot set up the HTTP event loop: {}", std::strerror(errno)));
    }
  }
  l.listen_fd = std::move(listen_fd);
  l.thread = std::thread([&l] { l.run(); });
  return {};
}

void RequestReader::stop() {
  Loop& l = *loop_;
  if (!l.thread.joinable()) return;
  l.stopping.store(true);
  l.wake();
  l.thread.join();
}

void RequestReader::hand_back(Connection connection, bool keep_alive) {
  Loop& l = *loop_;
  {
    std::lock_guard lock(l.mutex);
    if (!l.stopped) {
      l.returned.emplace_back(std::move(connection), keep_alive);
      l.wake();
      return;
    }
  }
  l.close_connection(connection);
}

}  // namespace eacgm::server
