// MemoryTrim: at most one trim per kPeriod of ticks, none at the first tick; blocks past
// the mmap threshold mapped on their own, whatever was freed before; glibc's trim where the
// program has no jemalloc.
#include "node/memory_trim.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace eacgm::node {
namespace {

TEST(MemoryTrim, OncePerPeriod) {
  MemoryTrim trim;
  const CounterValues counters{};
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  trim.on_tick(t0, counters);
  EXPECT_EQ(trim.trims(), 0u);
  for (int s = 1; s < 30; ++s) trim.on_tick(t0 + std::chrono::seconds(s), counters);
  EXPECT_EQ(trim.trims(), 0u);
  trim.on_tick(t0 + MemoryTrim::kPeriod, counters);
  EXPECT_EQ(trim.trims(), 1u);
  for (int s = 31; s <= 90; ++s) trim.on_tick(t0 + std::chrono::seconds(s), counters);
  EXPECT_EQ(trim.trims(), 3u);
}

void* volatile g_sink = nullptr;  // keeps the compiler from eliding the allocations

// Bytes in blocks mapped on their own while a block of `size` is held.
std::size_t mapped_while_holding(std::size_t size) {
  void* block = std::malloc(size);
  EXPECT_NE(block, nullptr);
  std::memset(block, 1, size);
  g_sink = block;
  const std::size_t mapped = mallinfo2().hblkhd;
  std::free(block);
  g_sink = nullptr;
  return mapped;
}

// A freed mapped block of 4 MiB raised glibc's threshold to 4 MiB, so a later 1 MiB
// vector came from an arena and stayed there once freed; with the threshold fixed it is
// mapped, and unmapped when freed.
TEST(MemoryTrim, LargeBlocksAreMappedWhateverWasFreedBefore) {
  ASSERT_TRUE(MemoryTrim::map_large_blocks());
  const std::size_t before = mallinfo2().hblkhd;
  EXPECT_GE(mapped_while_holding(std::size_t{4} << 20), before + (std::size_t{4} << 20));
  EXPECT_GE(mapped_while_holding(std::size_t{1} << 20), before + (std::size_t{1} << 20));
  EXPECT_GE(mapped_while_holding(MemoryTrim::kMmapThreshold * 2), before + MemoryTrim::kMmapThreshold * 2);
  EXPECT_EQ(mallinfo2().hblkhd, before) << "freed mapped blocks are unmapped";
}

// This test program is not linked with jemalloc (the agent's program is: its integration
// test reads serve's line): the trim is glibc's malloc_trim.
TEST(MemoryTrim, AProgramWithoutJemallocTrimsGlibcsArenas) {
  EXPECT_FALSE(MemoryTrim::jemalloc());
  MemoryTrim::hand_back();
}

}  // namespace
}  // namespace eacgm::node
