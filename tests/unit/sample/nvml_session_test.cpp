// Loading and initialising NVML: the fake library, a missing library and a failing
// nvmlInit_v2 each give a session or one actionable sentence, never a crash.
#include <gtest/gtest.h>

#include "fake_nvml_env.h"
#include "sample/nvml_api.h"

namespace eacgm::sample {
namespace {

using testing::fake_nvml_path;
using testing::use_scenario;

TEST(NvmlSession, OpensFakeAndEnumeratesBothGpus) {
  use_scenario("full");
  auto s = nvml::Session::open(fake_nvml_path());
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ((*s)->library_path(), fake_nvml_path());
  ASSERT_EQ((*s)->devices().size(), 2u);
  EXPECT_NE((*s)->devices()[0], nullptr);
  EXPECT_NE((*s)->devices()[1], nullptr);
  EXPECT_EQ((*s)->error_string(nvml::kErrorNotSupported), "Not Supported");
  EXPECT_EQ((*s)->error_string(nvml::kErrorGpuIsLost), "GPU is lost");
  // Entry points the fake exports are resolved, including the versioned variants.
  const nvml::Functions& f = (*s)->fn();
  EXPECT_NE(f.DeviceGetMemoryInfo_v2, nullptr);
  EXPECT_NE(f.DeviceGetPciInfo_v3, nullptr);
  EXPECT_NE(f.DeviceGetComputeRunningProcesses_v3, nullptr);
  EXPECT_NE(f.EventSetWait_v2, nullptr);
}

TEST(NvmlSession, MissingLibraryNamesTheVariableAndPath) {
  auto s = nvml::Session::open("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().rfind(
                "NVML not available (cannot load EACGM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1: ", 0),
            0u)
      << s.error();
}

TEST(NvmlSession, LibraryWithoutNvmlSymbolsIsRejected) {
  // libc is a loadable library that is certainly not NVML.
  auto s = nvml::Session::open("libc.so.6");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(),
            "NVML not available (libc.so.6 has no nvmlInit_v2: the NVIDIA driver is too old, install R450 or "
            "newer)");
}

TEST(NvmlSession, InitFailureCarriesNvmlErrorString) {
  use_scenario("init_fail");
  auto s = nvml::Session::open(fake_nvml_path());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(),
            "NVML not available (nvmlInit_v2 failed: Driver Not Loaded; load the nvidia kernel module (is "
            "the driver installed?))");
}

TEST(NvmlSession, NoGpusIsAnEmptySessionNotAnError) {
  use_scenario("no_gpus");
  auto s = nvml::Session::open(fake_nvml_path());
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_TRUE((*s)->devices().empty());
}

TEST(NvmlSession, ErrorClassification) {
  EXPECT_TRUE(nvml::is_absent(nvml::kErrorNotSupported));
  EXPECT_TRUE(nvml::is_absent(nvml::kErrorFunctionNotFound));
  EXPECT_TRUE(nvml::is_absent(nvml::kErrorNoPermission));
  EXPECT_FALSE(nvml::is_absent(nvml::kErrorGpuIsLost));
  EXPECT_FALSE(nvml::is_absent(nvml::kErrorUnknown));
  EXPECT_TRUE(nvml::is_gpu_lost(nvml::kErrorGpuIsLost));
  EXPECT_TRUE(nvml::is_gpu_lost(nvml::kErrorResetRequired));
  EXPECT_FALSE(nvml::is_gpu_lost(nvml::kErrorNotSupported));
}

}  // namespace
}  // namespace eacgm::sample
