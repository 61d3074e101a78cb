// Shared by the sample-stage tests: where the fake libnvidia-ml lives and how a test
// picks its scenario (the fake reads the variable in nvmlInit_v2).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "sample/nvml_api.h"

namespace eacgm::testing {

inline const char* fake_nvml_path() { return EACGM_TEST_BIN_DIR "/fake_nvml/libnvidia-ml.so.1"; }

inline void use_scenario(const std::string& name) {
  setenv("EACGM_FAKE_NVML_SCENARIO", name.c_str(), /*overwrite=*/1);
}

// A session over the fake library in scenario `name`; nullptr (and a test failure) when it
// does not open.
inline std::shared_ptr<const sample::nvml::Session> open_scenario(const std::string& name) {
  use_scenario(name);
  auto s = sample::nvml::Session::open(fake_nvml_path());
  EXPECT_TRUE(s.ok()) << s.error();
  return s.ok() ? *s : nullptr;
}

}  // namespace eacgm::testing
