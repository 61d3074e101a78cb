#include "server/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "export/metrics_table.h"
#include "server/web_session.h"

namespace eacgm::server {
namespace {

using Clock = std::chrono::steady_clock;

// Set on the thread that answers connections beyond the client cap.
thread_local bool t_overloaded = false;

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string json_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

// For log lines: printable, bounded.
std::string printable(std::string_view s, std::size_t max = 120) {
  std::string out;
  for (const char c : s.substr(0, max)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  if (s.size() > max) out += "...";
  return out;
}

// A task queue with a fixed number of workers; connections beyond them wait up to
// `wait`, then a single rejecting thread serves them with t_overloaded set (503).
class BoundedPool final : public httplib::TaskQueue {
 public:
  BoundedPool(std::size_t workers, std::size_t max_waiting, std::chrono::milliseconds wait,
              HttpCounters& counters)
      : workers_(workers),
        max_waiting_(std::max<std::size_t>(max_waiting, 1)),
        wait_(wait),
        counters_(counters) {
    for (std::size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
    threads_.emplace_back([this] { reject(); });
  }

  void enqueue(std::function<void()> fn) override {
    {
      std::unique_lock lock(mutex_);
      space_.wait(lock, [&] { return pending_.size() < max_waiting_ || shutdown_; });
      pending_.push_back({std::move(fn), Clock::now()});
    }
    wake_.notify_all();
  }

  void shutdown() override {
    {
      std::lock_guard lock(mutex_);
      shutdown_ = true;
    }
    wake_.notify_all();
    space_.notify_all();
    for (auto& t : threads_) t.join();
  }

 private:
  struct Job {
    std::function<void()> fn;
    Clock::time_point queued;
  };

  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return !pending_.empty() || shutdown_; });
      if (pending_.empty()) return;  // shutdown with nothing left
      Job job = std::move(pending_.front());
      pending_.pop_front();
      ++busy_;
      lock.unlock();
      space_.notify_one();
      counters_.active_connections.fetch_add(1, std::memory_order_relaxed);
      job.fn();
      counters_.active_connections.fetch_sub(1, std::memory_order_relaxed);
      lock.lock();
      --busy_;
      wake_.notify_all();  // the rejecting thread re-checks whether a worker is free
    }
  }

  void reject() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (pending_.empty()) {
        if (shutdown_) return;
        wake_.wait(lock);
        continue;
      }
      // A free worker takes the connection; the rejecting thread only acts while all
      // are busy and the oldest connection has waited long enough.
      if (busy_ < workers_ && !shutdown_) {
        wake_.wait(lock);
        continue;
      }
      const auto due = pending_.front().queued + wait_;
      if (Clock::now() < due && !shutdown_) {
        wake_.wait_until(lock, due);
        continue;
      }
      Job job = std::move(pending_.front());
      pending_.pop_front();
      lock.unlock();
      space_.notify_one();
      t_overloaded = true;
      job.fn();
      t_overloaded = false;
      lock.lock();
    }
  }

  const std::size_t workers_;
  const std::size_t max_waiting_;
  const std::chrono::milliseconds wait_;
  HttpCounters& counters_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable space_;
  std::deque<Job> pending_;
  std::size_t busy_ = 0;
  bool shutdown_ = false;
  std::vector<std::thread> threads_;
};

enum class BadKind {
  kMalformed,
  kUnauthorized,
  kNotFound,
  kMethod,
  kTooLarge,
  kOverloaded,
  kHandlerError,
  kCount
};

std::string_view kind_text(BadKind k) {
  switch (k) {
    case BadKind::kMalformed:
      return "malformed request";
    case BadKind::kUnauthorized:
      return "request without a valid token";
    case BadKind::kNotFound:
      return "request for an unknown path";
    case BadKind::kMethod:
      return "request with a method other than the path takes (GET/HEAD, or POST)";
    case BadKind::kTooLarge:
      return "request over the size limits";
    case BadKind::kOverloaded:
      return "connection over the client cap";
    case BadKind::kHandlerError:
      return "handler failure";
    case BadKind::kCount:
      break;
  }
  return "bad request";
}

std::string_view kind_metric(BadKind k) {
  switch (k) {
    case BadKind::kUnauthorized:
      return "eacgm_http_unauthorized_total";
    case BadKind::kNotFound:
      return "eacgm_http_not_found_total";
    case BadKind::kMethod:
      return "eacgm_http_method_not_allowed_total";
    case BadKind::kTooLarge:
      return "eacgm_http_payload_too_large_total";
    case BadKind::kOverloaded:
      return "eacgm_http_overloaded_total";
    case BadKind::kHandlerError:
      return "eacgm_http_handler_errors_total";
    default:
      return "eacgm_http_bad_requests_total";
  }
}

std::string_view status_text(int status) {
  switch (status) {
    case 400:
      return "bad request";
    case 404:
      return "not found";
    case 413:
      return "request body too large";
    case 414:
      return "request URI too long";
    case 416:
      return "range not satisfiable";
    case 431:
      return "request headers too large";
    case 500:
      return "internal error";
    default:
      return status < 500 ? "bad request" : "server error";
  }
}

}  // namespace

std::string Request::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return v;
  }
  return {};
}

std::optional<std::string> Request::param(std::string_view name) const {
  for (const auto& [k, v] : params) {
    if (k == name) return v;
  }
  return std::nullopt;
}

Response Response::json_error(int status, std::string_view message) {
  return json(fmt::format("{{\"error\":\"{}\"}}\n", json_escape(message)), status);
}

Response Response::json(std::string body, int status) {
  Response r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

Response event_stream(SseChannel& channel, SseChannel::Filter filter) {
  auto stream = channel.subscribe(filter);
  if (!stream) {
    Response r = Response::json_error(503, "too many event stream clients");
    r.headers.emplace_back("Retry-After", "5");
    return r;
  }
  Response r;
  r.content_type = "text/event-stream";
  r.headers.emplace_back("Cache-Control", "no-cache");
  r.headers.emplace_back("X-Accel-Buffering", "no");
  r.stream = std::move(stream);
  return r;
}

constexpr std::string_view kLoginPath = "/api/v1/login";
constexpr std::string_view kLogoutPath = "/api/v1/logout";

struct HttpServer::Impl {
  httplib::Server svr;
  std::thread thread;
  std::unordered_map<std::string, Handler> routes;
  std::unordered_map<std::string, Handler> post_routes;
  ServerOptions options;
  std::string token;
  HttpCounters counters;
  std::array<std::atomic<bool>, static_cast<std::size_t>(BadKind::kCount)> logged{};
  std::atomic<bool> stopping{false};
  std::atomic<std::uint16_t> port{0};
  bool started = false;

  void note(BadKind kind, const httplib::Request& req, int status) {
    auto& flag = logged[static_cast<std::size_t>(kind)];
    if (!options.log || flag.exchange(true)) return;
    options.log(fmt::format("http: {} ({} {} {} from {}); further ones are counted in {}, not logged",
                            kind_text(kind), status, printable(req.method, 16), printable(req.path),
                            printable(req.remote_addr), kind_metric(kind)));
  }

  bool is_public(const std::string& path) const {
    if (path == kLoginPath || path == kLogoutPath) return true;
    return std::find(options.public_paths.begin(), options.public_paths.end(), path) !=
           options.public_paths.end();
  }

  bool is_post_route(const std::string& path) const { return post_routes.contains(path); }

  enum class Auth { kNone, kBearer, kCookie };

  Auth authorized(const httplib::Request& req) const {
    if (bearer_authorized(req)) return Auth::kBearer;
    if (auto c = cookie_value(req.get_header_value("Cookie"), kSessionCookie);
        c && constant_time_equal(*c, token)) {
      return Auth::kCookie;
    }
    return Auth::kNone;
  }

  bool bearer_authorized(const httplib::Request& req) const {
    if (token.empty()) return true;
    const std::string auth = req.get_header_value("Authorization");
    constexpr std::string_view kScheme = "bearer ";
    if (auth.size() < kScheme.size() || !iequals(std::string_view(auth).substr(0, kScheme.size()), kScheme)) {
      return false;
    }
    std::string_view given = std::string_view(auth).substr(kScheme.size());
    while (!given.empty() && given.front() == ' ') given.remove_prefix(1);
    return constant_time_equal(given, token);
  }

  static void apply(const Response& r, const httplib::Request& req, httplib::Response& res, Impl* self) {
    res.status = r.status;
    for (const auto& [k, v] : r.headers) res.set_header(k, v);
    if (r.stream) {
      if (req.method == "HEAD") {
        res.set_header("Content-Type", r.content_type);
        return;
      }
      auto stream = r.stream;
      res.set_chunked_content_provider(r.content_type, [stream, self](std::size_t, httplib::DataSink& sink) {
        std::string chunk;
        if (self->stopping.load(std::memory_order_relaxed) ||
            !stream->next(chunk, std::chrono::milliseconds(200))) {
          if (!chunk.empty() && !sink.write(chunk.data(), chunk.size())) return false;
          sink.done();
          return true;
        }
        if (chunk.empty()) return true;  // nothing yet: asked again unless the server stops
        return sink.write(chunk.data(), chunk.size());
      });
    } else {
      res.set_content(r.body, r.content_type);
    }
  }

  void dispatch(const httplib::Request& req, httplib::Response& res) {
    if (t_overloaded) {
      counters.overloaded.fetch_add(1, std::memory_order_relaxed);
      note(BadKind::kOverloaded, req, 503);
      Response r = Response::json_error(503, "server busy: too many clients");
      r.headers.emplace_back("Retry-After", "1");
      r.headers.emplace_back("Connection", "close");
      apply(r, req, res, this);
      return;
    }
    // cpp-httplib adds REMOTE_ADDR, REMOTE_PORT, LOCAL_ADDR and LOCAL_PORT.
    if (req.headers.size() > options.max_headers + 4) {
      apply(Response::json_error(431, "too many header lines"), req, res, this);
      return;
    }
    // cpp-httplib reads no body for GET and HEAD: one left unread would be taken for the
    // next request, so say so and ask the client to close.
    if ((req.method == "GET" || req.method == "HEAD") &&
        (req.get_header_value<std::uint64_t>("Content-Length") > 0 || req.has_header("Transfer-Encoding"))) {
      const bool large = req.get_header_value<std::uint64_t>("Content-Length") > options.max_body_bytes;
      Response r = Response::json_error(large ? 413 : 400, "GET and HEAD requests carry no body");
      r.headers.emplace_back("Connection", "close");
      apply(r, req, res, this);
      return;
    }
    const Auth auth = authorized(req);
    if (!is_public(req.path) && auth == Auth::kNone) {
      Response r = Response::json_error(401, "missing or wrong bearer token");
      r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"eacgm\"");
      apply(r, req, res, this);
      return;
    }
    const bool post = req.method == "POST";
    const auto get_route = routes.find(req.path);
    const auto post_it = post_routes.find(req.path);
    if (get_route == routes.end() && post_it == post_routes.end()) {
      apply(Response::json_error(404, "no such path: " + req.path), req, res, this);
      return;
    }
    const bool allowed = post ? post_it != post_routes.end()
                              : (req.method == "GET" || req.method == "HEAD") && get_route != routes.end();
    if (!allowed) {
      Response r = Response::json_error(405, "method not allowed: " + req.method);
      r.headers.emplace_back("Allow", get_route != routes.end() ? "GET, HEAD" : "POST");
      apply(r, req, res, this);
      return;
    }
    // A cookie rides along with a request another site makes the browser send; the
    // browser's Origin header says whose page sent it.
    if (post) {
      const std::string origin = req.get_header_value("Origin");
      const bool cookie_only = auth == Auth::kCookie || (is_public(req.path) && auth != Auth::kBearer);
      if (origin.empty() ? cookie_only && !token.empty()
                         : !origin_matches_host(origin, req.get_header_value("Host"))) {
        apply(Response::json_error(
                  403, origin.empty()
                           ? "a POST from a browser session needs an Origin header"
                           : "cross-origin request refused: Origin " + origin + " is not this server"),
              req, res, this);
        return;
      }
    }
    const Handler& handler = post ? post_it->second : get_route->second;
    Request mine;
    mine.method = req.method;
    mine.path = req.path;
    mine.remote_addr = req.remote_addr;
    for (const auto& [k, v] : req.headers) mine.headers.emplace_back(k, v);
    for (const auto& [k, v] : req.params) mine.params.emplace_back(k, v);
    if (post) mine.body = req.body;
    Response r;
    try {
      r = handler(mine);
    } catch (const std::exception& e) {
      counters.handler_errors.fetch_add(1, std::memory_order_relaxed);
      note(BadKind::kHandlerError, req, 500);
      r = Response::json_error(500, std::string("internal error: ") + e.what());
    } catch (...) {
      counters.handler_errors.fetch_add(1, std::memory_order_relaxed);
      note(BadKind::kHandlerError, req, 500);
      r = Response::json_error(500, "internal error");
    }
    apply(r, req, res, this);
  }

  // A request of another method than GET or HEAD, its body unread: 413 when it says the
  // body is too large, else what dispatch answers (401, 404, 405), and the connection
  // closes.
  void dispatch_bodyless(const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value<std::uint64_t>("Content-Length") > options.max_body_bytes) {
      apply(Response::json_error(413, status_text(413)), req, res, this);
    } else {
      dispatch(req, res);
    }
    res.set_header("Connection", "close");
  }

  // Every response: count it, and tell the first of each kind of bad request.
  void logged_response(const httplib::Request& req, const httplib::Response& res) {
    counters.requests.fetch_add(1, std::memory_order_relaxed);
    const int s = res.status;
    if (s < 400 || s >= 500) return;
    counters.bad_requests.fetch_add(1, std::memory_order_relaxed);
    BadKind kind = BadKind::kMalformed;
    if (s == 401) {
      kind = BadKind::kUnauthorized;
      counters.unauthorized.fetch_add(1, std::memory_order_relaxed);
    } else if (s == 404) {
      kind = BadKind::kNotFound;
      counters.not_found.fetch_add(1, std::memory_order_relaxed);
    } else if (s == 405) {
      kind = BadKind::kMethod;
      counters.method_not_allowed.fetch_add(1, std::memory_order_relaxed);
    } else if (s == 413 || s == 414 || s == 431) {
      kind = BadKind::kTooLarge;
      counters.too_large.fetch_add(1, std::memory_order_relaxed);
    }
    note(kind, req, s);
  }
};

HttpServer::HttpServer() : impl_(std::make_unique<Impl>()) {}

HttpServer::~HttpServer() { stop(); }

void HttpServer::route(std::string path, Handler handler) {
  impl_->routes[std::move(path)] = std::move(handler);
}

void HttpServer::post_route(std::string path, Handler handler) {
  impl_->post_routes[std::move(path)] = std::move(handler);
}

Status HttpServer::start(const ServerOptions& options) {
  Impl& s = *impl_;
  if (s.started) return make_error("the HTTP server was already started");
  if (options.max_clients == 0) return make_error("max_clients must be at least 1");
  const std::string where = host_port(options.address, options.port);
  // A name that is no address at all is said as such, before any rule about addresses.
  {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* found = nullptr;
    if (const int rc = ::getaddrinfo(options.address.c_str(), nullptr, &hints, &found); rc != 0) {
      return make_error(fmt::format("cannot listen on {}: '{}' is not an address or a known host name ({})",
                                    where, options.address, ::gai_strerror(rc)));
    }
    ::freeaddrinfo(found);
  }
  std::string token;
  if (!options.token_file.empty()) {
    auto t = load_token_file(options.token_file);
    if (!t) return make_error(t.error());
    token = std::move(*t);
  } else if (!is_loopback_address(options.address)) {
    return make_error(fmt::format(
        "cannot listen on {} without a token: pass --token-file FILE (mode 0600) or listen on 127.0.0.1",
        where));
  }
  s.options = options;
  s.token = std::move(token);
  add_session_routes();

  auto& svr = s.svr;
  const auto split = [](std::chrono::milliseconds d) {
    return std::pair<time_t, time_t>(d.count() / 1000, (d.count() % 1000) * 1000);
  };
  const auto [rs, rus] = split(options.read_timeout);
  const auto [ws, wus] = split(options.write_timeout);
  svr.set_read_timeout(rs, rus);
  svr.set_write_timeout(ws, wus);
  svr.set_keep_alive_timeout(options.keep_alive_timeout.count());
  svr.set_keep_alive_max_count(std::max<std::size_t>(options.keep_alive_max_requests, 1));
  svr.set_payload_max_length(options.max_body_bytes);
  // Without TCP_NODELAY a response written in two pieces (headers, body) waits for the
  // client's delayed ACK: about 40 ms per request on a kept-open connection.
  svr.set_tcp_nodelay(true);
  // cpp-httplib's default is SO_REUSEPORT, which lets a second daemon bind the same port
  // and silently take half the scrapes; SO_REUSEADDR only allows a quick restart.
  svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  const std::size_t workers = options.max_clients;
  const std::size_t waiting = options.max_waiting;
  const auto wait = options.client_wait;
  svr.new_task_queue = [this, workers, waiting, wait]() -> httplib::TaskQueue* {
    return new BoundedPool(workers, waiting, wait, impl_->counters);
  };
  const auto handler = [this](const httplib::Request& req, httplib::Response& res) {
    impl_->dispatch(req, res);
  };
  svr.Get(".*", handler);
  svr.Post(".*", handler);
  // Other methods are answered before cpp-httplib reads a body: a POST without
  // Content-Length would otherwise hold a worker until the read timeout (its body is
  // read to the end of the connection), and none is ever served. The body stays unread,
  // so the connection closes.
  svr.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "GET" || req.method == "HEAD") return httplib::Server::HandlerResponse::Unhandled;
    // A POST route's body is read (up to max_body_bytes) when its length is given.
    if (req.method == "POST" && impl_->is_post_route(req.path) && req.has_header("Content-Length") &&
        req.get_header_value<std::uint64_t>("Content-Length") <= impl_->options.max_body_bytes) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    impl_->dispatch_bodyless(req, res);
    return httplib::Server::HandlerResponse::Handled;
  });
  // Errors cpp-httplib answers itself (400, 413, 414, 416...) get a JSON body too.
  svr.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request&, httplib::Response& res) -> httplib::Server::HandlerResponse {
        if (!res.body.empty() || res.content_provider_) return httplib::Server::HandlerResponse::Unhandled;
        const Response r = Response::json_error(res.status, status_text(res.status));
        res.set_content(r.body, r.content_type);
        return httplib::Server::HandlerResponse::Handled;
      }));
  svr.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    impl_->logged_response(req, res);
  });

  errno = 0;
  int port = options.port;
  if (options.port == 0) {
    port = svr.bind_to_any_port(options.address);
    if (port <= 0) port = -1;
  } else if (!svr.bind_to_port(options.address, options.port)) {
    port = -1;
  }
  if (port < 0) {
    const int err = errno;
    return make_error(
        fmt::format("cannot listen on {}: {}", where, err ? std::strerror(err) : "address not available"));
  }
  s.port.store(static_cast<std::uint16_t>(port));
  s.started = true;
  s.thread = std::thread([this] { impl_->svr.listen_after_bind(); });
  // stop() only works once the accept loop runs.
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (!svr.is_running() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return {};
}

void HttpServer::stop() {
  Impl& s = *impl_;
  if (!s.thread.joinable()) return;
  s.stopping.store(true);
  while (!s.svr.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  s.svr.stop();
  s.thread.join();
}

// POST /api/v1/login {"token":"..."} sets the session cookie; POST /api/v1/logout ends it.
void HttpServer::add_session_routes() {
  post_route(std::string(kLoginPath), [this](const Request& req) {
    if (impl_->token.empty())
      return Response::json_error(400, "this agent has no token: there is nothing to log in to");
    const LoginBody login = parse_login_body(req.body);
    if (!login.error.empty()) return Response::json_error(400, login.error);
    if (!constant_time_equal(login.token, impl_->token)) return Response::json_error(401, "wrong token");
    Response r;
    r.status = 204;
    r.headers.emplace_back("Set-Cookie", session_cookie(impl_->token));
    r.headers.emplace_back("Set-Cookie", marker_cookie());
    r.headers.emplace_back("Cache-Control", "no-store");
    return r;
  });
  post_route(std::string(kLogoutPath), [](const Request&) {
    Response r;
    r.status = 204;
    r.headers.emplace_back("Set-Cookie", expired_cookie(kSessionCookie, true));
    r.headers.emplace_back("Set-Cookie", expired_cookie(kLoginMarkerCookie, false));
    return r;
  });
}

bool HttpServer::running() const { return impl_->thread.joinable() && !impl_->stopping.load(); }

std::uint16_t HttpServer::port() const { return impl_->port.load(); }

const HttpCounters& HttpServer::counters() const { return impl_->counters; }

namespace {

void add_counter(CounterRegistry& registry, std::string key, std::string_view metric,
                 const std::atomic<std::uint64_t>& value, CounterShow show = CounterShow::kHidden) {
  const auto* def = exporting::find_metric(metric);
  CounterDef d;
  d.key = std::move(key);
  d.metric = std::string(metric);
  d.help = def ? std::string(def->help) : std::string();
  d.kind = def && def->type == exporting::MetricType::kGauge ? CounterKind::kGauge : CounterKind::kCounter;
  d.show = show;
  registry.add(std::move(d), [&value] { return value.load(std::memory_order_relaxed); });
}

}  // namespace

void HttpServer::register_counters(CounterRegistry& registry) const {
  const HttpCounters& c = impl_->counters;
  add_counter(registry, "http_requests", "eacgm_http_requests_total", c.requests);
  add_counter(registry, "http_bad_requests", "eacgm_http_bad_requests_total", c.bad_requests,
              CounterShow::kNonZero);
  add_counter(registry, "http_unauthorized", "eacgm_http_unauthorized_total", c.unauthorized);
  add_counter(registry, "http_not_found", "eacgm_http_not_found_total", c.not_found);
  add_counter(registry, "http_method_not_allowed", "eacgm_http_method_not_allowed_total",
              c.method_not_allowed);
  add_counter(registry, "http_too_large", "eacgm_http_payload_too_large_total", c.too_large);
  add_counter(registry, "http_overloaded", "eacgm_http_overloaded_total", c.overloaded,
              CounterShow::kNonZero);
  add_counter(registry, "http_handler_errors", "eacgm_http_handler_errors_total", c.handler_errors,
              CounterShow::kNonZero);
  add_counter(registry, "http_active", "eacgm_http_active_connections", c.active_connections);
}

void register_sse_counters(CounterRegistry& registry, const SseChannel& channel) {
  add_counter(registry, "sse_clients", "eacgm_sse_clients", channel.clients_now());
  add_counter(registry, "sse_published", "eacgm_sse_events_published_total", channel.published_total());
  add_counter(registry, "sse_dropped", "eacgm_sse_events_dropped_total", channel.dropped_total(),
              CounterShow::kNonZero);
}

Result<std::string> load_token_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return make_error(fmt::format("token file {}: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return make_error(fmt::format("token file {}: {}", path, std::strerror(err)));
  }
  auto fail = [&](std::string message) {
    ::close(fd);
    return make_error(std::move(message));
  };
  if (!S_ISREG(st.st_mode)) return fail(fmt::format("token file {} is not a regular file", path));
  if (st.st_uid != ::geteuid()) {
    return fail(fmt::format("token file {} belongs to uid {}, not to the user running eacgm (uid {})", path,
                            st.st_uid, ::geteuid()));
  }
  if ((st.st_mode & 077) != 0) {
    return fail(fmt::format("token file {} has mode {:04o}, open to group or others: chmod 600 {}", path,
                            st.st_mode & 07777, path));
  }
  constexpr std::size_t kMax = 4096;
  std::string buf(kMax + 2, '\0');
  std::size_t used = 0;
  while (used < buf.size()) {
    const ssize_t n = ::read(fd, buf.data() + used, buf.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(fmt::format("token file {}: {}", path, std::strerror(errno)));
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  ::close(fd);
  buf.resize(used);
  std::string_view t = buf;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  if (t.empty()) return make_error(fmt::format("token file {} is empty", path));
  if (t.size() > kMax)
    return make_error(fmt::format("token file {}: the token is longer than {} bytes", path, kMax));
  for (const char c : t) {
    if (!std::isgraph(static_cast<unsigned char>(c))) {
      return make_error(fmt::format("token file {}: the token has spaces or control characters", path));
    }
  }
  return std::string(t);
}

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

bool constant_time_equal(std::string_view a, std::string_view b) {
  const std::size_t n = std::max(a.size(), b.size());
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
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

}  // namespace eacgm::server
