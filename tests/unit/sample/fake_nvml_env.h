// Shared by the sample-stage tests: where the fake libnvidia-ml lives and how a test
// picks its scenario (the fake reads the variable in nvmlInit_v2).
#pragma once

#include <cstdlib>
#include <string>

namespace eacgm::testing {

inline const char* fake_nvml_path() { return EACGM_TEST_BIN_DIR "/fake_nvml/libnvidia-ml.so.1"; }

inline void use_scenario(const std::string& name) {
  setenv("EACGM_FAKE_NVML_SCENARIO", name.c_str(), /*overwrite=*/1);
}

}  // namespace eacgm::testing
