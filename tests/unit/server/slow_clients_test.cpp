// The server under slow, idle and hostile clients: 64 connections held open in five
// states (silent after connect, half a request line, headers dripped a byte at a time,
// a body that never comes, idle keep-alive) while /metrics is scraped over the daemon's
// real routes; the open-connection cap; keep-alive, pipelining and 100-continue through
// the event loop; what the loop reads from a request's head.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstring>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http_client.h"
#include "recorded_daemon.h"
#include "server/http_server.h"
#include "server/request_reader.h"

namespace eacgm::server {
namespace {

using namespace std::chrono_literals;
using testing::connect_to;
using testing::get;
using testing::send_all;

// The value of an unlabelled series in Prometheus text; -1 when absent.
long long metric_value(const std::string& text, const std::string& name) {
  const std::string key = "\n" + name + " ";
  const auto at = text.find(key);
  if (at == std::string::npos) return -1;
  long long v = -1;
  const char* begin = text.data() + at + key.size();
  std::from_chars(begin, text.data() + text.size(), v);
  return v;
}

// Whole responses, one at a time, from a kept-open connection: bytes read past one
// (the next pipelined response) are kept for the next call.
class ReplyReader {
 public:
  explicit ReplyReader(int fd) : fd_(fd) {}
  testing::Reply next() {
    pending_ +=
        testing::read_until(fd_, [this](const std::string& got) { return whole(pending_ + got) > 0; });
    const std::size_t n = whole(pending_);
    const std::string one = pending_.substr(0, n == 0 ? pending_.size() : n);
    pending_.erase(0, one.size());
    return testing::parse_reply(one);
  }

 private:
  // The length of the first whole response in `got`; 0 while there is none.
  static std::size_t whole(const std::string& got) {
    const auto end = got.find("\r\n\r\n");
    if (end == std::string::npos) return 0;
    const auto cl = got.find("Content-Length: ");
    const std::size_t body = cl == std::string::npos || cl > end ? 0 : std::stoul(got.substr(cl + 16));
    return got.size() >= end + 4 + body ? end + 4 + body : 0;
  }
  int fd_;
  std::string pending_;
};

testing::Reply read_reply(int fd) { return ReplyReader(fd).next(); }

// True once the server has closed `fd` (EOF), reading and dropping anything it sent.
bool closed_by_server(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return true;  // EOF, or a reset: closed either way
  }
}

enum class Hostile { kSilent, kPartialLine, kDripping, kNoBody, kIdleKeepAlive, kKinds };

TEST(SlowClients, ScrapesAreAnsweredWhileSixtyFourConnectionsHang) {
  Daemon daemon(test::recorded_daemon(test::recorded_snapshot()));
  ASSERT_TRUE(daemon.start());
  const auto port = daemon.port();

  constexpr int kHostile = 64;
  std::vector<int> fds;
  std::vector<Hostile> kinds;
  std::mutex drip_mutex;
  std::vector<int> dripping;
  for (int i = 0; i < kHostile; ++i) {
    const auto kind = static_cast<Hostile>(i % static_cast<int>(Hostile::kKinds));
    const int fd = connect_to(port);
    ASSERT_GE(fd, 0);
    fds.push_back(fd);
    kinds.push_back(kind);
    switch (kind) {
      case Hostile::kSilent:
        break;
      case Hostile::kPartialLine:
        ASSERT_TRUE(send_all(fd, "GET /metr"));
        break;
      case Hostile::kDripping: {
        ASSERT_TRUE(send_all(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: "));
        std::lock_guard lock(drip_mutex);
        dripping.push_back(fd);
        break;
      }
      case Hostile::kNoBody:
        // A POST route's body, promised and never sent whole.
        ASSERT_TRUE(send_all(fd,
                             "POST /api/v1/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                             "Content-Length: 64\r\n\r\n{\"tok"));
        break;
      case Hostile::kIdleKeepAlive: {
        ASSERT_TRUE(send_all(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
        const testing::Reply r = read_reply(fd);
        ASSERT_EQ(r.status, 200) << r.head;
        ASSERT_EQ(r.body, "ok\n");
        break;
      }
      case Hostile::kKinds:
        break;
    }
  }
  // Headers that never end: one more byte every 300 ms, without a line break.
  std::atomic<bool> stop_drip{false};
  std::thread dripper([&] {
    while (!stop_drip.load()) {
      {
        std::lock_guard lock(drip_mutex);
        for (const int fd : dripping) ::send(fd, "a", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      std::this_thread::sleep_for(300ms);
    }
  });

  // Every scrape is answered while all 64 are still open and none has been closed by a
  // deadline: no scrape waited for a slow client.
  constexpr int kScrapes = 24;
  int answered = 0;
  for (int i = 0; i < kScrapes; ++i) {
    const testing::Reply r = get(port, "/metrics");
    EXPECT_EQ(r.status, 200) << "scrape " << i << ": " << r.head;
    if (r.status != 200) continue;
    EXPECT_GE(metric_value(r.body, "eacgm_http_open_connections"), kHostile + 1) << "scrape " << i;
    EXPECT_EQ(metric_value(r.body, "eacgm_http_header_timeouts_total") +
                  metric_value(r.body, "eacgm_http_body_timeouts_total") +
                  metric_value(r.body, "eacgm_http_idle_timeouts_total") +
                  metric_value(r.body, "eacgm_http_connections_shed_total"),
              0)
        << "scrape " << i << " came after a slow connection's deadline";
    ++answered;
  }
  EXPECT_EQ(answered, kScrapes);

  // Then the server closes every one of them at its deadline (5 s by default).
  for (std::size_t i = 0; i < fds.size(); ++i) {
    EXPECT_TRUE(closed_by_server(fds[i], 30s))
        << "connection " << i << " of kind " << static_cast<int>(kinds[i]);
  }
  stop_drip = true;
  dripper.join();
  for (const int fd : fds) ::close(fd);

  const testing::Reply after = get(port, "/metrics");
  ASSERT_EQ(after.status, 200);
  // Silent, half a request line, dripped headers: 13 each; no body: 13; idle: 12.
  EXPECT_EQ(metric_value(after.body, "eacgm_http_header_timeouts_total"), 39);
  EXPECT_EQ(metric_value(after.body, "eacgm_http_body_timeouts_total"), 13);
  EXPECT_EQ(metric_value(after.body, "eacgm_http_idle_timeouts_total"), 12);
  EXPECT_EQ(metric_value(after.body, "eacgm_http_connections_shed_total"), 0);
  EXPECT_EQ(metric_value(after.body, "eacgm_http_open_connections"), 1) << "only the scrape's own";
  daemon.stop();
}

ServerOptions patient_options() {
  ServerOptions o;
  o.port = 0;
  o.header_timeout = 60s;  // nothing here closes by a deadline
  o.keep_alive_timeout = 60s;
  return o;
}

Response ok_text(const Request&) {
  Response r;
  r.body = "ok\n";
  return r;
}

bool wait_for(auto pred) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(SlowClients, AtTheConnectionCapTheOldestIdleOneGoesThenNewOnesAreRefused) {
  std::atomic<bool> release{false};
  std::atomic<int> inside{0};
  HttpServer server;
  server.route("/healthz", ok_text);
  server.route("/slow", [&](const Request&) {
    ++inside;
    while (!release.load()) std::this_thread::sleep_for(1ms);
    return ok_text(Request{});
  });
  auto options = patient_options();
  options.max_connections = 2;
  options.max_clients = 2;
  ASSERT_TRUE(server.start(options).ok());
  const auto port = server.port();
  const auto& open = server.counters().connections.open;

  // Two idle connections fill the cap; a scrape still gets in, in place of the older. The
  // two connect back to back, so the server mostly accepts them in one batch (one clock
  // reading for both): the order they were accepted in still tells them apart.
  const int older = connect_to(port);
  const int newer = connect_to(port);
  ASSERT_TRUE(wait_for([&] { return open.load() == 2; }));
  EXPECT_EQ(get(port, "/healthz").status, 200);
  EXPECT_EQ(server.counters().connections.shed.load(), 1u);
  EXPECT_TRUE(closed_by_server(older, 10s));
  ::close(older);
  ::close(newer);
  ASSERT_TRUE(wait_for([&] { return open.load() == 0; }));

  // Both connections being served (none idle): a new one is closed unanswered.
  auto slow1 = std::async(std::launch::async, [&] { return get(port, "/slow"); });
  auto slow2 = std::async(std::launch::async, [&] { return get(port, "/slow"); });
  ASSERT_TRUE(wait_for([&] { return inside.load() == 2; }));
  EXPECT_EQ(get(port, "/healthz").status, 0) << "closed without a reply";
  EXPECT_EQ(server.counters().connections.shed.load(), 2u);
  release = true;
  EXPECT_EQ(slow1.get().status, 200);
  EXPECT_EQ(slow2.get().status, 200);
  server.stop();
}

TEST(SlowClients, KeepAlivePipeliningAndContinueGoThroughTheEventLoop) {
  HttpServer server;
  server.route("/healthz", ok_text);
  ASSERT_TRUE(server.start(patient_options()).ok());
  const int fd = connect_to(server.port());
  ASSERT_GE(fd, 0);
  // Two requests in one write, answered in order on the same connection.
  ReplyReader replies(fd);
  ASSERT_TRUE(send_all(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(replies.next().status, 200);
  EXPECT_EQ(replies.next().status, 404);
  // A third, later, still on it.
  ASSERT_TRUE(send_all(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  const testing::Reply third = replies.next();
  EXPECT_EQ(third.status, 200);
  EXPECT_EQ(third.body, "ok\n");

  // A POST route's body after 100 Continue (the login route: this server has no token).
  const std::string body = R"({"token":"x"})";
  ASSERT_TRUE(
      send_all(fd, "POST /api/v1/login HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: " +
                       std::to_string(body.size()) + "\r\n\r\n"));
  const std::string cont = testing::read_until(
      fd, [](const std::string& got) { return got.find("\r\n\r\n") != std::string::npos; });
  EXPECT_EQ(cont, "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(send_all(fd, body));
  const testing::Reply login = replies.next();
  EXPECT_EQ(login.status, 400) << login.head;
  EXPECT_NE(login.body.find("this agent has no token"), std::string::npos) << login.body;
  ::close(fd);
  server.stop();
  EXPECT_EQ(server.counters().requests.load(), 4u);
}

// The event loop serves the socket cpp-httplib bound, IPv6 as well as IPv4.
TEST(SlowClients, AnIpv6ListenAddressIsServed) {
  const int probe = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in6 any{};
  any.sin6_family = AF_INET6;
  any.sin6_addr = in6addr_loopback;
  const bool have_v6 = probe >= 0 && ::bind(probe, reinterpret_cast<sockaddr*>(&any), sizeof any) == 0;
  if (probe >= 0) ::close(probe);
  if (!have_v6) GTEST_SKIP() << "this machine has no IPv6 loopback";
  HttpServer server;
  server.route("/healthz", ok_text);
  auto options = patient_options();
  options.address = "::1";
  ASSERT_TRUE(server.start(options).ok());
  const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in6 to = any;
  to.sin6_port = htons(server.port());
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0) << std::strerror(errno);
  ASSERT_TRUE(send_all(fd, "GET /healthz HTTP/1.1\r\nHost: [::1]\r\n\r\n"));
  const testing::Reply r = read_reply(fd);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok\n");
  ::close(fd);
  server.stop();
}

// Streams and captures hold a worker each for their life: together they leave a quarter
// of the workers (from 4 on) to scrapes and API calls.
TEST(SlowClients, StreamsAndCapturesLeaveWorkersFree) {
  EXPECT_EQ(sse_clients_for(8), 4u);
  EXPECT_EQ(captures_for(8), 2u);
  EXPECT_EQ(sse_clients_for(64), 4u);
  EXPECT_EQ(captures_for(64), 16u);
  EXPECT_EQ(sse_clients_for(4), 2u);
  EXPECT_EQ(captures_for(4), 1u);
  EXPECT_EQ(sse_clients_for(1), 0u) << "one worker: no stream may keep it";
  for (std::size_t workers = 4; workers <= 256; ++workers) {
    EXPECT_LT(sse_clients_for(workers) + captures_for(workers), workers) << workers;
  }
}

TEST(RequestReader, ReadsWhatTheHeadSaysAboutTheBody) {
  HeadFacts f =
      read_head("POST /api/v1/login?x=1 HTTP/1.1\r\nHost: a\r\ncontent-length:  12 \r\nExpect: 100-continue");
  EXPECT_EQ(f.method, "POST");
  EXPECT_EQ(f.target, "/api/v1/login?x=1");
  EXPECT_EQ(f.content_length, 12u);
  EXPECT_TRUE(f.expect_continue);
  EXPECT_FALSE(f.bad_length);
  EXPECT_FALSE(f.chunked);

  f = read_head("POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2");
  EXPECT_TRUE(f.bad_length) << "given twice";
  f = read_head("POST /x HTTP/1.1\r\nContent-Length: 1x");
  EXPECT_TRUE(f.bad_length);
  f = read_head("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked");
  EXPECT_TRUE(f.chunked);
  EXPECT_EQ(f.content_length, 0u);
  f = read_head("GET /metrics HTTP/1.1");
  EXPECT_EQ(f.method, "GET");
  EXPECT_EQ(f.target, "/metrics");
  f = read_head("garbage");
  EXPECT_EQ(f.method, "");
}

}  // namespace
}  // namespace eacgm::server
