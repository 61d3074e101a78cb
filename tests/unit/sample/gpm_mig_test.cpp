// GPM on a GPU in MIG mode, against the fake NVML's MIG knob: counters per GPU instance and
// none for the whole GPU, instances that come and go, and one without GPM left out.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "fake_nvml_env.h"
#include "sample/device_sampler.h"
#include "sample/gpm_reader.h"

namespace eacgm::sample {
namespace {

using testing::open_scenario;

// Sets a variable the fake reads at every call, for one test.
class FakeEnv {
 public:
  FakeEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~FakeEnv() { unsetenv(name_); }
  FakeEnv(const FakeEnv&) = delete;
  FakeEnv& operator=(const FakeEnv&) = delete;

 private:
  const char* name_;
};

std::vector<unsigned> ids_of(const std::vector<GpmInstanceCounters>& instances) {
  std::vector<unsigned> ids;
  ids.reserve(instances.size());
  for (const auto& in : instances) ids.push_back(in.gpu_instance_id);
  return ids;
}

TEST(GpmMig, EachGpuInstanceHasItsOwnCountersAndTheWholeGpuNone) {
  FakeEnv mig("EACGM_FAKE_NVML_MIG", "3");
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session);
  EXPECT_EQ(sampler.gpm_count(), 2u);  // a GPU in MIG mode still has GPM
  DevicePass pass = sampler.sample();
  ASSERT_EQ(pass.devices.size(), 2u);
  const DeviceSample& g = pass.devices[0];
  EXPECT_TRUE(g.field_errors.empty());
  EXPECT_TRUE(g.gpm_supported);
  EXPECT_TRUE(g.gpm_mig);
  EXPECT_FALSE(g.gpm.has_value());
  ASSERT_EQ(ids_of(g.gpm_instances), (std::vector<unsigned>{1, 5, 13}));
  // GPU instance 1 holds two compute instances ("2c.3g.40gb", "1c.3g.40gb"): one entry, and
  // the GPU instance's profile.
  EXPECT_EQ(g.gpm_instances[0].profile, "3g.40gb");
  EXPECT_EQ(g.gpm_instances[1].profile, "2g.20gb");
  EXPECT_EQ(g.gpm_instances[2].profile, "1g.10gb");
  for (std::size_t k = 0; k < 3; ++k) {
    const GpmCounters& c = g.gpm_instances[k].counters;
    const double drop = 0.10 * static_cast<double>(k + 1);
    EXPECT_GE(c.interval_seconds, 0.09) << k;
    EXPECT_DOUBLE_EQ(*c.sm_active, 0.80 - drop) << k;
    EXPECT_DOUBLE_EQ(*c.tensor_active, 0.60 - drop) << k;
    EXPECT_DOUBLE_EQ(*c.tensor_hmma_active, 0.55 - drop) << k;
    EXPECT_DOUBLE_EQ(*c.graphics_active, 0.85 - drop) << k;
    EXPECT_DOUBLE_EQ(*c.dram_active, 0.25) << k;
    EXPECT_DOUBLE_EQ(*c.fp32_active, 0.20) << k;
    EXPECT_FALSE(c.nvlink_tx_bytes_per_second.has_value()) << k;
    EXPECT_TRUE(c.nvlinks.empty()) << k;
  }
  // The other GPU is read whole, as before.
  const DeviceSample& other = pass.devices[1];
  EXPECT_FALSE(other.gpm_mig);
  EXPECT_TRUE(other.gpm_instances.empty());
  ASSERT_TRUE(other.gpm.has_value());
  EXPECT_DOUBLE_EQ(*other.gpm->sm_active, 0.75);
}

TEST(GpmMig, GraphicsActivityIsAskedForNowAndThenPerInstance) {
  FakeEnv mig("EACGM_FAKE_NVML_MIG", "1");
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  GpmReader reader(session, session->devices());
  for (unsigned pass = 0; pass < GpmReader::kGraphicsEvery + 2; ++pass) {
    GpmRead r = reader.read(0);
    ASSERT_EQ(r.instances.size(), 1u) << pass;
    // Held between the reads that ask for it: the fake's value on every pass.
    EXPECT_EQ(r.instances[0].counters.graphics_active, std::optional<double>(0.75)) << pass;
    EXPECT_EQ(r.instances[0].counters.sm_active, std::optional<double>(0.70)) << pass;
  }
}

TEST(GpmMig, AVanishedInstanceIsDroppedAtItsFailedReadAndANewOneReadFromTheReadAfter) {
  FakeEnv mig("EACGM_FAKE_NVML_MIG", "2");
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  // Listed only at start and after a failed read.
  GpmReader reader(session, session->devices(), true, std::chrono::hours(1));
  EXPECT_EQ(ids_of(reader.read(0).instances), (std::vector<unsigned>{1, 5}));

  setenv("EACGM_FAKE_NVML_MIG", "1", 1);  // instance 5 destroyed
  GpmRead gone = reader.read(0);
  EXPECT_EQ(ids_of(gone.instances), (std::vector<unsigned>{1}));
  EXPECT_TRUE(gone.notes.empty());  // a destroyed instance is no error
  EXPECT_EQ(gone.status, nvml::kSuccess);

  setenv("EACGM_FAKE_NVML_MIG", "3", 1);  // 5 and 13 made: seen at the listing the failure asked for
  GpmRead listed = reader.read(0);
  EXPECT_EQ(ids_of(listed.instances), (std::vector<unsigned>{1}));  // their first samples
  EXPECT_EQ(ids_of(reader.read(0).instances), (std::vector<unsigned>{1, 5, 13}));
}

TEST(GpmMig, NewInstancesAreFoundAtTheNextListing) {
  FakeEnv mig("EACGM_FAKE_NVML_MIG", "1");
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  GpmReader slow(session, session->devices(), true, std::chrono::hours(1));
  GpmReader every_read(session, session->devices(), true, std::chrono::nanoseconds::zero());
  EXPECT_EQ(ids_of(slow.read(0).instances), (std::vector<unsigned>{1}));
  EXPECT_EQ(ids_of(every_read.read(0).instances), (std::vector<unsigned>{1}));
  setenv("EACGM_FAKE_NVML_MIG", "2", 1);
  EXPECT_EQ(ids_of(every_read.read(0).instances), (std::vector<unsigned>{1}));
  EXPECT_EQ(ids_of(every_read.read(0).instances), (std::vector<unsigned>{1, 5}));
  EXPECT_EQ(ids_of(slow.read(0).instances), (std::vector<unsigned>{1}));  // not listed again yet
}

TEST(GpmMig, MigTurnedOffGivesTheWholeGpuAgain) {
  FakeEnv mig("EACGM_FAKE_NVML_MIG", "1");
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  GpmReader reader(session, session->devices(), true, std::chrono::nanoseconds::zero());
  GpmRead on = reader.read(0);
  EXPECT_TRUE(on.mig);
  EXPECT_FALSE(on.counters.has_value());
  unsetenv("EACGM_FAKE_NVML_MIG");
  GpmRead first = reader.read(0);  // the whole GPU's first sample
  EXPECT_FALSE(first.mig);
  EXPECT_TRUE(first.instances.empty());
  EXPECT_FALSE(first.counters.has_value());
  EXPECT_EQ(first.status, nvml::kSuccess);
  GpmRead whole = reader.read(0);
  ASSERT_TRUE(whole.counters.has_value());
  EXPECT_DOUBLE_EQ(*whole.counters->sm_active, 0.80);
}

TEST(GpmMig, AnInstanceWithoutGpmIsSaidOnceAndLeftOut) {
  FakeEnv mig("EACGM_FAKE_NVML_MIG", "3");
  FakeEnv without("EACGM_FAKE_NVML_MIG_NO_GPM", "5");
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  DeviceSampler sampler(session);
  DevicePass first = sampler.sample();
  EXPECT_EQ(ids_of(first.devices[0].gpm_instances), (std::vector<unsigned>{1, 13}));
  ASSERT_EQ(first.devices[0].field_errors.size(), 1u);
  EXPECT_EQ(
      first.devices[0].field_errors[0],
      "GPU instance 5 (2g.20gb): no GPM profiling counters (nvmlGpmMigSampleGet: Not Supported), left out");
  DevicePass second = sampler.sample();
  EXPECT_EQ(ids_of(second.devices[0].gpm_instances), (std::vector<unsigned>{1, 13}));
  EXPECT_TRUE(second.devices[0].field_errors.empty());
}

TEST(GpmMig, ProfileFromTheMigDeviceName) {
  const std::pair<const char*, const char*> names[] = {
      {"NVIDIA H100 80GB HBM3 MIG 1g.10gb", "1g.10gb"},
      {"NVIDIA A100-SXM4-40GB MIG 1c.3g.20gb", "3g.20gb"},  // a compute instance's: its GPU instance's
      {"NVIDIA H100 NVL MIG 1g.12gb+me", "1g.12gb+me"},
      {"NVIDIA H100 80GB HBM3 MIG 7g.80gb", "7g.80gb"},
      {"NVIDIA H100 80GB HBM3", ""},
  };
  for (const auto& [name, profile] : names) EXPECT_EQ(mig_profile_of_name(name), profile) << name;
}

}  // namespace
}  // namespace eacgm::sample
