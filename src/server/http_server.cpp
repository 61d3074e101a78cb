// The HTTP server: cpp-httplib's request handling on a worker pool fed by the event loop,
// with routing, authorization, size limits, JSON errors and the counting of bad requests.
#include "server/http_server.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "core/ascii_text.h"
#include "core/unique_fd.h"
#include "server/web_session.h"
#include "server/worker_pool.h"

namespace eacgm::server {
namespace {

using Clock = std::chrono::steady_clock;

// Set on the rejecting thread while it answers a request beyond the client cap.
thread_local bool t_overloaded = false;
// Set by the response logger when the response ends its connection (Connection: close,
// or an error after which the rest of the request cannot be trusted).
thread_local bool t_close_after = false;

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

// cpp-httplib's request handling on a worker: its parsing, routing, ranges and chunked
// streaming, over a request the event loop has read whole (server/request_reader.h).
class RequestServer final : public httplib::Server {
 public:
  bool serve(httplib::Stream& strm, bool close_connection, bool& connection_closed) {
    return process_request(strm, close_connection, connection_closed, [](httplib::Request& req) {
      // The event loop has answered Expect: 100-continue already, when the body was wanted.
      req.headers.erase("Expect");
      // cpp-httplib compresses with brotli at its highest quality whenever a client takes
      // it, as every browser does: seconds of a worker for a few hundred KiB of JSON.
      // gzip at zlib's default level makes nearly as small an answer in milliseconds.
      auto enc = req.headers.find("Accept-Encoding");
      if (enc != req.headers.end() && enc->second.find("br") != std::string::npos) {
        const bool gzip = enc->second.find("gzip") != std::string::npos;
        req.headers.erase(enc);
        if (gzip) req.headers.emplace("Accept-Encoding", "gzip");
      }
    });
  }
  // A duplicate of the socket bind_to_port made, for the event loop (cpp-httplib's accept
  // loop is not used). cpp-httplib's own stays open: a streamed response runs while it is.
  UniqueFd listening_socket() const { return UniqueFd(::fcntl(svr_sock_, F_DUPFD_CLOEXEC, 0)); }
  // Ends streamed responses at their next chunk.
  void close_listening_socket() { UniqueFd(svr_sock_.exchange(INVALID_SOCKET)).reset(); }
};

// A connection's request as cpp-httplib reads it: the bytes the event loop read, then
// end of input; responses go straight to the socket, each write within write_timeout.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(const Connection& conn, std::chrono::milliseconds write_timeout)
      : fd_(conn.fd.get()), bytes_(conn.bytes), write_timeout_(write_timeout) {}

  bool is_readable() const override { return read_ < bytes_.size(); }

  // Writable within the write timeout, and the client still there.
  bool is_writable() const override {
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, static_cast<int>(write_timeout_.count())) <= 0 || (p.revents & (POLLERR | POLLHUP))) {
      return false;
    }
    pollfd r{fd_, POLLIN, 0};
    if (::poll(&r, 1, 0) <= 0) return true;
    char c = 0;
    return ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
  }

  ssize_t read(char* ptr, std::size_t size) override {
    const std::size_t n = std::min(size, bytes_.size() - read_);
    if (n == 0) {
      ran_dry_ = true;
      return 0;
    }
    std::memcpy(ptr, bytes_.data() + read_, n);
    read_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, std::size_t size) override {
    const auto deadline = Clock::now() + write_timeout_;
    std::size_t sent = 0;
    while (sent < size) {
      const ssize_t n = ::send(fd_, ptr + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) return -1;
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd p{fd_, POLLOUT, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return -1;
    }
    return static_cast<ssize_t>(size);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) numeric(a, len, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) numeric(a, len, ip, port);
  }
  socket_t socket() const override { return fd_; }

  std::size_t consumed() const { return read_; }
  // cpp-httplib wanted more than the loop read (a body it was not to wait for).
  bool ran_dry() const { return ran_dry_; }

 private:
  static void numeric(const sockaddr_storage& a, socklen_t len, std::string& ip, int& port) {
    std::array<char, NI_MAXHOST> host{};
    std::array<char, NI_MAXSERV> serv{};
    if (::getnameinfo(reinterpret_cast<const sockaddr*>(&a), len, host.data(), host.size(), serv.data(),
                      serv.size(), NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
      ip = host.data();
      port = std::atoi(serv.data());
    }
  }

  int fd_;
  const std::string& bytes_;
  std::chrono::milliseconds write_timeout_;
  std::size_t read_ = 0;
  bool ran_dry_ = false;
};

struct HttpServer::Impl {
  RequestServer svr;
  std::unique_ptr<WorkerPool> pool;
  std::unique_ptr<RequestReader> reader;
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
    return bearer_matches(req.get_header_value("Authorization"), token);
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

  // One request on a worker (or, `overloaded`, on the rejecting thread: 503); after it
  // a kept-alive connection goes back to the event loop for its next request.
  void serve(Connection conn, bool overloaded) {
    if (conn.head_too_large) {
      refuse_head(conn);
      reader->hand_back(std::move(conn), false);
      return;
    }
    ConnectionStream strm(conn, options.write_timeout);
    const bool last = conn.served + 1 >= std::max<std::size_t>(options.keep_alive_max_requests, 1) ||
                      stopping.load(std::memory_order_relaxed);
    bool closed = false;
    t_overloaded = overloaded;
    t_close_after = false;
    const bool ok = svr.serve(strm, last, closed);
    t_overloaded = false;
    ++conn.served;
    conn.bytes.erase(0, strm.consumed());
    const bool keep = ok && !closed && !last && !t_close_after && !strm.ran_dry() &&
                      !stopping.load(std::memory_order_relaxed);
    reader->hand_back(std::move(conn), keep);
  }

  // A head past kMaxHeadBytes: 431, written here (cpp-httplib would read it line by line).
  void refuse_head(const Connection& conn) {
    httplib::Request req;
    ConnectionStream strm(conn, options.write_timeout);
    strm.get_remote_ip_and_port(req.remote_addr, req.remote_port);
    httplib::Response res;
    res.status = 431;
    const std::string body = Response::json_error(431, "request headers too large").body;
    const std::string reply = fmt::format(
        "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\n"
        "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
        body.size(), body);
    strm.write(reply.data(), reply.size());
    logged_response(req, res);
  }

  // Every response: count it, and tell the first of each kind of bad request.
  void logged_response(const httplib::Request& req, const httplib::Response& res) {
    counters.requests.fetch_add(1, std::memory_order_relaxed);
    const int s = res.status;
    // After an error other than these, what follows on the connection may be the rest
    // of a request that was not read.
    if (res.get_header_value("Connection") == "close" ||
        (s >= 400 && s != 401 && s != 403 && s != 404 && s != 405)) {
      t_close_after = true;
    }
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
  if (auto st = check_listen_host(options.address, where); !st) return st;
  auto token = server_token(options.token_file, options.address, where);
  if (!token) return std::move(token).take_error();
  s.options = options;
  s.token = std::move(*token);
  add_session_routes();

  auto& svr = s.svr;
  svr.set_payload_max_length(options.max_body_bytes);
  // cpp-httplib's default is SO_REUSEPORT, which lets a second daemon bind the same port
  // and silently take half the scrapes; SO_REUSEADDR only allows a quick restart.
  svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  const auto handler = [this](const httplib::Request& req, httplib::Response& res) {
    impl_->dispatch(req, res);
  };
  svr.Get(".*", handler);
  svr.Post(".*", handler);
  // Other methods are answered before cpp-httplib reads a body (the event loop has not
  // waited for one either): a method that is never served gets no body read, and the
  // connection closes.
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
  UniqueFd listening = svr.listening_socket();
  if (!listening) {
    return make_error(fmt::format("cannot listen on {}: {}", where, std::strerror(errno)));
  }

  ReaderLimits limits;
  limits.header_timeout = options.header_timeout;
  limits.body_timeout = options.body_timeout;
  limits.keep_alive_timeout = options.keep_alive_timeout;
  limits.max_connections = std::max<std::size_t>(options.max_connections, 1);
  limits.max_body_bytes = options.max_body_bytes;
  s.pool = std::make_unique<WorkerPool>(options.max_clients, options.max_waiting, options.client_wait,
                                        s.counters.active_connections);
  // The event loop reads the body of a POST to a POST route only: the server answers
  // every other request from its head.
  const auto wants_body = [this](std::string_view method, std::string_view target) {
    return method == "POST" && impl_->is_post_route(std::string(target.substr(0, target.find('?'))));
  };
  const auto ready = [this](Connection conn) {
    auto shared = std::make_shared<Connection>(std::move(conn));
    impl_->pool->enqueue([this, shared](bool overloaded) { impl_->serve(std::move(*shared), overloaded); });
  };
  s.reader = std::make_unique<RequestReader>(limits, s.counters.connections, wants_body, ready);
  if (auto st = s.reader->start(std::move(listening)); !st) {
    s.reader.reset();
    s.pool.reset();
    svr.close_listening_socket();
    return make_error(fmt::format("cannot listen on {}: {}", where, st.error()));
  }
  s.port.store(static_cast<std::uint16_t>(port));
  s.started = true;
  return {};
}

void HttpServer::stop() {
  Impl& s = *impl_;
  if (!s.reader || s.stopping.exchange(true)) return;
  s.reader->stop();  // no new requests; the connections it holds close
  s.svr.close_listening_socket();
  s.pool->shutdown();  // requests being served finish (streams end at their next tick)
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

bool HttpServer::running() const { return impl_->reader && !impl_->stopping.load(); }

std::uint16_t HttpServer::port() const { return impl_->port.load(); }

const HttpCounters& HttpServer::counters() const { return impl_->counters; }

void HttpServer::register_counters(CounterRegistry& registry) const {
  register_http_counters(registry, impl_->counters);
}

}  // namespace eacgm::server
