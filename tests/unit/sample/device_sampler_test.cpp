// Device sampler against the fake NVML: every field's exact value, unsupported fields
// absent for their GPU only, a GPU lost mid-run, XID counting through NVML events, and
// the slow fields read off the pass by the sampler's own thread.
#include "sample/device_sampler.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "fake_nvml_env.h"

namespace eacgm::sample {
namespace {

using testing::open_scenario;

constexpr std::uint64_t kMiB = 1024ull * 1024;
constexpr std::uint64_t kGiB = 1024 * kMiB;
constexpr const char* kEnergyError = "nvmlDeviceGetTotalEnergyConsumption: Unknown Error";

DeviceSamplerOptions slow_period(std::chrono::nanoseconds period) {
  DeviceSamplerOptions o;
  o.slow_field_period = period;
  return o;
}

// Waits (up to a generous bound) until the slow thread has completed `rounds` rounds.
bool wait_for_rounds(const DeviceSampler& sampler, std::uint64_t rounds) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (sampler.slow_read_rounds() < rounds) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(DeviceSampler, FullScenarioReportsEveryField) {
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session);
  EXPECT_EQ(sampler.system().driver_version, "999.99.99-fake");
  EXPECT_EQ(sampler.system().cuda_driver_version, 12040);
  EXPECT_EQ(format_cuda_version(*sampler.system().cuda_driver_version), "12.4");

  DevicePass pass = sampler.sample();
  EXPECT_TRUE(pass.errors.empty());
  ASSERT_EQ(pass.devices.size(), 2u);
  const DeviceSample& g = pass.devices[0];
  EXPECT_EQ(g.index, 0u);
  EXPECT_EQ(g.name, "Fake NVML GPU (test stand-in)");
  EXPECT_EQ(g.uuid, "GPU-fa4e0000-0000-0000-0000-000000000000");
  EXPECT_EQ(g.pci_bus_id, "00000000:19:00.0");
  EXPECT_FALSE(g.lost);
  EXPECT_EQ(g.error, "");
  EXPECT_TRUE(g.field_errors.empty());
  EXPECT_EQ(g.utilization_gpu_percent, 45u);
  EXPECT_EQ(g.utilization_memory_percent, 12u);
  EXPECT_EQ(g.memory_total_bytes, 80 * kGiB);
  EXPECT_EQ(g.memory_reserved_bytes, 512 * kMiB);
  EXPECT_EQ(g.memory_used_bytes, 1 * kGiB);
  EXPECT_EQ(g.memory_free_bytes, 80 * kGiB - 512 * kMiB - 1 * kGiB);
  EXPECT_EQ(g.temperature_gpu_celsius, 34u);
  EXPECT_EQ(g.temperature_memory_celsius, 41u);
  EXPECT_EQ(g.power_usage_milliwatts, 123456u);
  EXPECT_EQ(g.power_limit_milliwatts, 700000u);
  EXPECT_EQ(g.energy_total_millijoules, 987654321u);
  EXPECT_EQ(g.clock_sm_mhz, 1980u);
  EXPECT_EQ(g.clock_memory_mhz, 2619u);
  EXPECT_EQ(g.fan_speed_percent, 30u);
  EXPECT_EQ(g.encoder_utilization_percent, 5u);
  EXPECT_EQ(g.decoder_utilization_percent, 7u);
  EXPECT_EQ(g.pcie_tx_bytes_per_second, 1000u * 1024);
  EXPECT_EQ(g.pcie_rx_bytes_per_second, 2000u * 1024);
  EXPECT_EQ(g.pcie_replay_total, 3u);
  EXPECT_EQ(g.nvlink_tx_bytes_total, 1048576ull * 1024);
  EXPECT_EQ(g.nvlink_rx_bytes_total, 2097152ull * 1024);
  EXPECT_EQ(g.ecc_corrected_volatile_total, 2u);
  EXPECT_EQ(g.ecc_uncorrected_volatile_total, 0u);
  EXPECT_EQ(g.remapped_rows_correctable, 1u);
  EXPECT_EQ(g.remapped_rows_uncorrectable, 0u);
  EXPECT_EQ(g.remapped_rows_pending, false);
  EXPECT_EQ(g.remapped_rows_failure, false);
  EXPECT_EQ(g.clock_event_reasons, 0x5u);
  EXPECT_EQ(g.xid_errors_total, 1u);
  EXPECT_EQ(g.last_xid, 31u);

  const DeviceSample& h = pass.devices[1];
  EXPECT_EQ(h.index, 1u);
  EXPECT_EQ(h.pci_bus_id, "00000000:3B:00.0");
  EXPECT_EQ(h.utilization_gpu_percent, 55u);
  EXPECT_EQ(h.memory_used_bytes, 2 * kGiB);
  EXPECT_EQ(h.fan_speed_percent, 31u);
  EXPECT_EQ(h.clock_event_reasons, 0u);
  EXPECT_EQ(h.xid_errors_total, 0u);
  EXPECT_EQ(h.last_xid, std::nullopt);

  // XIDs accumulate across passes; the single pending one is not counted twice.
  DevicePass again = sampler.sample();
  EXPECT_EQ(again.devices[0].xid_errors_total, 1u);
  EXPECT_EQ(again.devices[0].last_xid, 31u);
}

TEST(DeviceSampler, UnsupportedFieldsAreAbsentForThatGpuOnly) {
  auto session = open_scenario("unsupported");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session);
  DevicePass pass = sampler.sample();
  ASSERT_EQ(pass.devices.size(), 2u);
  EXPECT_TRUE(pass.errors.empty());

  // GPU 0 is a data-centre GPU without a fan: only the fan is missing.
  const DeviceSample& g = pass.devices[0];
  EXPECT_EQ(g.fan_speed_percent, std::nullopt);
  EXPECT_TRUE(g.field_errors.empty());
  EXPECT_EQ(g.utilization_gpu_percent, 45u);
  EXPECT_EQ(g.memory_used_bytes, 1 * kGiB);
  EXPECT_EQ(g.temperature_memory_celsius, 41u);
  EXPECT_EQ(g.power_usage_milliwatts, 123456u);
  EXPECT_EQ(g.nvlink_tx_bytes_total, 1048576ull * 1024);
  EXPECT_EQ(g.xid_errors_total, 1u);

  // GPU 1 lacks most optional features; what it has is still reported.
  const DeviceSample& h = pass.devices[1];
  EXPECT_FALSE(h.lost);
  EXPECT_TRUE(h.field_errors.empty());
  EXPECT_EQ(h.utilization_gpu_percent, 55u);
  EXPECT_EQ(h.memory_total_bytes, 80 * kGiB);
  EXPECT_EQ(h.temperature_gpu_celsius, 35u);
  EXPECT_EQ(h.clock_sm_mhz, 1880u);
  EXPECT_EQ(h.temperature_memory_celsius, std::nullopt);
  EXPECT_EQ(h.power_usage_milliwatts, std::nullopt);
  EXPECT_EQ(h.power_limit_milliwatts, std::nullopt);
  EXPECT_EQ(h.energy_total_millijoules, std::nullopt);
  EXPECT_EQ(h.fan_speed_percent, std::nullopt);
  EXPECT_EQ(h.encoder_utilization_percent, std::nullopt);
  EXPECT_EQ(h.decoder_utilization_percent, std::nullopt);
  EXPECT_EQ(h.pcie_tx_bytes_per_second, std::nullopt);
  EXPECT_EQ(h.pcie_replay_total, std::nullopt);
  EXPECT_EQ(h.nvlink_tx_bytes_total, std::nullopt);  // zero links: absent, not 0 B
  EXPECT_EQ(h.nvlink_rx_bytes_total, std::nullopt);
  EXPECT_EQ(h.ecc_corrected_volatile_total, std::nullopt);
  EXPECT_EQ(h.remapped_rows_correctable, std::nullopt);
  EXPECT_EQ(h.clock_event_reasons, std::nullopt);
  EXPECT_EQ(h.xid_errors_total, std::nullopt);
  EXPECT_EQ(h.last_xid, std::nullopt);
}

TEST(DeviceSampler, GpuLostMidRunKeepsTheOtherGpu) {
  auto session = open_scenario("gpu_lost");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session);
  DevicePass first = sampler.sample();
  ASSERT_EQ(first.devices.size(), 2u);
  EXPECT_FALSE(first.devices[1].lost);
  EXPECT_EQ(first.devices[1].memory_used_bytes, 2 * kGiB);

  for (int pass_no = 0; pass_no < 2; ++pass_no) {
    DevicePass pass = sampler.sample();
    ASSERT_EQ(pass.devices.size(), 2u);
    const DeviceSample& lost = pass.devices[1];
    EXPECT_TRUE(lost.lost);
    EXPECT_EQ(lost.error, "nvmlDeviceGetUtilizationRates failed: GPU is lost");
    // Identity survives, metrics are gone.
    EXPECT_EQ(lost.uuid, "GPU-fa4e0000-0000-0000-0000-000000000001");
    EXPECT_EQ(lost.pci_bus_id, "00000000:3B:00.0");
    EXPECT_EQ(lost.utilization_gpu_percent, std::nullopt);
    EXPECT_EQ(lost.memory_used_bytes, std::nullopt);
    EXPECT_EQ(lost.xid_errors_total, std::nullopt);
    EXPECT_TRUE(lost.field_errors.empty());

    const DeviceSample& ok = pass.devices[0];
    EXPECT_FALSE(ok.lost);
    EXPECT_EQ(ok.memory_used_bytes, 1 * kGiB);
    EXPECT_EQ(ok.fan_speed_percent, 30u);
  }
}

TEST(DeviceSampler, FirstPassHasTheSlowFieldsFromTheConstructorsRound) {
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session, slow_period(std::chrono::hours(1)));
  EXPECT_EQ(sampler.slow_read_rounds(), 1u);  // the constructor's; the thread's is an hour away
  EXPECT_GE(sampler.slow_read_cpu_time().count(), 0);
  DevicePass pass = sampler.sample();
  ASSERT_EQ(pass.devices.size(), 2u);
  EXPECT_EQ(pass.devices[0].energy_total_millijoules, 987654321u);
  EXPECT_EQ(pass.devices[0].pcie_replay_total, 3u);
  EXPECT_EQ(pass.devices[1].energy_total_millijoules, 987654322u);
  EXPECT_EQ(pass.devices[1].pcie_replay_total, 4u);
  EXPECT_TRUE(pass.devices[0].field_errors.empty());
  // Later passes report the same reading until the next round.
  DevicePass again = sampler.sample();
  EXPECT_EQ(again.devices[0].energy_total_millijoules, 987654321u);
  EXPECT_EQ(again.devices[1].pcie_replay_total, 4u);
}

TEST(DeviceSampler, SlowThreadKeepsReading) {
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session, slow_period(std::chrono::milliseconds(1)));
  ASSERT_TRUE(wait_for_rounds(sampler, 3));
  EXPECT_GE(sampler.slow_read_cpu_time().count(), 0);
  DevicePass pass = sampler.sample();
  ASSERT_EQ(pass.devices.size(), 2u);
  EXPECT_EQ(pass.devices[0].energy_total_millijoules, 987654321u);
  EXPECT_EQ(pass.devices[1].pcie_replay_total, 4u);
  EXPECT_TRUE(pass.devices[0].field_errors.empty());
  EXPECT_TRUE(pass.devices[1].field_errors.empty());
}

TEST(DeviceSampler, DestructionDoesNotWaitForTheSlowPeriod) {
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  // An hour-long wait per sampler: each destructor must wake its thread, not sit it out.
  for (int i = 0; i < 20; ++i) {
    DeviceSampler sampler(session, slow_period(std::chrono::hours(1)));
    if (i % 2 == 0) {
      EXPECT_EQ(sampler.sample().devices.size(), 2u);
    }
  }
  // And a sampler whose thread is mid-round or about to start one.
  for (int i = 0; i < 20; ++i) {
    DeviceSampler sampler(session, slow_period(std::chrono::nanoseconds(1)));
  }
}

// The SigBlk mask of one of this process's threads, from /proc.
std::uint64_t blocked_signals(const std::filesystem::path& task) {
  std::ifstream status(task / "status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("SigBlk:", 0) == 0) return std::stoull(line.substr(7), nullptr, 16);
  }
  return 0;
}

bool blocks(std::uint64_t mask, int sig) { return (mask >> (sig - 1)) & 1; }

TEST(DeviceSampler, SlowThreadTakesNoSignals) {
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  const auto self = std::filesystem::path("/proc/self/task") / std::to_string(gettid());
  const std::uint64_t mask_before = blocked_signals(self);
  DeviceSampler sampler(session, slow_period(std::chrono::hours(1)));
  EXPECT_EQ(blocked_signals(self), mask_before);  // the caller's mask is restored
  int blocking_threads = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    if (task.path() == self) continue;
    const std::uint64_t mask = blocked_signals(task.path());
    if (blocks(mask, SIGINT) && blocks(mask, SIGTERM) && blocks(mask, SIGHUP) && blocks(mask, SIGUSR1)) {
      ++blocking_threads;
    }
  }
  EXPECT_GE(blocking_threads, 1);
}

TEST(DeviceSampler, ZeroPeriodReadsTheSlowFieldsInEveryPass) {
  auto session = open_scenario("energy_error");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session, slow_period(std::chrono::nanoseconds::zero()));
  for (int pass_no = 0; pass_no < 2; ++pass_no) {
    DevicePass pass = sampler.sample();
    ASSERT_EQ(pass.devices.size(), 2u);
    EXPECT_EQ(pass.devices[0].energy_total_millijoules, std::nullopt);
    EXPECT_EQ(pass.devices[0].field_errors, std::vector<std::string>{kEnergyError});
    EXPECT_EQ(pass.devices[0].pcie_replay_total, 3u);
    EXPECT_EQ(pass.devices[1].energy_total_millijoules, 987654322u);
    EXPECT_TRUE(pass.devices[1].field_errors.empty());
  }
  EXPECT_EQ(sampler.slow_read_rounds(), 0u);  // no rounds off the pass: no thread
  EXPECT_EQ(sampler.slow_read_cpu_time().count(), 0);
}

TEST(DeviceSampler, SlowReadErrorReachesTheNextPassOnce) {
  auto session = open_scenario("energy_error");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session, slow_period(std::chrono::hours(1)));
  DevicePass first = sampler.sample();
  ASSERT_EQ(first.devices.size(), 2u);
  const DeviceSample& g = first.devices[0];
  EXPECT_FALSE(g.lost);
  EXPECT_EQ(g.field_errors, std::vector<std::string>{kEnergyError});
  EXPECT_EQ(g.energy_total_millijoules, std::nullopt);
  EXPECT_EQ(g.pcie_replay_total, 3u);  // the other slow field is unaffected
  EXPECT_EQ(g.power_usage_milliwatts, 123456u);
  EXPECT_TRUE(first.devices[1].field_errors.empty());
  EXPECT_EQ(first.devices[1].energy_total_millijoules, 987654322u);

  // One round, one report: the next pass has nothing new to say.
  DevicePass second = sampler.sample();
  EXPECT_TRUE(second.devices[0].field_errors.empty());
  EXPECT_EQ(second.devices[0].pcie_replay_total, 3u);
}

TEST(DeviceSampler, SlowThreadErrorReachesALaterPass) {
  auto session = open_scenario("energy_error");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session, slow_period(std::chrono::milliseconds(1)));
  sampler.sample();  // takes the constructor round's report
  const std::uint64_t rounds = sampler.slow_read_rounds();
  ASSERT_TRUE(wait_for_rounds(sampler, rounds + 2));
  DevicePass pass = sampler.sample();
  ASSERT_EQ(pass.devices.size(), 2u);
  const DeviceSample& g = pass.devices[0];
  ASSERT_FALSE(g.field_errors.empty());  // one per round since the previous pass
  for (const std::string& e : g.field_errors) EXPECT_EQ(e, kEnergyError);
  EXPECT_EQ(g.energy_total_millijoules, std::nullopt);
  EXPECT_TRUE(pass.devices[1].field_errors.empty());
}

TEST(DeviceSampler, GpuLostWhileTheSlowThreadReads) {
  auto session = open_scenario("gpu_lost");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session, slow_period(std::chrono::milliseconds(1)));
  DevicePass first = sampler.sample();
  ASSERT_EQ(first.devices.size(), 2u);
  EXPECT_FALSE(first.devices[1].lost);
  EXPECT_EQ(first.devices[1].energy_total_millijoules, 987654322u);

  for (int pass_no = 0; pass_no < 3; ++pass_no) {
    DevicePass pass = sampler.sample();  // the second pass drives GPU 1 off the bus
    ASSERT_TRUE(wait_for_rounds(sampler, sampler.slow_read_rounds() + 2));
    ASSERT_EQ(pass.devices.size(), 2u);
    const DeviceSample& lost = pass.devices[1];
    EXPECT_TRUE(lost.lost);
    EXPECT_EQ(lost.error, "nvmlDeviceGetUtilizationRates failed: GPU is lost");
    EXPECT_EQ(lost.energy_total_millijoules, std::nullopt);
    EXPECT_TRUE(lost.field_errors.empty());  // the slow thread's view of the loss is not repeated

    const DeviceSample& ok = pass.devices[0];
    EXPECT_FALSE(ok.lost);
    EXPECT_EQ(ok.energy_total_millijoules, 987654321u);
    EXPECT_TRUE(ok.field_errors.empty());
  }
}

TEST(DeviceSampler, NoGpusGivesAnEmptyPass) {
  auto session = open_scenario("no_gpus");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session);
  DevicePass pass = sampler.sample();
  EXPECT_TRUE(pass.devices.empty());
  EXPECT_TRUE(pass.errors.empty());
}

}  // namespace
}  // namespace eacgm::sample
