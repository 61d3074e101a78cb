// Server-Sent Events: event framing, a client receiving what is published, the end of
// the stream on close(), the client cap, and a client that never reads: publish() stays
// fast, its queue stays bounded, the drops are counted and the server lets it go after
// the write timeout.
#include "server/sse_channel.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "http_client.h"
#include "server/http_server.h"

namespace eacgm::server {
namespace {

using namespace std::chrono_literals;
using testing::connect_to;
using testing::read_until;
using testing::send_all;

TEST(SseChannel, FormatsEvents) {
  EXPECT_EQ(SseChannel::format_event("hello"), "data: hello\n\n");
  EXPECT_EQ(SseChannel::format_event("{\"a\":1}", "gpu"), "event: gpu\ndata: {\"a\":1}\n\n");
  EXPECT_EQ(SseChannel::format_event("one\ntwo\r\nthree\rfour"),
            "data: one\ndata: two\ndata: three\ndata: four\n\n");
  EXPECT_EQ(SseChannel::format_event(""), "data: \n\n");
  EXPECT_EQ(SseChannel::format_event("x", "bad\ntype"), "event: bad type\ndata: x\n\n");
}

TEST(SseChannel, QueueIsBoundedAndDropsAreReported) {
  SseChannel channel(SseChannel::Options{.queue_capacity = 4, .max_clients = 1, .keepalive = 1h});
  auto stream = channel.subscribe();
  ASSERT_TRUE(stream);
  EXPECT_EQ(channel.subscribe(), nullptr) << "max_clients";
  for (int i = 0; i < 10; ++i) channel.publish(std::to_string(i));
  auto st = channel.stats();
  EXPECT_EQ(st.published, 10u);
  EXPECT_EQ(st.dropped, 6u);
  EXPECT_EQ(st.max_queued, 4u);
  EXPECT_EQ(st.high_water, 4u);
  EXPECT_EQ(st.rejected, 1u);
  std::string out;
  EXPECT_TRUE(stream->next(out, 0ms));
  EXPECT_EQ(out,
            "event: dropped\ndata: {\"dropped\":6}\n\nid: 7\ndata: 6\n\nid: 8\ndata: 7\n\nid: 9\ndata: 8\n\n"
            "id: 10\ndata: 9\n\n");
  channel.close();
  out.clear();
  EXPECT_FALSE(stream->next(out, 0ms));
  stream.reset();
  EXPECT_EQ(channel.stats().clients, 0u);
}

// A client that comes back with the id of the last event it saw gets the events after it
// that the channel still holds, and a count of those it no longer holds; tagged events
// have no id and are not replayed.
TEST(SseChannel, ResumesAfterLastEventId) {
  SseChannel channel(SseChannel::Options{.queue_capacity = 4, .max_clients = 3, .keepalive = 1h});
  for (int i = 1; i <= 6; ++i) channel.publish("e" + std::to_string(i));
  channel.publish_tagged("call", "call", 7);  // nobody takes it: no id used
  std::string out;

  SseChannel::Filter recent;
  recent.last_event_id = 4;
  auto a = channel.subscribe(recent);
  ASSERT_TRUE(a);
  a->next(out, 0ms);
  EXPECT_EQ(out, "id: 5\ndata: e5\n\nid: 6\ndata: e6\n\n");

  SseChannel::Filter old;
  old.last_event_id = 1;  // 2 is gone (ids 3..6 kept)
  auto b = channel.subscribe(old);
  out.clear();
  b->next(out, 0ms);
  EXPECT_EQ(
      out,
      "event: dropped\ndata: {\"dropped\":1}\n\nid: 3\ndata: e3\n\nid: 4\ndata: e4\n\nid: 5\ndata: e5\n\n"
      "id: 6\ndata: e6\n\n");

  SseChannel::Filter future;  // an id of an earlier agent: nothing to replay
  future.last_event_id = 99;
  future.tagged = true;
  auto c = channel.subscribe(future);
  channel.publish_tagged("call", "call", 7);
  channel.publish("e7");
  out.clear();
  c->next(out, 0ms);
  EXPECT_EQ(out, "event: call\ndata: call\n\nid: 7\ndata: e7\n\n");
}

struct SseServer {
  SseChannel channel;
  HttpServer server;
  explicit SseServer(SseChannel::Options channel_options, std::chrono::milliseconds write_timeout = 2000ms)
      : channel(channel_options) {
    server.route("/events", [this](const Request&) { return event_stream(channel); });
    ServerOptions o;
    o.port = 0;
    o.keep_alive_timeout = std::chrono::seconds(1);
    o.write_timeout = write_timeout;
    o.max_clients = 4;
    EXPECT_TRUE(server.start(o).ok());
  }
};

bool wait_for(auto pred, std::chrono::milliseconds timeout = 5s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

TEST(SseChannel, ClientReceivesPublishedEvents) {
  SseServer s(SseChannel::Options{.queue_capacity = 16, .max_clients = 2, .keepalive = 1h});
  const int fd = connect_to(s.server.port());
  ASSERT_GE(fd, 0);
  send_all(fd, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string head =
      read_until(fd, [](const std::string& b) { return b.find("\r\n\r\n") != std::string::npos; });
  EXPECT_TRUE(head.starts_with("HTTP/1.1 200")) << head;
  EXPECT_NE(head.find("Content-Type: text/event-stream"), std::string::npos) << head;
  EXPECT_NE(head.find("Transfer-Encoding: chunked"), std::string::npos) << head;
  ASSERT_TRUE(wait_for([&] { return s.channel.stats().clients == 1; }));

  s.channel.publish("{\"gpu\":0,\"util\":45}", "gpu");
  s.channel.publish("second");
  std::string body =
      read_until(fd, [](const std::string& b) { return b.find("data: second\n\n") != std::string::npos; });
  EXPECT_NE(body.find("id: 1\nevent: gpu\ndata: {\"gpu\":0,\"util\":45}\n\n"), std::string::npos) << body;
  EXPECT_NE(body.find("data: second\n\n"), std::string::npos) << body;

  // A third client over the channel's cap of 2 is refused; the second is fine.
  const int fd2 = connect_to(s.server.port());
  send_all(fd2, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
  const int fd3 = connect_to(s.server.port());
  ASSERT_TRUE(wait_for([&] { return s.channel.stats().clients == 2; }));
  send_all(fd3, "GET /events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string refused = read_until(fd3, [](const std::string&) { return false; });
  EXPECT_TRUE(refused.starts_with("HTTP/1.1 503")) << refused;

  // close() ends the stream: the terminating chunk follows the queued events.
  s.channel.publish("last");
  s.channel.close();
  body = read_until(fd, [](const std::string& b) { return b.find("0\r\n\r\n") != std::string::npos; });
  EXPECT_NE(body.find("data: last\n\n"), std::string::npos) << body;
  EXPECT_NE(body.find("0\r\n\r\n"), std::string::npos) << body;
  ::close(fd);
  ::close(fd2);
  ::close(fd3);
  ASSERT_TRUE(wait_for([&] { return s.channel.stats().clients == 0; }));
}

TEST(SseChannel, ClientThatNeverReadsStaysBounded) {
  constexpr std::size_t kCapacity = 8;
  SseServer s(SseChannel::Options{.queue_capacity = kCapacity, .max_clients = 2, .keepalive = 1h}, 500ms);
  const int fd = connect_to(s.server.port(), /*rcvbuf=*/4096);
  ASSERT_GE(fd, 0);
  send_all(fd, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(wait_for([&] { return s.channel.stats().clients == 1; }));

  // 2000 events of 16 KiB: 32 MiB, far beyond what the socket buffers hold.
  const std::string payload(16 * 1024, 'e');
  // publish() never waits for the client: the loop returns although the client reads
  // nothing (were it to wait, the test would hang here). Its speed is a benchmark's
  // business, not this test's.
  for (int i = 0; i < 2000; ++i) {
    s.channel.publish(payload);
    if (i % 100 == 0) std::this_thread::sleep_for(1ms);  // let the worker fill the socket
  }

  const auto st = s.channel.stats();
  EXPECT_EQ(st.published, 2000u);
  EXPECT_LE(st.high_water, kCapacity);
  EXPECT_LE(st.max_queued, kCapacity);
  // Events beyond the bounded queue were dropped (how many depends on when the server
  // gave up on the client at its write timeout, after which nothing is queued for it).
  EXPECT_GT(st.dropped, 0u) << "the stalled client lost events";

  // While events keep coming, the server gives up on the client at its write timeout
  // and frees its queue.
  EXPECT_TRUE(wait_for(
      [&] {
        s.channel.publish(payload);
        return s.channel.stats().clients == 0;
      },
      10s))
      << "clients " << s.channel.stats().clients << ", active connections "
      << s.server.counters().active_connections.load();
  ::close(fd);
}

TEST(SseChannel, StopEndsOpenStreams) {
  auto s = std::make_unique<SseServer>(
      SseChannel::Options{.queue_capacity = 4, .max_clients = 2, .keepalive = 1h});
  const int fd = connect_to(s->server.port());
  send_all(fd, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(wait_for([&] { return s->channel.stats().clients == 1; }));
  const auto t0 = std::chrono::steady_clock::now();
  s->server.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  EXPECT_EQ(s->channel.stats().clients, 0u);
  ::close(fd);
}

TEST(SseChannel, KeepaliveCommentsWhenIdle) {
  SseChannel channel(SseChannel::Options{.queue_capacity = 4, .max_clients = 1, .keepalive = 20ms});
  auto stream = channel.subscribe();
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (out.empty() && std::chrono::steady_clock::now() < deadline) stream->next(out, 10ms);
  EXPECT_EQ(out, ": keepalive\n\n");
}

}  // namespace
}  // namespace eacgm::server
