// The hooked-function table's lookups: names, and the variant cuGetProcAddress returns
// for a version and the per-thread flag.
#include "govern/hookcore/hook_table.h"

#include <gtest/gtest.h>

#include <string>

namespace eacgm::govern {
namespace {

std::string variant(const char* base, int version, bool per_thread) {
  HookId id = select_variant(base, version, per_thread);
  return id == HookId::kCount ? "none" : hook_info(id).name;
}

TEST(HookTable, FindsExportedNames) {
  EXPECT_EQ(find_hook("cuMemAlloc_v2"), HookId::cuMemAlloc_v2);
  EXPECT_EQ(find_hook("nvmlDeviceGetMemoryInfo_v2"), HookId::nvmlDeviceGetMemoryInfo_v2);
  EXPECT_EQ(find_hook("cuGetProcAddress"), HookId::cuGetProcAddress);
  EXPECT_EQ(find_hook("cuMemAlloc"), HookId::kCount) << "the v1 ABI (32-bit sizes) is not ours";
  EXPECT_EQ(find_hook("cuInit"), HookId::kCount);
  EXPECT_EQ(find_hook("malloc"), HookId::kCount);
  EXPECT_EQ(find_hook(""), HookId::kCount);
}

TEST(HookTable, SelectsByVersion) {
  EXPECT_EQ(variant("cuMemAlloc", 12000, false), "cuMemAlloc_v2");
  EXPECT_EQ(variant("cuMemAlloc", 3000, false), "none");  // the driver returns the v1 ABI
  EXPECT_EQ(variant("cuCtxSynchronize", 12080, false), "cuCtxSynchronize");
  EXPECT_EQ(variant("cuCtxSynchronize", 13000, false), "cuCtxSynchronize_v2");
  EXPECT_EQ(variant("cuGetProcAddress", 11030, false), "cuGetProcAddress");
  EXPECT_EQ(variant("cuGetProcAddress", 12000, false), "cuGetProcAddress_v2");
  EXPECT_EQ(variant("cuMemAllocAsync", 11000, false), "none");
  EXPECT_EQ(variant("nvmlDeviceGetMemoryInfo", 12000, false), "none") << "NVML has no cuGetProcAddress";
}

TEST(HookTable, SelectsPerThreadVariants) {
  EXPECT_EQ(variant("cuLaunchKernel", 12000, true), "cuLaunchKernel_ptsz");
  EXPECT_EQ(variant("cuLaunchKernel", 12000, false), "cuLaunchKernel");
  EXPECT_EQ(variant("cuLaunchKernel", 6050, true), "cuLaunchKernel") << "no _ptsz before CUDA 7.0";
  EXPECT_EQ(variant("cuMemcpyDtoH", 12000, true), "cuMemcpyDtoH_v2_ptds");
  EXPECT_EQ(variant("cuMemAlloc", 12000, true), "cuMemAlloc_v2") << "no stream, no per-thread variant";
  EXPECT_EQ(variant("cuGraphLaunch", 13000, true), "cuGraphLaunch_ptsz");
}

}  // namespace
}  // namespace eacgm::govern
