// GPM through the device sampler against the fake NVML: the counters of the interval
// since the previous pass in dcgm-exporter's units, absent for a GPU without GPM and
// before a GPU's second sample, and every metric id the reader asks for known to nvml.h.
#include "sample/gpm_reader.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "fake_nvml_env.h"
#include "sample/device_sampler.h"

namespace eacgm::sample {
namespace {

using testing::open_scenario;

constexpr double kMiB = 1024.0 * 1024.0;

TEST(GpmReader, FirstPassCarriesTheIntervalSinceConstructionInRatiosAndBytes) {
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  const auto start = std::chrono::steady_clock::now();
  DeviceSampler sampler(session);
  DevicePass pass = sampler.sample();
  // Two samples closer than the minimum interval would be noise: the first pass waits.
  EXPECT_GE(std::chrono::steady_clock::now() - start, GpmReader::kMinInterval);
  ASSERT_EQ(pass.devices.size(), 2u);
  const DeviceSample& g = pass.devices[0];
  EXPECT_TRUE(g.field_errors.empty());
  EXPECT_TRUE(g.gpm_supported);
  ASSERT_TRUE(g.gpm.has_value());
  const GpmCounters& c = *g.gpm;
  EXPECT_GE(c.interval_seconds, 0.09);
  EXPECT_DOUBLE_EQ(*c.graphics_active, 0.85);
  EXPECT_DOUBLE_EQ(*c.sm_active, 0.80);
  EXPECT_DOUBLE_EQ(*c.sm_occupancy, 0.40);
  EXPECT_DOUBLE_EQ(*c.tensor_active, 0.60);
  EXPECT_DOUBLE_EQ(*c.tensor_hmma_active, 0.55);
  EXPECT_DOUBLE_EQ(*c.tensor_imma_active, 0.05);
  EXPECT_DOUBLE_EQ(*c.tensor_dfma_active, 0.0);
  EXPECT_DOUBLE_EQ(*c.dram_active, 0.25);
  EXPECT_DOUBLE_EQ(*c.fp16_active, 0.10);
  EXPECT_DOUBLE_EQ(*c.fp32_active, 0.20);
  EXPECT_DOUBLE_EQ(*c.fp64_active, 0.01);
  EXPECT_DOUBLE_EQ(*c.integer_active, 0.05);
  EXPECT_DOUBLE_EQ(*c.pcie_tx_bytes_per_second, 100 * kMiB);
  EXPECT_DOUBLE_EQ(*c.pcie_rx_bytes_per_second, 250 * kMiB);
  EXPECT_DOUBLE_EQ(*c.nvlink_tx_bytes_per_second, 256 * kMiB);
  EXPECT_DOUBLE_EQ(*c.nvlink_rx_bytes_per_second, 128 * kMiB);
  // Only the links the GPU reports: 0-3 on the fake.
  ASSERT_EQ(c.nvlinks.size(), 4u);
  for (unsigned link = 0; link < 4; ++link) {
    EXPECT_EQ(c.nvlinks[link].link, link);
    EXPECT_DOUBLE_EQ(c.nvlinks[link].tx_bytes_per_second, 64 * kMiB);
    EXPECT_DOUBLE_EQ(c.nvlinks[link].rx_bytes_per_second, 32 * kMiB);
  }
  // Each GPU its own values.
  ASSERT_TRUE(pass.devices[1].gpm.has_value());
  EXPECT_DOUBLE_EQ(*pass.devices[1].gpm->sm_active, 0.75);
}

TEST(GpmReader, LaterPassesCoverTheTimeSinceThePassBefore) {
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session);
  (void)sampler.sample();
  const auto before = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  DevicePass pass = sampler.sample();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  ASSERT_TRUE(pass.devices[0].gpm.has_value());
  // No wait in a pass whose interval is long enough: the interval is the sleep, not +100 ms.
  EXPECT_GE(pass.devices[0].gpm->interval_seconds, 0.25);
  EXPECT_LE(pass.devices[0].gpm->interval_seconds, elapsed + 0.001);
  EXPECT_LT(elapsed, 0.25 + 0.09);
}

TEST(GpmReader, WithoutWaitingAnEarlyPassReportsNothingAndTheNextCoversBoth) {
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session, DeviceSamplerOptions{.gpm_wait = false});
  const auto start = std::chrono::steady_clock::now();
  DevicePass early = sampler.sample();
  EXPECT_LT(std::chrono::steady_clock::now() - start, GpmReader::kMinInterval);
  EXPECT_TRUE(early.devices[0].gpm_supported);
  EXPECT_FALSE(early.devices[0].gpm.has_value());
  EXPECT_TRUE(early.devices[0].field_errors.empty());
  std::this_thread::sleep_for(GpmReader::kMinInterval);
  DevicePass later = sampler.sample();
  ASSERT_TRUE(later.devices[0].gpm.has_value());
  EXPECT_GE(later.devices[0].gpm->interval_seconds, 0.1);
  EXPECT_DOUBLE_EQ(*later.devices[0].gpm->sm_active, 0.80);
}

TEST(GpmReader, GpuWithoutGpmIsLeftOutAndSaysSoOnce) {
  auto session = open_scenario("unsupported");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session);
  for (int i = 0; i < 2; ++i) {
    DevicePass pass = sampler.sample();
    ASSERT_EQ(pass.devices.size(), 2u);
    EXPECT_TRUE(pass.devices[0].gpm_supported);
    EXPECT_TRUE(pass.devices[0].gpm.has_value());
    EXPECT_FALSE(pass.devices[1].gpm_supported);
    EXPECT_FALSE(pass.devices[1].gpm.has_value());
    EXPECT_TRUE(pass.devices[1].field_errors.empty());  // absence is not an error
  }
}

TEST(GpmReader, NoGpmAnywhere) {
  setenv("EACGM_FAKE_NVML_GPM", "0", 1);  // read by the fake at every GPM call
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  DevicePass pass = DeviceSampler(session).sample();
  unsetenv("EACGM_FAKE_NVML_GPM");
  for (const DeviceSample& d : pass.devices) {
    EXPECT_FALSE(d.gpm_supported);
    EXPECT_FALSE(d.gpm.has_value());
    EXPECT_TRUE(d.field_errors.empty());
  }
}

TEST(GpmReader, TurnedOffAsksNoGpu) {
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session, DeviceSamplerOptions{.gpm = false});
  EXPECT_TRUE(sampler.system().gpm_off);
  EXPECT_EQ(sampler.gpm_count(), 0u);
  for (const DeviceSample& d : sampler.sample().devices) {
    EXPECT_FALSE(d.gpm_supported);
    EXPECT_FALSE(d.gpm.has_value());
  }
  DeviceSampler on(session);
  EXPECT_FALSE(on.system().gpm_off);
  EXPECT_EQ(on.gpm_count(), 2u);
}

TEST(GpmReader, LostGpuStopsItsCountersAndKeepsTheOther) {
  auto session = open_scenario("gpu_lost");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session);
  DevicePass first = sampler.sample();
  EXPECT_TRUE(first.devices[1].gpm.has_value());
  DevicePass second = sampler.sample();
  EXPECT_TRUE(second.devices[1].lost);
  EXPECT_FALSE(second.devices[1].gpm.has_value());
  EXPECT_TRUE(second.devices[0].gpm.has_value());
}

TEST(GpmReader, GraphicsActivityIsAskedForNowAndThenAndCarriedBetween) {
  const std::vector<unsigned>& all = gpm_metric_ids();
  const std::vector<unsigned>& rest = gpm_metric_ids_but_graphics();
  EXPECT_EQ(rest.size() + 1, all.size());
  EXPECT_EQ(std::count(rest.begin(), rest.end(), nvml::kGpmGraphicsUtil), 0);
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session);
  std::optional<double> first;
  for (unsigned pass = 0; pass < GpmReader::kGraphicsEvery + 2; ++pass) {
    DevicePass p = sampler.sample();
    ASSERT_TRUE(p.devices[0].gpm.has_value()) << pass;
    ASSERT_TRUE(p.devices[0].gpm->graphics_active.has_value()) << "pass " << pass;
    if (!first) first = p.devices[0].gpm->graphics_active;
    EXPECT_EQ(p.devices[0].gpm->graphics_active, first) << "pass " << pass;
    EXPECT_TRUE(p.devices[0].gpm->sm_active.has_value()) << "pass " << pass;
  }
}

TEST(GpmReader, AsksForDistinctKnownMetricsWithinTheBuffer) {
  const std::vector<unsigned>& ids = gpm_metric_ids();
  EXPECT_LE(ids.size(), nvml::kGpmMaxAsked);
  EXPECT_EQ(std::set<unsigned>(ids.begin(), ids.end()).size(), ids.size());
  for (unsigned id : ids) EXPECT_LT(id, 98u);  // NVML_GPM_METRIC_MAX of R520 and later
}

}  // namespace
}  // namespace eacgm::sample
