// `eacgm serve` on the fake NVML with GPU 0 in MIG mode: /metrics has one series per GPU
// instance in each DCGM_FI_PROF_* family with dcgm-exporter's GPU_I_PROFILE and GPU_I_ID
// labels (promtool accepts them), none for the whole GPU, and /api/v1/gpus lists the
// instances' counters.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "../unit/server/http_client.h"
#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using server::testing::get;

// GPU 0 in MIG mode with two GPU instances while a test runs: the fake reads the variable
// at every call, and serve inherits it.
class MigOnGpu0 {
 public:
  MigOnGpu0() { setenv("EACGM_FAKE_NVML_MIG", "2", 1); }
  ~MigOnGpu0() { unsetenv("EACGM_FAKE_NVML_MIG"); }
  MigOnGpu0(const MigOnGpu0&) = delete;
  MigOnGpu0& operator=(const MigOnGpu0&) = delete;
};

class GpmMigServe : public ServeFixture {};

TEST_F(GpmMigServe, OneSeriesPerGpuInstanceWithDcgmExportersLabels) {
  const MigOnGpu0 mig;
  auto serve = start_serve();
  const std::string gpu0 =
      "gpu=\"0\",UUID=\"GPU-fa4e0000-0000-0000-0000-000000000000\",pci_bus_id=\"00000000:19:00.0\","
      "device=\"nvidia0\",modelName=\"Fake NVML GPU (test stand-in)\"";
  const std::string gi1 = "DCGM_FI_PROF_SM_ACTIVE{" + gpu0 + ",GPU_I_PROFILE=\"3g.40gb\",GPU_I_ID=\"1\"";
  const std::string gi5 = "DCGM_FI_PROF_SM_ACTIVE{" + gpu0 + ",GPU_I_PROFILE=\"2g.20gb\",GPU_I_ID=\"5\"";
  std::string body;
  // GPM needs two samples: the first passes may have no instance series yet.
  ASSERT_TRUE(eventually([&] {
    body = get(port_, "/metrics").body;
    return body.find("\n" + gi5) != std::string::npos;
  })) << body
      << serve->err();

  // Each instance its own value; the series end with the GPU's own remaining labels.
  std::string gi1_line, gi5_line;
  std::istringstream lines(body);
  std::size_t whole_gpu0 = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(gi1)) gi1_line = line;
    if (line.starts_with(gi5)) gi5_line = line;
    if (line.starts_with("DCGM_FI_PROF_") && line.find("gpu=\"0\"") != std::string::npos &&
        line.find("GPU_I_ID") == std::string::npos) {
      ++whole_gpu0;
    }
  }
  EXPECT_TRUE(gi1_line.ends_with("} 0.7")) << gi1_line;
  EXPECT_TRUE(gi5_line.ends_with("} 0.6")) << gi5_line;
  EXPECT_EQ(whole_gpu0, 0u) << body;
  EXPECT_NE(body.find("\nDCGM_FI_PROF_SM_ACTIVE{gpu=\"1\""), std::string::npos);

  const std::string path = dir_ + "/metrics.txt";
  std::ofstream(path) << body;
  Subprocess promtool({"/bin/sh", "-c", "/usr/bin/promtool check metrics < " + path});
  const int rc = promtool.wait();
  EXPECT_TRUE(rc == 0 || rc == 3) << promtool.out() << promtool.err();
  const std::string findings = promtool.out() + promtool.err();
  EXPECT_EQ(findings.find("GPU_I_"), std::string::npos) << findings;
  EXPECT_EQ(findings.find("error while linting"), std::string::npos) << findings;

  nlohmann::json gpus;
  ASSERT_TRUE(eventually([&] {
    gpus = nlohmann::json::parse(get(port_, "/api/v1/gpus").body, nullptr, false);
    return gpus.is_object() && gpus["gpus"].size() == 2 && gpus["gpus"][0]["gpm_instances"].size() == 2;
  })) << gpus.dump();
  const nlohmann::json& g = gpus["gpus"][0];
  EXPECT_EQ(g["gpm"], nullptr);
  EXPECT_EQ(g["gpm_instances"][0]["gpu_instance_id"], 1);
  EXPECT_EQ(g["gpm_instances"][0]["profile"], "3g.40gb");
  EXPECT_DOUBLE_EQ(g["gpm_instances"][0]["sm_active"].get<double>(), 0.7);
  EXPECT_DOUBLE_EQ(g["gpm_instances"][1]["tensor_active"].get<double>(), 0.4);
  EXPECT_FALSE(gpus["gpus"][1].contains("gpm_instances"));
}

}  // namespace
}  // namespace eacgm::test
