// Process sampler against the fake NVML, with a made-up /proc: memory per (process, GPU),
// utilization averaged over the interval, names, container ids, and a lost GPU.
#include "sample/process_sampler.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fake_nvml_env.h"
#include "sample/device_sampler.h"

namespace eacgm::sample {
namespace {

namespace fs = std::filesystem;
using testing::fake_nvml_path;
using testing::use_scenario;

constexpr std::uint64_t kMiB = 1024ull * 1024;
constexpr const char* kDockerId = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899";

class ProcessSamplerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    proc_ = fs::temp_directory_path() / ("eacgm-proc-" + std::to_string(::getpid()));
    fs::remove_all(proc_);
    write("5000001/cgroup", std::string("0::/system.slice/docker-") + kDockerId + ".scope\n");
    write("5000002/cgroup", "0::/user.slice/user-1000.slice/session-2.scope\n");
    write("5000003/comm", "worker\n");
  }
  void TearDown() override { fs::remove_all(proc_); }

  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((proc_ / rel).parent_path());
    std::ofstream(proc_ / rel) << text;
  }

  std::shared_ptr<const nvml::Session> open_scenario(const std::string& name) {
    use_scenario(name);
    auto s = nvml::Session::open(fake_nvml_path());
    EXPECT_TRUE(s.ok()) << s.error();
    return s.ok() ? *s : nullptr;
  }

  fs::path proc_;
};

TEST_F(ProcessSamplerTest, FullScenarioJoinsListsUtilizationAndProc) {
  auto session = open_scenario("full");
  ASSERT_TRUE(session);
  ProcessSampler sampler(session, std::chrono::seconds(1), proc_.string());
  ProcessPass pass = sampler.sample();
  EXPECT_TRUE(pass.errors.empty());
  ASSERT_EQ(pass.processes.size(), 4u);

  const ProcessSample& a = pass.processes[0];  // GPU 0, compute
  EXPECT_EQ(a.pid, 5000001u);
  EXPECT_EQ(a.gpu_index, 0u);
  EXPECT_EQ(a.gpu_uuid, "GPU-fa4e0000-0000-0000-0000-000000000000");
  EXPECT_EQ(a.name, "python3");
  EXPECT_EQ(a.container_id, kDockerId);
  EXPECT_TRUE(a.compute);
  EXPECT_FALSE(a.graphics);
  EXPECT_EQ(a.used_memory_bytes, 1024 * kMiB);
  EXPECT_EQ(a.sm_utilization_percent, 50u);  // mean of the two samples, 40 and 60
  EXPECT_EQ(a.memory_utilization_percent, 15u);
  EXPECT_EQ(a.encoder_utilization_percent, 0u);
  EXPECT_EQ(a.decoder_utilization_percent, 0u);

  const ProcessSample& b = pass.processes[1];  // GPU 0, graphics, idle in the interval
  EXPECT_EQ(b.pid, 5000002u);
  EXPECT_EQ(b.gpu_index, 0u);
  EXPECT_EQ(b.name, "Xorg");
  EXPECT_EQ(b.container_id, "");
  EXPECT_FALSE(b.compute);
  EXPECT_TRUE(b.graphics);
  EXPECT_EQ(b.used_memory_bytes, 256 * kMiB);
  EXPECT_EQ(b.sm_utilization_percent, 0u);

  const ProcessSample& c = pass.processes[2];  // the same process on GPU 1
  EXPECT_EQ(c.pid, 5000001u);
  EXPECT_EQ(c.gpu_index, 1u);
  EXPECT_EQ(c.gpu_uuid, "GPU-fa4e0000-0000-0000-0000-000000000001");
  EXPECT_EQ(c.used_memory_bytes, 512 * kMiB);
  EXPECT_EQ(c.sm_utilization_percent, 20u);
  EXPECT_EQ(c.memory_utilization_percent, 5u);
  EXPECT_EQ(c.encoder_utilization_percent, 1u);
  EXPECT_EQ(c.decoder_utilization_percent, 2u);

  const ProcessSample& d = pass.processes[3];  // NVML cannot name it or count its memory
  EXPECT_EQ(d.pid, 5000003u);
  EXPECT_EQ(d.gpu_index, 1u);
  EXPECT_EQ(d.name, "worker");  // from <proc>/5000003/comm
  EXPECT_EQ(d.used_memory_bytes, std::nullopt);
  EXPECT_EQ(d.sm_utilization_percent, 0u);
}

TEST_F(ProcessSamplerTest, UtilizationUnsupportedIsAbsentMemoryStays) {
  auto session = open_scenario("unsupported");
  ASSERT_TRUE(session);
  ProcessSampler sampler(session, std::chrono::seconds(1), proc_.string());
  ProcessPass pass = sampler.sample();
  EXPECT_TRUE(pass.errors.empty());
  ASSERT_EQ(pass.processes.size(), 4u);
  EXPECT_EQ(pass.processes[0].sm_utilization_percent, 50u);  // GPU 0 supports it
  const ProcessSample& c = pass.processes[2];
  EXPECT_EQ(c.gpu_index, 1u);
  EXPECT_EQ(c.used_memory_bytes, 512 * kMiB);
  EXPECT_EQ(c.sm_utilization_percent, std::nullopt);
  EXPECT_EQ(c.memory_utilization_percent, std::nullopt);
  EXPECT_EQ(c.encoder_utilization_percent, std::nullopt);
  EXPECT_EQ(c.decoder_utilization_percent, std::nullopt);
}

TEST_F(ProcessSamplerTest, LostGpuIsAnErrorLineAndTheOtherGpuStays) {
  auto session = open_scenario("gpu_lost");
  ASSERT_TRUE(session);
  DeviceSampler devices(session);  // its passes drive the fake's GPU 1 off the bus
  ProcessSampler sampler(session, std::chrono::seconds(1), proc_.string());
  (void)devices.sample();
  EXPECT_EQ(sampler.sample().processes.size(), 4u);
  (void)devices.sample();
  ProcessPass pass = sampler.sample();
  ASSERT_EQ(pass.errors.size(), 1u);
  EXPECT_EQ(pass.errors[0], "GPU 1: nvmlDeviceGetComputeRunningProcesses_v3: GPU is lost");
  ASSERT_EQ(pass.processes.size(), 2u);
  EXPECT_EQ(pass.processes[0].gpu_index, 0u);
  EXPECT_EQ(pass.processes[1].gpu_index, 0u);
}

TEST(ContainerId, RecognisesCommonRuntimes) {
  const std::string id(kDockerId);
  EXPECT_EQ(container_id_from_cgroup("0::/system.slice/docker-" + id + ".scope\n"), id);
  EXPECT_EQ(container_id_from_cgroup("12:memory:/docker/" + id + "\n11:cpu:/docker/" + id + "\n"), id);
  EXPECT_EQ(container_id_from_cgroup("0::/kubepods.slice/kubepods-burstable.slice/"
                                     "kubepods-burstable-pod1b2c3d4e_5f60_7182_93a4_b5c6d7e8f901.slice/"
                                     "cri-containerd-" +
                                     id + ".scope\n"),
            id);
  EXPECT_EQ(container_id_from_cgroup("0::/kubepods/besteffort/pod1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901/" + id +
                                     "\n"),
            id);
  EXPECT_EQ(container_id_from_cgroup("0::/machine.slice/libpod-" + id + ".scope/container\n"), id);
  EXPECT_EQ(container_id_from_cgroup("0::/crio-" + id + ".scope\n"), id);
}

TEST(ContainerId, IgnoresHostsAndNearMisses) {
  const std::string id(kDockerId);
  EXPECT_EQ(container_id_from_cgroup(""), "");
  EXPECT_EQ(container_id_from_cgroup("0::/\n"), "");
  EXPECT_EQ(container_id_from_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n"), "");
  EXPECT_EQ(container_id_from_cgroup("0::/docker/" + id.substr(1) + "\n"), "");  // 63 hex
  EXPECT_EQ(container_id_from_cgroup("0::/docker/" + id + "a\n"), "");           // 65 hex
  EXPECT_EQ(container_id_from_cgroup("0::/docker/x" + id + "\n"), "");           // glued to a word
  std::string upper = id;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(ch));
  EXPECT_EQ(container_id_from_cgroup("0::/docker/" + upper + "\n"), "");
}

}  // namespace
}  // namespace eacgm::sample
