// SnapshotMailbox: order, drop-oldest past capacity with a count, and a producer
// thread racing a consumer without losing or duplicating snapshots.
#include "sample/snapshot_mailbox.h"

#include <gtest/gtest.h>

#include <thread>

namespace eacgm::sample {
namespace {

GpuSnapshot numbered(std::uint64_t n) {
  GpuSnapshot s;
  s.sequence = n;
  return s;
}

TEST(SnapshotMailbox, TakesInOrderAndEmpties) {
  SnapshotMailbox box;
  box.post(numbered(1));
  box.post(numbered(2));
  auto got = box.take();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].sequence, 1u);
  EXPECT_EQ(got[1].sequence, 2u);
  EXPECT_TRUE(box.take().empty());
  EXPECT_EQ(box.posted(), 2u);
  EXPECT_EQ(box.dropped(), 0u);
}

TEST(SnapshotMailbox, FullDropsTheOldestAndCountsIt) {
  SnapshotMailbox box(3);
  for (std::uint64_t i = 0; i < 5; ++i) box.post(numbered(i));
  auto got = box.take();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got.front().sequence, 2u);
  EXPECT_EQ(got.back().sequence, 4u);
  EXPECT_EQ(box.dropped(), 2u);
}

TEST(SnapshotMailbox, ProducerAndConsumerThreads) {
  SnapshotMailbox box(100000);
  constexpr std::uint64_t kCount = 20000;
  std::thread producer([&box] {
    for (std::uint64_t i = 0; i < kCount; ++i) box.post(numbered(i));
  });
  std::uint64_t expected = 0;
  while (expected < kCount) {
    for (const auto& s : box.take()) {
      ASSERT_EQ(s.sequence, expected);
      ++expected;
    }
  }
  producer.join();
  EXPECT_EQ(box.dropped(), 0u);
}

}  // namespace
}  // namespace eacgm::sample
