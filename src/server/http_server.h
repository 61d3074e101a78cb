// HttpServer: the HTTP front of `eacgm serve` (docs/api.md). GET/HEAD and POST routes by
// exact path, JSON errors, an optional bearer token (or the login form's session cookie,
// server/web_session.h), request and concurrency limits, and streamed (Server-Sent Events)
// responses. One event-loop thread reads requests (server/request_reader.h), a fixed pool
// of workers serves them (server/worker_pool.h); cpp-httplib does the protocol, and this
// file's types keep it out of every other file.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/counter_registry.h"
#include "core/result.h"
#include "server/access_token.h"
#include "server/http_counters.h"
#include "server/listen_address.h"
#include "server/request_reader.h"
#include "server/sse_channel.h"

namespace eacgm::server {

struct Request {
  std::string method;  // "GET" or "HEAD" (GET routes), "POST" (POST routes)
  std::string path;    // without the query string
  std::string remote_addr;
  std::vector<std::pair<std::string, std::string>> headers;  // as received
  std::vector<std::pair<std::string, std::string>> params;   // query parameters, decoded
  std::string body;                                          // POST only (at most max_body_bytes)

  // The first header with this name (case-insensitive); "" when absent.
  std::string header(std::string_view name) const;
  // The first query parameter with this name.
  std::optional<std::string> param(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // When set, the body is this stream instead (chunked transfer encoding), until the
  // stream ends, the client goes or the server stops. Not read for HEAD.
  std::shared_ptr<ResponseStream> stream;

  // {"error":"<message>"} with the given status.
  static Response json_error(int status, std::string_view message);
  static Response json(std::string body, int status = 200);
};

using Handler = std::function<Response(const Request&)>;

// The response of an SSE route: 200 text/event-stream fed by a new subscription, or
// 503 when the channel has max_clients already.
Response event_stream(SseChannel& channel, SseChannel::Filter filter = SseChannel::Filter{});

struct ServerOptions {
  std::string address{kDefaultAddress};
  std::uint16_t port = kDefaultPort;  // 0: any free port (see HttpServer::port())
  // A file holding the bearer token (mode 0600 or stricter, owned by this user). With a
  // token every route but `public_paths` needs `Authorization: Bearer <token>` or the
  // session cookie that POST /api/v1/login sets. Without one the server only listens on
  // loopback addresses.
  std::string token_file;
  std::vector<std::string> public_paths;  // e.g. "/healthz" for a kubelet probe

  std::size_t max_body_bytes = std::size_t{64} << 10;  // larger: 413 (bodies are read for POST routes only)
  std::size_t max_headers = 64;                        // more header lines: 431
  // Fixed by cpp-httplib: request line over 8 KiB: 414; one header line over 8 KiB: 400.
  // A request's head (request line and headers) over 64 KiB: 431.

  // Requests are read by one event-loop thread (server/request_reader.h), not by the
  // workers: a connection that is slow, silent or idle holds no worker, and closes at
  // its deadline (counted in eacgm_http_{header,body,idle}_timeouts_total).
  // From a connection's accept (or a kept-alive one's first byte) to the end of the head:
  std::chrono::milliseconds header_timeout{5000};
  // From the end of the head to the end of a POST route's body (Content-Length):
  std::chrono::milliseconds body_timeout{5000};
  std::chrono::milliseconds write_timeout{5000};       // a write blocked this long drops the client
  std::chrono::milliseconds keep_alive_timeout{5000};  // idle keep-alive connections close after it
  std::size_t keep_alive_max_requests = 100;
  // Connections open at once, being read or served. At the cap the oldest idle one closes
  // for a new one; with none idle the new one is closed (eacgm_http_connections_shed_total).
  std::size_t max_connections = 256;

  // Requests served at once (worker threads; a stream holds one for its life). A whole
  // request arriving while all are busy waits up to `client_wait` for a worker, then
  // one rejecting thread answers it 503 (Retry-After: 1, Connection: close), at once when
  // `max_waiting` requests wait already.
  std::size_t max_clients = 8;
  std::size_t max_waiting = 64;
  std::chrono::milliseconds client_wait{250};

  // Told once per kind of bad request (unauthorized, not found, bad method, too large,
  // malformed, overloaded, handler error); the counters keep counting after that.
  std::function<void(std::string_view)> log;
};

class HttpServer {
 public:
  HttpServer();
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Serves GET and HEAD of exactly `path` (no patterns) with `handler`, which runs on a
  // worker thread and may run on several at once. Before start() only.
  void route(std::string path, Handler handler);
  // Serves POST of exactly `path` (its body in Request::body, up to max_body_bytes; other
  // methods: 405). The request's Origin, when it has one, must name this server (403
  // otherwise); a POST authorized by the session cookie alone must have one, so a browser
  // page elsewhere cannot make the agent act. Before start() only.
  void post_route(std::string path, Handler handler);

  // Checks the options (token file, loopback rule), binds, and serves on threads of its
  // own. Errors are one line for the user: "cannot listen on 0.0.0.0:9977 without a
  // token: ...".
  Status start(const ServerOptions& options);

  // Stops accepting, closes the connections not being served, ends streams, waits for
  // every thread (a handler's return, a stream's next 200 ms tick); idempotent.
  void stop();

  bool running() const;
  std::uint16_t port() const;  // the bound port (useful with port 0); 0 before start()
  const HttpCounters& counters() const;

  // The counters as eacgm_http_* in a CounterRegistry (names and help from
  // export/metrics_table); the server must outlive the registry's readers.
  void register_counters(CounterRegistry& registry) const;

 private:
  void add_session_routes();

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eacgm::server
