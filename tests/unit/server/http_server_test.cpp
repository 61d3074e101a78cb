// The HTTP server on 127.0.0.1 with an ephemeral port: routes, JSON errors, 404/405/413,
// bearer tokens (missing, wrong, right; token-file permission checks; no token off
// loopback), the concurrent-client cap, handler failures, counters and log-once.
#include "server/http_server.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http_client.h"
#include "server/standard_routes.h"

namespace eacgm::server {
namespace {

using namespace std::chrono_literals;
using testing::get;
using testing::round_trip;

ServerOptions test_options() {
  ServerOptions o;
  o.port = 0;
  o.keep_alive_timeout = std::chrono::seconds(1);
  o.header_timeout = 2000ms;
  o.body_timeout = 2000ms;
  o.write_timeout = 2000ms;
  return o;
}

Response ok_text(const Request&) {
  Response r;
  r.body = "ok\n";
  return r;
}

struct LogLines {
  std::mutex mutex;
  std::vector<std::string> lines;
  std::function<void(std::string_view)> sink() {
    return [this](std::string_view l) {
      std::lock_guard lock(mutex);
      lines.emplace_back(l);
    };
  }
  std::size_t count_containing(std::string_view s) {
    std::lock_guard lock(mutex);
    std::size_t n = 0;
    for (const auto& l : lines) n += l.find(s) != std::string::npos;
    return n;
  }
};

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("eacgm_http_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string write(const std::string& name, const std::string& content, mode_t mode) {
    const auto p = path_ / name;
    std::ofstream(p) << content;
    ::chmod(p.c_str(), mode);
    return p.string();
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

TEST(HttpServer, RoutesJsonErrorsAndBadMethods) {
  LogLines log;
  HttpServer server;
  server.route("/healthz", ok_text);
  auto options = test_options();
  options.log = log.sink();
  ASSERT_TRUE(server.start(options).ok());
  const auto port = server.port();
  ASSERT_NE(port, 0);

  auto r = get(port, "/healthz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok\n");
  EXPECT_EQ(r.header("Content-Type"), "text/plain; charset=utf-8");

  r = get(port, "/healthz", "", "HEAD");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");

  r = get(port, "/healthz?x=1");
  EXPECT_EQ(r.status, 200) << "the query string is not part of the path";

  for (int i = 0; i < 2; ++i) {
    r = get(port, "/nope");
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(r.header("Content-Type"), "application/json");
    EXPECT_EQ(r.body, "{\"error\":\"no such path: /nope\"}\n");
  }

  r = get(port, "/healthz", "Content-Length: 0\r\n", "POST");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.header("Allow"), "GET, HEAD");
  EXPECT_EQ(r.body, "{\"error\":\"method not allowed: POST\"}\n");
  r = get(port, "/healthz", "", "DELETE");
  EXPECT_EQ(r.status, 405);

  r = round_trip(port, "garbage\r\n\r\n");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.header("Content-Type"), "application/json");

  server.stop();
  const auto& c = server.counters();
  EXPECT_EQ(c.requests.load(), 8u);
  EXPECT_EQ(c.not_found.load(), 2u);
  EXPECT_EQ(c.method_not_allowed.load(), 2u);
  EXPECT_EQ(c.bad_requests.load(), 5u);
  // One line per kind, however many of that kind.
  EXPECT_EQ(log.count_containing("unknown path"), 1u);
  EXPECT_EQ(log.count_containing("a method other than the path takes"), 1u);
  EXPECT_EQ(log.count_containing("malformed"), 1u);
  EXPECT_EQ(log.count_containing("eacgm_http_not_found_total"), 1u);
}

// A POST, PUT or PATCH whose body never comes (no Content-Length, the connection left
// open) is answered at once: no body is read for a method that is never served.
TEST(HttpServer, OtherMethodsAreAnsweredWithoutWaitingForABody) {
  HttpServer server;
  server.route("/metrics", ok_text);
  auto options = test_options();
  options.body_timeout = 60s;  // what waiting for the body would cost
  options.header_timeout = 60s;
  ASSERT_TRUE(server.start(options).ok());
  for (const char* method : {"POST", "PUT", "PATCH"}) {
    const int fd = testing::connect_to(server.port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(testing::send_all(fd, std::string(method) + " /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
    // The whole reply: its JSON body ends in "}\n".
    const auto raw = testing::read_until(
        fd, [](const std::string& got) { return got.find("\"}\n") != std::string::npos; }, 30s);
    ::close(fd);
    const testing::Reply r = testing::parse_reply(raw);
    EXPECT_EQ(r.status, 405) << method << ": " << raw;
    EXPECT_EQ(r.header("Allow"), "GET, HEAD") << method;
    EXPECT_EQ(r.header("Connection"), "close") << method;
    EXPECT_EQ(r.body, std::string("{\"error\":\"method not allowed: ") + method + "\"}\n");
  }
  server.stop();
  EXPECT_EQ(server.counters().method_not_allowed.load(), 3u);
}

TEST(HttpServer, OversizeRequestsAre413) {
  HttpServer server;
  server.route("/healthz", ok_text);
  auto options = test_options();
  options.max_body_bytes = 1024;
  ASSERT_TRUE(server.start(options).ok());
  const std::string body(1 << 20, 'x');
  auto r =
      round_trip(server.port(), "POST /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: " +
                                    std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.header("Content-Type"), "application/json");
  r = get(server.port(), "/healthz", "Content-Length: 1048576\r\n");
  EXPECT_EQ(r.status, 413);
  r = get(server.port(), "/" + std::string(9000, 'a'));
  EXPECT_EQ(r.status, 414);
  std::string many;
  for (int i = 0; i < 80; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  r = get(server.port(), "/healthz", many);
  EXPECT_EQ(r.status, 431);
  server.stop();
  EXPECT_EQ(server.counters().too_large.load(), 4u);
}

TEST(HttpServer, BearerToken) {
  TempDir dir;
  const std::string token = "s3cr3t-token_value";
  HttpServer server;
  server.route("/metrics", ok_text);
  server.route("/healthz", ok_text);
  auto options = test_options();
  options.token_file = dir.write("token", token + "\n", 0600);
  options.public_paths = {"/healthz"};
  ASSERT_TRUE(server.start(options).ok());
  const auto port = server.port();

  auto r = get(port, "/metrics");
  EXPECT_EQ(r.status, 401);
  EXPECT_TRUE(r.header("WWW-Authenticate").starts_with("Bearer")) << r.head;
  EXPECT_EQ(r.header("Content-Type"), "application/json");
  r = get(port, "/metrics", "Authorization: Bearer wrong\r\n");
  EXPECT_EQ(r.status, 401);
  r = get(port, "/metrics", "Authorization: Bearer " + token + "x\r\n");
  EXPECT_EQ(r.status, 401);
  r = get(port, "/metrics", "Authorization: Basic " + token + "\r\n");
  EXPECT_EQ(r.status, 401);
  r = get(port, "/nope", "");
  EXPECT_EQ(r.status, 401) << "paths are not revealed without a token";
  r = get(port, "/metrics", "Authorization: Bearer " + token + "\r\n");
  EXPECT_EQ(r.status, 200);
  r = get(port, "/metrics", "Authorization: bearer " + token + "\r\n");
  EXPECT_EQ(r.status, 200);
  r = get(port, "/healthz");
  EXPECT_EQ(r.status, 200) << "public path";
  server.stop();
  EXPECT_EQ(server.counters().unauthorized.load(), 5u);
}

TEST(HttpServer, TokenFileMustBePrivate) {
  TempDir dir;
  auto r = load_token_file(dir.write("open", "abc\n", 0644));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("mode 0644"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("chmod 600"), std::string::npos) << r.error();
  EXPECT_FALSE(load_token_file(dir.write("group", "abc", 0640)).ok());
  EXPECT_FALSE(load_token_file(dir.write("empty", " \n", 0600)).ok());
  EXPECT_FALSE(load_token_file(dir.write("spaces", "a b", 0600)).ok());
  EXPECT_FALSE(load_token_file(dir.write("long", std::string(5000, 'a'), 0600)).ok());
  EXPECT_FALSE(load_token_file("/nonexistent/token").ok());
  auto good = load_token_file(dir.write("good", "  tok\n", 0400));
  ASSERT_TRUE(good.ok()) << good.error();
  EXPECT_EQ(*good, "tok");

  // Owned by another user (only root can give a file away; others skip this part).
  const std::string theirs = dir.write("theirs", "tok", 0600);
  if (::chown(theirs.c_str(), 65534, 65534) == 0) {
    auto t = load_token_file(theirs);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().find("belongs to uid 65534"), std::string::npos) << t.error();
  }

  HttpServer server;
  auto options = test_options();
  options.token_file = dir.write("open2", "abc", 0644);
  auto s = server.start(options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("mode 0644"), std::string::npos);
}

TEST(HttpServer, NetworkAddressNeedsAToken) {
  for (const char* address : {"0.0.0.0", "::", "10.1.2.3"}) {
    HttpServer server;
    auto options = test_options();
    options.address = address;
    auto s = server.start(options);
    ASSERT_FALSE(s.ok()) << address;
    EXPECT_NE(s.error().find("without a token"), std::string::npos) << s.error();
    EXPECT_EQ(s.error().find('\n'), std::string::npos) << "one line";
  }
  TempDir dir;
  HttpServer server;
  auto options = test_options();
  options.address = "0.0.0.0";
  options.token_file = dir.write("token", "tok", 0600);
  auto s = server.start(options);
  ASSERT_TRUE(s.ok()) << s.error();
  server.stop();
}

TEST(HttpServer, AnAddressThatIsNoneIsSaidToBeNone) {
  HttpServer server;
  auto options = test_options();
  options.address = "nonsense";
  auto s = server.start(options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("'nonsense' is not an address or a known host name"), std::string::npos)
      << s.error();
  EXPECT_EQ(s.error().find("token"), std::string::npos) << s.error();
}

TEST(HttpServer, AddressHelpers) {
  EXPECT_TRUE(is_loopback_address("127.0.0.1"));
  EXPECT_TRUE(is_loopback_address("127.1.2.3"));
  EXPECT_TRUE(is_loopback_address("::1"));
  EXPECT_TRUE(is_loopback_address("[::1]"));
  EXPECT_TRUE(is_loopback_address("::ffff:127.0.0.1"));
  EXPECT_TRUE(is_loopback_address("localhost"));
  EXPECT_FALSE(is_loopback_address("0.0.0.0"));
  EXPECT_FALSE(is_loopback_address("::"));
  EXPECT_FALSE(is_loopback_address("192.168.1.1"));
  EXPECT_FALSE(is_loopback_address("node1.example"));

  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "abcd"));
  EXPECT_FALSE(constant_time_equal("", "a"));
  EXPECT_TRUE(constant_time_equal("", ""));

  EXPECT_EQ(host_port("::1", 9977), "[::1]:9977");
  EXPECT_EQ(host_port("127.0.0.1", 9977), "127.0.0.1:9977");
  EXPECT_EQ(host_port("node1.example", 80), "node1.example:80");

  auto a = parse_listen_address("0.0.0.0:9100");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "0.0.0.0");
  EXPECT_EQ(a->port, 9100);
  a = parse_listen_address("[::1]:8000");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 8000);
  a = parse_listen_address(":9999");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9999);
  a = parse_listen_address("1234");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->port, 1234);
  a = parse_listen_address("localhost");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "localhost");
  EXPECT_EQ(a->port, kDefaultPort);
  EXPECT_FALSE(parse_listen_address("host:99999").ok());
  EXPECT_FALSE(parse_listen_address("::1:80").ok());
  EXPECT_FALSE(parse_listen_address("").ok());
}

// A URL where HOST:PORT belongs is told to drop its scheme, not to bracket an IPv6 address.
TEST(HttpServer, ListenAddressWrittenAsAUrlIsToldToDropTheScheme) {
  auto a = parse_listen_address("http://127.0.0.1:9978");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error(),
            "listen address \"http://127.0.0.1:9978\" is a URL; drop the scheme \"http://\" and write "
            "HOST:PORT (\"127.0.0.1:9978\")");
  a = parse_listen_address("https://[::1]:8000/");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().find("(\"[::1]:8000\")"), std::string::npos) << a.error();
  EXPECT_EQ(a.error().find("IPv6"), std::string::npos) << a.error();
}

TEST(HttpServer, PortInUseIsAnError) {
  HttpServer first;
  ASSERT_TRUE(first.start(test_options()).ok());
  HttpServer second;
  auto options = test_options();
  options.port = first.port();
  auto s = second.start(options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("cannot listen on 127.0.0.1:" + std::to_string(first.port())), std::string::npos)
      << s.error();
}

TEST(HttpServer, HandlerFailureIs500) {
  LogLines log;
  HttpServer server;
  server.route("/boom", [](const Request&) -> Response { throw std::runtime_error("kaput"); });
  auto options = test_options();
  options.log = log.sink();
  ASSERT_TRUE(server.start(options).ok());
  auto r = get(server.port(), "/boom");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "{\"error\":\"internal error: kaput\"}\n");
  server.stop();
  EXPECT_EQ(server.counters().handler_errors.load(), 1u);
  EXPECT_EQ(log.count_containing("handler failure"), 1u);
}

// A browser takes br, gzip and deflate: it gets gzip, which is fast, never brotli at
// cpp-httplib's highest quality, which took seconds for a few hundred KiB.
TEST(HttpServer, BrowsersGetGzipNotBrotli) {
  HttpServer server;
  std::string big = "[";
  for (int i = 0; i < 20000; ++i)
    big += "{\"pid\":" + std::to_string(i * 7919 % 100003) + ",\"calls\":" + std::to_string(i) + "},";
  big.back() = ']';
  server.route("/big", [&big](const Request&) { return Response::json(big); });
  ASSERT_TRUE(server.start(test_options()).ok());
  auto r = get(server.port(), "/big", "Accept-Encoding: gzip, deflate, br\r\n");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Encoding"), "gzip");
  EXPECT_LT(r.body.size(), big.size() / 3);
  r = get(server.port(), "/big", "Accept-Encoding: br\r\n");
  EXPECT_EQ(r.header("Content-Encoding"), "");
  EXPECT_EQ(r.body, big);
  r = get(server.port(), "/big");
  EXPECT_EQ(r.body, big);
  server.stop();
}

TEST(HttpServer, ClientCapAnswers503AfterAShortWait) {
  std::atomic<bool> release{false};
  std::atomic<int> inside{0};
  HttpServer server;
  server.route("/slow", [&](const Request&) {
    ++inside;
    while (!release.load()) std::this_thread::sleep_for(1ms);
    return Response::json("{}");
  });
  server.route("/healthz", ok_text);
  auto options = test_options();
  options.max_clients = 2;
  options.client_wait = 100ms;
  ASSERT_TRUE(server.start(options).ok());
  const auto port = server.port();

  auto slow1 = std::async(std::launch::async, [&] { return get(port, "/slow"); });
  auto slow2 = std::async(std::launch::async, [&] { return get(port, "/slow"); });
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (inside.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(inside.load(), 2);
  EXPECT_EQ(server.counters().active_connections.load(), 2u);

  const auto t0 = std::chrono::steady_clock::now();
  auto r = get(port, "/healthz");
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.header("Retry-After"), "1");
  EXPECT_EQ(r.header("Connection"), "close");
  EXPECT_GE(waited, 90ms) << "waits client_wait for a worker first";
  EXPECT_EQ(server.counters().overloaded.load(), 1u);

  release = true;
  EXPECT_EQ(slow1.get().status, 200);
  EXPECT_EQ(slow2.get().status, 200);
  EXPECT_EQ(get(port, "/healthz").status, 200);
  server.stop();

  // A connection that arrives while every worker is busy is served if one frees in time.
  HttpServer patient;
  std::atomic<bool> release2{false};
  std::atomic<int> inside2{0};
  patient.route("/slow", [&](const Request&) {
    ++inside2;
    while (!release2.load()) std::this_thread::sleep_for(1ms);
    return Response::json("{}");
  });
  patient.route("/healthz", ok_text);
  options.max_clients = 1;
  options.client_wait = 5000ms;
  ASSERT_TRUE(patient.start(options).ok());
  auto hold = std::async(std::launch::async, [&] { return get(patient.port(), "/slow"); });
  while (inside2.load() < 1) std::this_thread::sleep_for(1ms);
  auto waiting = std::async(std::launch::async, [&] { return get(patient.port(), "/healthz"); });
  std::this_thread::sleep_for(200ms);
  release2 = true;
  EXPECT_EQ(waiting.get().status, 200);
  EXPECT_EQ(hold.get().status, 200);
  EXPECT_EQ(patient.counters().overloaded.load(), 0u);
  patient.stop();
}

TEST(HttpServer, CountersInARegistry) {
  HttpServer server;
  server.route("/healthz", ok_text);
  ASSERT_TRUE(server.start(test_options()).ok());
  CounterRegistry registry;
  server.register_counters(registry);
  get(server.port(), "/healthz");
  get(server.port(), "/nope");
  server.stop();
  const CounterValues v = registry.read();
  EXPECT_EQ(v.get("http_requests"), 2u);
  EXPECT_EQ(v.get("http_not_found"), 1u);
  for (const auto& c : v.values) {
    EXPECT_FALSE(c.def->help.empty()) << c.def->metric << " has help from the metrics table";
  }
}

}  // namespace
}  // namespace eacgm::server

namespace eacgm::server {
namespace {

TEST(StandardRoutes, MetricsNegotiatesHealthAndReadiness) {
  std::atomic<bool> ready{false};
  HttpServer server;
  add_standard_routes(server,
                      StandardRoutes{
                          .write_metrics =
                              [](ExpositionWriter& w) {
                                w.begin_family({"eacgm_up_total", MetricType::kCounter, "Up.", ""});
                                w.add({}, std::uint64_t{1});
                              },
                          .not_ready_reason = [&] { return ready ? std::string() : std::string("starting"); },
                      });
  ASSERT_TRUE(server.start(test_options()).ok());
  const auto port = server.port();
  auto r = get(port, "/metrics");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(r.body, "# HELP eacgm_up_total Up.\n# TYPE eacgm_up_total counter\neacgm_up_total 1\n");
  r = get(port, "/metrics", "Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5\r\n");
  EXPECT_EQ(r.header("Content-Type"), "application/openmetrics-text; version=1.0.0; charset=utf-8");
  EXPECT_EQ(r.body, "# HELP eacgm_up Up.\n# TYPE eacgm_up counter\neacgm_up_total 1\n# EOF\n");
  EXPECT_EQ(get(port, "/healthz").body, "ok\n");
  r = get(port, "/readyz");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "{\"error\":\"not ready: starting\"}\n");
  ready = true;
  r = get(port, "/readyz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ready\n");
}

}  // namespace
}  // namespace eacgm::server
