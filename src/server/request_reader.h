// RequestReader: the HTTP server's one event-loop thread (epoll). It accepts connections
// and reads each request (head, then a body the request needs) under per-connection
// deadlines and a cap on open connections; only a whole request goes to a worker, so a
// client that sends slowly, never finishes or idles holds a file descriptor, not a thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/unique_fd.h"

namespace eacgm::server {

// A request's head (request line and headers) larger than this is not read further:
// the connection goes to a worker marked head_too_large (431).
inline constexpr std::size_t kMaxHeadBytes = std::size_t{64} << 10;

struct ReaderLimits {
  // From a new connection's accept, or a kept-alive connection's first byte, to the
  // blank line that ends the request's head.
  std::chrono::milliseconds header_timeout{5000};
  // From the end of the head to the last byte of the body its Content-Length promises.
  std::chrono::milliseconds body_timeout{5000};
  // A kept-alive connection with no byte of a next request closes after this.
  std::chrono::milliseconds keep_alive_timeout{5000};
  // Open connections, read here or served by workers. At the cap the oldest idle one
  // (no byte of a request yet) closes for a new one; with none idle the new one closes.
  std::size_t max_connections = 256;
  std::size_t max_body_bytes = std::size_t{64} << 10;
};

// Why the reader closed connections, and how many are open (atomics: read from any thread).
struct ReaderCounters {
  std::atomic<std::uint64_t> open{0};             // connections open now
  std::atomic<std::uint64_t> header_timeouts{0};  // head not complete by header_timeout
  std::atomic<std::uint64_t> body_timeouts{0};    // body not complete by body_timeout
  std::atomic<std::uint64_t> idle_timeouts{0};    // kept alive with no next request
  std::atomic<std::uint64_t> shed{0};             // closed at max_connections
};

// One connection and the bytes read from it, moved between the loop and a worker.
struct Connection {
  UniqueFd fd;
  std::string bytes;            // the request (head and body as far as read), maybe bytes after it
  std::size_t served = 0;       // requests answered on this connection so far
  bool head_too_large = false;  // the head passed kMaxHeadBytes without ending
};

// Which requests have a body worth reading: the rest are answered from their head (a
// method the path does not take is refused without waiting for a body that may never
// come). `method` and `target` as in the request line.
using WantsBody = std::function<bool(std::string_view method, std::string_view target)>;
// Called on the loop thread with a connection whose request is whole (or whose body is
// not to be read); must not block.
using RequestReady = std::function<void(Connection)>;

class RequestReader {
 public:
  RequestReader(ReaderLimits limits, ReaderCounters& counters, WantsBody wants_body, RequestReady ready);
  ~RequestReader();  // stop()
  RequestReader(const RequestReader&) = delete;
  RequestReader& operator=(const RequestReader&) = delete;

  // Serves `listen_fd` (a bound, listening socket; taken) on a thread of its own.
  Status start(UniqueFd listen_fd);
  // Closes the listening socket and every connection the loop holds; joins the thread.
  // Connections at workers close when they are handed back.
  void stop();

  // A worker is done with `connection`: kept alive, the loop waits for its next request;
  // otherwise (or once stopped) it closes. Any thread.
  void hand_back(Connection connection, bool keep_alive);

 private:
  struct Loop;
  std::unique_ptr<Loop> loop_;
};

// What the request's head says about its body.
struct HeadFacts {
  std::string_view method;
  std::string_view target;
  bool expect_continue = false;  // Expect: 100-continue
  bool chunked = false;          // a Transfer-Encoding header
  bool bad_length = false;       // Content-Length not a number, or given twice
  std::uint64_t content_length = 0;
};
// `head`: the request line and headers up to (not including) the blank line.
HeadFacts read_head(std::string_view head);

}  // namespace eacgm::server
