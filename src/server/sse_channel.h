// SseChannel: one stream of Server-Sent Events fanned out to every connected client.
// publish() never waits for a client: each client has a bounded queue of events, and a
// client that reads too slowly (or not at all) loses its oldest queued events, counted,
// instead of growing memory or holding the publisher. Events are formatted once and
// shared by all queues.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace eacgm::server {

// A response body produced piece by piece. The HTTP server calls next() on the
// connection's thread until it returns false (end of the body) or the client is gone.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  // Waits at most `wait` for data and appends what is ready to `out` (which may stay
  // empty). False: the stream has ended and `out` holds its last data.
  virtual bool next(std::string& out, std::chrono::milliseconds wait) = 0;
};

// Which tagged events (publish_tagged) a client receives; every client receives the
// untagged ones. Tagged events reach a client at most `max_tagged_per_second` a second.
struct SseFilter {
  bool tagged = false;               // false: no tagged events
  std::optional<std::uint64_t> tag;  // only this tag; absent: every tag
  std::size_t max_tagged_per_second = 100;
  // The `id:` of the last event the client saw (its Last-Event-ID header on reconnect):
  // the untagged events after it that the channel still holds are sent first, and
  // those it no longer holds are counted in an `event: dropped`.
  std::optional<std::uint64_t> last_event_id;
};
// What the connected clients ask for, so that a producer can skip what nobody wants.
struct SseInterest {
  bool any_tag = false;             // some client takes every tag
  std::vector<std::uint64_t> tags;  // tags some client asked for
};

class SseChannel {
 public:
  struct Options {
    std::size_t queue_capacity = 256;  // events queued per client, at most
    std::size_t max_clients = 4;       // keep below the server's max_clients
    // A comment line (": keepalive") after this long without events: keeps proxies from
    // closing the stream and finds clients that are gone.
    std::chrono::milliseconds keepalive{15000};
  };

  struct Stats {
    std::size_t clients = 0;
    std::uint64_t published = 0;  // events published
    std::uint64_t dropped = 0;    // events lost by slow clients, all clients together
    std::uint64_t rejected = 0;   // subscriptions refused at max_clients or after close()
    std::size_t max_queued = 0;   // the longest client queue now
    std::size_t high_water = 0;   // the longest any client queue has been
  };

  using Filter = SseFilter;
  using Interest = SseInterest;

  SseChannel() : SseChannel(Options{}) {}
  explicit SseChannel(Options options);
  ~SseChannel();  // ends every stream
  SseChannel(const SseChannel&) = delete;
  SseChannel& operator=(const SseChannel&) = delete;

  // Queues one event for every client: an `id:` line (1, 2, ... in publishing order,
  // from 1 again when the channel is new), an `event:` line when `event_type` is not
  // empty, then one `data:` line per line of `data`. The last `queue_capacity` of these
  // are kept for clients that come back with a Last-Event-ID. A full queue drops its oldest event; the
  // client is told how many it missed by an `event: dropped` with {"dropped":N} before
  // its next events.
  void publish(std::string_view data, std::string_view event_type = {});

  // Queues one event for the clients whose filter takes `tag`; a client over its rate
  // for the current second skips it (not counted as dropped). Tagged events carry no
  // `id:` (a client's last id stays that of the untagged event before) and are not
  // kept for a reconnect.
  void publish_tagged(std::string_view data, std::string_view event_type, std::uint64_t tag);

  // A stream for one more client, or nullptr at max_clients or after close().
  std::shared_ptr<ResponseStream> subscribe(Filter filter = Filter{});

  Interest interest() const;
  // Changes each time a client comes or goes (a cheap check before interest()).
  std::uint64_t generation() const;

  // Ends every stream once its queued events are sent, and refuses new clients.
  void close();

  Stats stats() const;

  // Running totals as atomics, for a CounterRegistry.
  const std::atomic<std::uint64_t>& published_total() const;
  const std::atomic<std::uint64_t>& dropped_total() const;
  const std::atomic<std::uint64_t>& clients_now() const;

  // The wire form of one event; id 0: no `id:` line.
  static std::string format_event(std::string_view data, std::string_view event_type = {},
                                  std::uint64_t id = 0);

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace eacgm::server
