// The hook's GPU-time bookkeeping: the launch table (exact counts, NCCL names, a full
// table), the adaptive 1-in-N rate, and the buckets of the host waits it times.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bpf/events.h"
#include "govern/hookcore/gpu_time_settings.h"
#include "govern/hookcore/launch_table.h"
#include "govern/hookcore/sample_rate.h"
#include "govern/hookcore/wait_buckets.h"

namespace eacgm::govern {
namespace {

TEST(LaunchTable, CountsEachFunctionExactlyAcrossThreads) {
  static LaunchTable table;  // large: not on the stack
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 10000; ++i) {
        LaunchEntry* e = table.find_or_insert(0x1000 + 0x40 * static_cast<std::uintptr_t>(i % 10));
        ASSERT_NE(e, nullptr);
        e->launches.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (auto& t : threads) t.join();
  int functions = 0;
  table.for_each([&](LaunchEntry& e) {
    ++functions;
    EXPECT_EQ(e.launches.load(), 4000u) << std::hex << e.key.load();
  });
  EXPECT_EQ(functions, 10);
  EXPECT_EQ(table.find_or_insert(0), nullptr);
}

TEST(LaunchTable, AFullTableRefusesNewFunctions) {
  static LaunchTable table;
  std::size_t inserted = 0;
  for (std::uintptr_t k = 1; k <= 2 * kLaunchTableSize; ++k)
    inserted += table.find_or_insert(k << 4) != nullptr;
  EXPECT_LE(inserted, kLaunchTableSize);
  EXPECT_GE(inserted, kLaunchTableSize * 9 / 10) << "linear probing fills most of the table";
  table.clear();
  EXPECT_NE(table.find_or_insert(0x10), nullptr);
}

TEST(LaunchTable, NcclKernelNames) {
  EXPECT_TRUE(is_nccl_kernel_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  EXPECT_TRUE(is_nccl_kernel_name("_Z28ncclKernel_AllGather_RING_LLP11ncclDevComm"));
  EXPECT_FALSE(is_nccl_kernel_name("_Z7kernelAPf"));
  EXPECT_FALSE(is_nccl_kernel_name(nullptr));
}

TEST(SampleRate, JumpsBackWithinBudgetAndHalvesWellUnder) {
  SampleRateConfig c;
  c.initial = 16;
  c.budget = 0.002;
  c.gpu_cost_ns = 1000;
  SampleRate rate(c);
  // 1 s in which 10,000 launches were timed at 2 us each on the CPU: 3%, 15 times the
  // 0.2% budget: 16 times rarer at once.
  EXPECT_EQ(rate.adapt(1'000'000'000, 10'000, 20'000'000), 256u);
  // Just over (0.3%): twice rarer.
  EXPECT_EQ(rate.adapt(1'000'000'000, 1'000, 2'000'000), 512u);
  // 100 timed launches at 3 us in all: 0.03% < 0.05%: back down.
  EXPECT_EQ(rate.adapt(1'000'000'000, 100, 200'000), 256u);
  // In between: kept.
  EXPECT_EQ(rate.adapt(1'000'000'000, 500, 500'000), 256u);
  EXPECT_EQ(rate.adapt(0, 1, 1), 256u) << "no time passed: nothing learnt";
  // Far over: at most 64 times rarer in one step.
  EXPECT_EQ(rate.adapt(1'000'000, 1'000'000, 1'000'000'000), 16384u);
}

TEST(SampleRate, StaysWithinItsBounds) {
  SampleRateConfig c;
  c.initial = 4;
  c.min_every = 2;
  c.max_every = 8;
  SampleRate rate(c);
  for (int i = 0; i < 5; ++i) rate.adapt(1'000'000, 1'000'000, 1'000'000'000);
  EXPECT_EQ(rate.every(), 8u);
  for (int i = 0; i < 5; ++i) rate.adapt(1'000'000'000'000, 0, 0);
  EXPECT_EQ(rate.every(), 2u);
}

// One launch in each block of `every`, the first always, and never in step with a period
// of the program: a kernel launched in four shapes per step has each shape timed.
TEST(SampleLaunch, OnePerBlockAtOffsetsThatDoNotFollowTheProgramsPeriod) {
  for (std::uint32_t every : {2u, 16u, 32u}) {
    std::uint64_t timed = 0;
    std::uint64_t in_block = 0;
    std::uint64_t per_shape[4] = {};
    for (std::uint64_t n = 0; n < 64ull * every; ++n) {
      const bool t = sample_launch(n, 0x7f0012345600, every);
      if (n == 0) {
        EXPECT_TRUE(t);
      }
      in_block += t ? 1 : 0;
      if ((n + 1) % every == 0) {
        EXPECT_EQ(in_block, 1u) << "every " << every << " block " << n / every;
        in_block = 0;
      }
      timed += t ? 1 : 0;
      if (t) ++per_shape[n % 4];
    }
    EXPECT_EQ(timed, 64u) << every;
    // A fixed 1 in `every` (a multiple of 4 here but for 2) would time one shape only.
    if (every % 4 == 0) {
      for (auto c : per_shape) EXPECT_GE(c, 6u) << "every " << every;
    }
  }
  EXPECT_TRUE(sample_launch(5, 1, 1));
  EXPECT_TRUE(sample_launch(5, 1, 0));
}

using Env = std::map<std::string, std::string>;

GpuTimeSettings settings_of(const Env& env, std::string* warnings) {
  return read_gpu_time_settings(
      [](const char* name, void* context) -> const char* {
        const auto& e = *static_cast<const Env*>(context);
        const auto it = e.find(name);
        return it == e.end() ? nullptr : it->second.c_str();
      },
      const_cast<Env*>(&env), warnings);
}

TEST(GpuTimeSettings, DefaultsWithoutTheVariables) {
  std::string warnings;
  const GpuTimeSettings s = settings_of({}, &warnings);
  EXPECT_DOUBLE_EQ(s.rate.budget, SampleRateConfig{}.budget);
  EXPECT_EQ(s.poll_ns, 5'000'000u);
  EXPECT_TRUE(warnings.empty());
}

TEST(GpuTimeSettings, BudgetInPercentAndPollInMilliseconds) {
  std::string warnings;
  const GpuTimeSettings s =
      settings_of({{"EACGM_GPU_TIME_BUDGET", "0.05"}, {"EACGM_GPU_TIME_POLL_MS", "50"}}, &warnings);
  EXPECT_DOUBLE_EQ(s.rate.budget, 0.0005);
  EXPECT_EQ(s.poll_ns, 50'000'000u);
  EXPECT_TRUE(warnings.empty()) << warnings;
}

TEST(GpuTimeSettings, BadValuesKeepTheDefaultsAndSaySo) {
  for (const char* budget : {"0", "-1", "51", "abc", "0.2%", "nan", "inf"}) {
    std::string warnings;
    const GpuTimeSettings s = settings_of({{"EACGM_GPU_TIME_BUDGET", budget}}, &warnings);
    EXPECT_DOUBLE_EQ(s.rate.budget, SampleRateConfig{}.budget) << budget;
    EXPECT_NE(warnings.find(std::string("EACGM_GPU_TIME_BUDGET=") + budget), std::string::npos) << warnings;
  }
  for (const char* poll : {"0", "1001", "2.5", "5ms", ""}) {
    std::string warnings;
    const GpuTimeSettings s = settings_of({{"EACGM_GPU_TIME_POLL_MS", poll}}, &warnings);
    EXPECT_EQ(s.poll_ns, 5'000'000u) << poll;
    EXPECT_EQ(warnings.empty(), *poll == '\0') << poll << ": " << warnings;
  }
}

// The hook's wait buckets are the agent's log buckets with 3 bits instead of 6: exact
// below 8 ns, 8 per power of two, each less than 1/8 of its start wide, and capped.
TEST(WaitBuckets, EightPerPowerOfTwoUpToTheLast) {
  for (std::uint64_t v = 0; v < 8; ++v) EXPECT_EQ(wait_bucket(v), v);
  std::uint32_t last = 0;
  for (std::uint64_t v = 8; v < (std::uint64_t{1} << 42); v += v / 7 + 1) {
    const std::uint32_t b = wait_bucket(v);
    EXPECT_EQ(b, eacgm_hist_key_bits(v, kWaitBucketBits)) << v;
    EXPECT_GE(b, last) << v;
    last = b;
  }
  EXPECT_EQ(wait_bucket((std::uint64_t{1} << 42) - 1), kWaitBuckets - 1);
  EXPECT_EQ(wait_bucket(std::uint64_t{1} << 50), kWaitBuckets - 1) << "longer waits go in the last";
  EXPECT_EQ(wait_bucket(~std::uint64_t{0}), kWaitBuckets - 1);
  EXPECT_NE(wait_bucket(1'000'000), wait_bucket(1'100'000)) << "a 10% difference is another bucket";
}

}  // namespace
}  // namespace eacgm::govern
