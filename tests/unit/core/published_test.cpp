// Published<T>: readers on other threads always see a whole snapshot, never a torn one.
#include "core/published.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace eacgm {
namespace {

struct Pair {
  std::uint64_t a = 0;
  std::vector<std::uint64_t> b;  // always 16 copies of `a`
};

TEST(Published, EmptyUntilTheFirstPublish) {
  Published<Pair> p;
  EXPECT_EQ(p.get(), nullptr);
  EXPECT_EQ(p.version(), 0u);
  p.publish(std::make_shared<const Pair>(Pair{1, std::vector<std::uint64_t>(16, 1)}));
  ASSERT_NE(p.get(), nullptr);
  EXPECT_EQ(p.get()->a, 1u);
  EXPECT_EQ(p.version(), 1u);
}

TEST(Published, ReadersOnOtherThreadsSeeConsistentSnapshotsInOrder) {
  Published<Pair> p;
  std::atomic<bool> done{false};
  constexpr std::uint64_t kSnapshots = 2000;
  std::vector<std::thread> readers;
  std::atomic<std::uint64_t> torn{0}, backwards{0}, seen{0};
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      std::uint64_t last = 0;
      while (!done.load()) {
        auto s = p.get();
        if (!s) continue;
        if (s->b.size() != 16) ++torn;
        for (auto x : s->b) {
          if (x != s->a) ++torn;
        }
        if (s->a < last) ++backwards;
        last = s->a;
        ++seen;
      }
    });
  }
  // A reader keeps what it took alive while the producer moves on.
  std::shared_ptr<const Pair> held;
  std::uint64_t i = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  // At least kSnapshots, and on until the readers have read a good number of them.
  while (i < kSnapshots || (seen.load() < 3000 && std::chrono::steady_clock::now() < deadline)) {
    ++i;
    p.publish(std::make_shared<const Pair>(Pair{i, std::vector<std::uint64_t>(16, i)}));
    if (i == 10) held = p.get();
  }
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(backwards.load(), 0u);
  EXPECT_EQ(p.version(), i);
  EXPECT_EQ(p.get()->a, i);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->a, 10u);
  EXPECT_GT(seen.load(), 0u);
  EXPECT_EQ(torn.load(), 0u);
}

}  // namespace
}  // namespace eacgm
