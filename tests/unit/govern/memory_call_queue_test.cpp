// The queue of a private-driver process's memory calls: what is pushed comes out once, in
// order; a full queue refuses (and counts) instead of waiting; threads pushing at once
// lose nothing that was accepted.
#include "govern/hookcore/memory_call_queue.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace eacgm::govern {
namespace {

MemoryCall call(std::uint64_t address) {
  MemoryCall c;
  c.address = address;
  c.bytes = address * 2;
  return c;
}

TEST(MemoryCallQueue, CallsComeOutInTheOrderPushed) {
  auto q = std::make_unique<MemoryCallQueue>();
  EXPECT_EQ(q->front(), nullptr);
  for (std::uint64_t a = 1; a <= 3; ++a) ASSERT_TRUE(q->push(call(a)));
  for (std::uint64_t a = 1; a <= 3; ++a) {
    const MemoryCall* c = q->front();
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->address, a);
    EXPECT_EQ(c->bytes, a * 2);
    q->pop();
  }
  EXPECT_EQ(q->front(), nullptr);
}

TEST(MemoryCallQueue, AFullQueueRefusesAndCountsUntilOneIsTaken) {
  auto q = std::make_unique<MemoryCallQueue>();
  // Around the ring several times: every cell's turn moves on.
  std::uint64_t next_in = 0, next_out = 0;
  for (int lap = 0; lap < 3; ++lap) {
    while (q->push(call(next_in))) ++next_in;
    EXPECT_EQ(next_in - next_out, MemoryCallQueue::kCapacity);
    EXPECT_EQ(q->refused(), static_cast<std::uint64_t>(lap + 1));
    for (std::size_t i = 0; i < MemoryCallQueue::kCapacity / 2 + 1; ++i) {
      ASSERT_NE(q->front(), nullptr);
      EXPECT_EQ(q->front()->address, next_out++);
      q->pop();
    }
  }
  while (const MemoryCall* c = q->front()) {
    EXPECT_EQ(c->address, next_out++);
    q->pop();
  }
  EXPECT_EQ(next_out, next_in);
}

TEST(MemoryCallQueue, ThreadsPushingAtOnceLoseNoAcceptedCall) {
  auto q = std::make_unique<MemoryCallQueue>();
  // Each thread pushes its calls until each is accepted: more than the queue holds, so
  // they finish only as the consumer takes calls out.
  constexpr int kThreads = 4;
  constexpr std::uint64_t kEach = 5000;
  static_assert(kThreads * kEach > MemoryCallQueue::kCapacity);
  std::vector<std::thread> threads;
  std::atomic<std::uint64_t> refusals{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (std::uint64_t i = 1; i <= kEach; ++i) {
        MemoryCall c = call(i);
        c.tid = static_cast<std::uint32_t>(t);
        while (!q->push(c)) {
          refusals.fetch_add(1);
          std::this_thread::yield();
        }
      }
    });
  }
  std::set<std::pair<std::uint32_t, std::uint64_t>> seen;
  std::vector<std::uint64_t> last(kThreads, 0);
  auto take = [&] {
    while (const MemoryCall* c = q->front()) {
      EXPECT_TRUE(seen.emplace(c->tid, c->address).second) << "a call came out twice";
      EXPECT_EQ(c->bytes, c->address * 2) << "a call came out half written";
      EXPECT_GT(c->address, last[c->tid]) << "one thread's calls out of order";
      last[c->tid] = c->address;
      q->pop();
    }
  };
  std::atomic<bool> done{false};
  std::thread consumer([&] {
    while (!done.load()) take();
  });
  for (auto& t : threads) t.join();
  done.store(true);
  consumer.join();
  take();
  EXPECT_EQ(seen.size(), kThreads * kEach) << "every call came out";
  EXPECT_EQ(q->refused(), refusals.load()) << "each refusal counted";
  EXPECT_EQ(q->front(), nullptr);
}

}  // namespace
}  // namespace eacgm::govern
