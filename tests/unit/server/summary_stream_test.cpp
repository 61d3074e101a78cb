// Call events on the live stream: tagged events reach only the clients that asked (by
// pid or for every pid), at most their rate a second; SummaryStream samples calls only
// when a client wants them and at most kCallsPerSecond a second per interest; the call
// event's fields.
#include "server/summary_stream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "../common/cuda_malloc_probe.h"

namespace eacgm::server {
namespace {

using namespace std::chrono_literals;

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

std::string drain(ResponseStream& stream) {
  std::string out;
  stream.next(out, 0ms);
  return out;
}

CallEvent call(std::uint32_t pid, std::uint64_t ts_ns) {
  const auto& probe = test::cuda_malloc_probe();
  CallEvent e;
  e.probe = probe;
  e.pid = pid;
  e.tid = pid + 1;
  e.comm = {'p', 'r', 'o', 'g'};
  e.ts_ns = ts_ns;
  e.dur_ns = 1500;
  e.has_exit = true;
  e.ret = 2;
  return e;
}

TEST(SseChannelFilter, TaggedEventsReachOnlyClientsThatAsked) {
  SseChannel::Options o;
  o.queue_capacity = 1000;
  SseChannel channel(o);
  auto plain = channel.subscribe();
  SseChannel::Filter all;
  all.tagged = true;
  auto every = channel.subscribe(all);
  SseChannel::Filter only;
  only.tagged = true;
  only.tag = 7;
  only.max_tagged_per_second = 3;
  auto seven = channel.subscribe(only);
  auto in = channel.interest();
  EXPECT_TRUE(in.any_tag);
  EXPECT_EQ(in.tags, std::vector<std::uint64_t>{7});
  channel.publish("s", "summary");
  for (int i = 0; i < 5; ++i) channel.publish_tagged("c7", "call", 7);
  channel.publish_tagged("c8", "call", 8);
  const std::string p = drain(*plain), e = drain(*every), s = drain(*seven);
  EXPECT_EQ(count(p, "event: summary"), 1u);
  EXPECT_EQ(count(p, "event: call"), 0u);
  EXPECT_EQ(count(e, "event: call"), 6u);
  EXPECT_EQ(count(s, "event: summary"), 1u);
  EXPECT_EQ(count(s, "data: c7"), 3u) << "its rate a second";
  EXPECT_EQ(count(s, "data: c8"), 0u);
  const auto g = channel.generation();
  seven.reset();
  EXPECT_NE(channel.generation(), g);
  EXPECT_TRUE(channel.interest().tags.empty());
}

TEST(SummaryStream, SamplesCallsOnlyForClientsThatWantThem) {
  SseChannel::Options o;
  o.queue_capacity = 10000;
  auto channel = std::make_shared<SseChannel>(o);
  SummaryStream stream(channel);
  std::vector<CallEvent> calls;
  for (int i = 0; i < 500; ++i) calls.push_back(call(i % 2 ? 11 : 12, 5'000'000'000ull + i));
  stream.on_calls(calls);
  EXPECT_EQ(channel->stats().published, 0u) << "nobody asked";

  SseChannel::Filter want;
  want.tagged = true;
  want.max_tagged_per_second = 1000;  // the producer's own cap is what is tested
  auto every = channel->subscribe(want);
  want.tag = 11;
  auto eleven = channel->subscribe(want);
  stream.on_calls(calls);
  const std::string e = drain(*every), el = drain(*eleven);
  // 100 a second for every pid, and 100 more of pid 11 (some of them the same calls).
  EXPECT_EQ(count(e, "event: call"), SummaryStream::kCallsPerSecond + 50);
  EXPECT_EQ(count(el, "event: call"), SummaryStream::kCallsPerSecond);
  EXPECT_EQ(count(el, "\"pid\":12"), 0u);
  // The next second has a new budget.
  std::vector<CallEvent> later{call(11, 6'000'000'000ull)};
  stream.on_calls(later);
  EXPECT_EQ(count(drain(*eleven), "event: call"), 1u);
}

TEST(SummaryStream, CallEventFields) {
  auto doc = nlohmann::json::parse(SummaryStream::call_event(call(5, 123)));
  EXPECT_EQ(doc["ts_ns"], 123);
  EXPECT_EQ(doc["pid"], 5);
  EXPECT_EQ(doc["tid"], 6);
  EXPECT_EQ(doc["comm"], "prog");
  EXPECT_EQ(doc["domain"], "cuda");
  EXPECT_EQ(doc["name"], "cudaMalloc");
  EXPECT_EQ(doc["dur_ns"], 1500);
  EXPECT_EQ(doc["ret"], 2);
}

}  // namespace
}  // namespace eacgm::server
