#include "core/driver_copy_name.h"

#include <gtest/gtest.h>

namespace eacgm {
namespace {

TEST(DriverCopyName, ModuleVersionIsTheDottedNumberOfTheFirstLine) {
  EXPECT_EQ(
      driver_module_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release "
                            "Build  (nixbld@)  \nGCC version:  gcc version 14.2.0 (GCC)\n"),
      "580.159.04");
  EXPECT_EQ(driver_module_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 "
                                  "01:15:15 UTC 2023\n"),
            "535.104.05");
  EXPECT_EQ(driver_module_version("NVRM version: NVIDIA UNIX Kernel Module\tfor x86_64\t550.54\n"), "550.54");
}

TEST(DriverCopyName, NoVersionWithoutADottedNumber) {
  EXPECT_EQ(driver_module_version(""), "");
  EXPECT_EQ(driver_module_version("NVRM version: x86_64 Module 64 . .5 5.\n580.1\n"), "")
      << "only the first line counts; '.', '.5' and '5.' are no versions";
}

TEST(DriverCopyName, NamedByVersionElseBySizeAndTime) {
  EXPECT_EQ(driver_copy_name("580.159.04", 96284520, 1700000000), "eacgm-libcuda.so.580.159.04");
  EXPECT_EQ(driver_copy_name("", 4096, 1700000000), "eacgm-libcuda.so.4096-1700000000");
  EXPECT_NE(driver_copy_name("580.159.04", 0, 0).rfind("libcuda.so", 0), 0u)
      << "never a name the driver probes (libcuda.so*) match";
}

TEST(DriverCopyName, TheAgentKnowsACopyByItsName) {
  EXPECT_TRUE(is_driver_copy("/dev/shm/eacgm-libcuda.so.580.159.04"));
  EXPECT_TRUE(is_driver_copy("eacgm-libcuda.so.56296-1796163345"));
  EXPECT_FALSE(is_driver_copy("/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04"));
  EXPECT_FALSE(is_driver_copy("/dev/shm/eacgm-libcuda.so."));
  EXPECT_FALSE(is_driver_copy("/dev/shm/eacgm-libcuda.so.580.159.04/libcuda.so.1"));
}

TEST(DriverCopyName, DriverFileMustBeOfTheModulesVersion) {
  EXPECT_TRUE(driver_of_version("/usr/local/nvidia/lib64/libcuda.so.580.159.04", "580.159.04"));
  EXPECT_FALSE(driver_of_version("/usr/lib/x86_64-linux-gnu/libcuda.so.575.57.08", "580.159.04"));
  EXPECT_FALSE(driver_of_version("/usr/lib/libcuda.so.1", "580.159.04"));
  EXPECT_FALSE(driver_of_version("/usr/lib/libcuda.so.1580.159.04", "580.159.04"));
  EXPECT_FALSE(driver_of_version("/usr/lib/libcuda.so.1", ""));
}

}  // namespace
}  // namespace eacgm
