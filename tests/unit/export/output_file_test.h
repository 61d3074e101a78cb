// Test support: a consumer's output in a temporary file, what was written read back,
// and the sizes its `on_limit` callback was told.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace eacgm::test {

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override { file_ = std::tmpfile(); }
  void TearDown() override {
    if (file_) std::fclose(file_);
  }

  // Everything written to file_ so far.
  std::string written() {
    std::fflush(file_);
    std::rewind(file_);
    std::string s;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), file_)) > 0) s.append(buf, n);
    return s;
  }

  // For the consumer's `on_limit`: records each size it is told.
  auto record_limit() {
    return [this](std::uint64_t limit) { limits_.push_back(limit); };
  }

  FILE* file_ = nullptr;
  std::vector<std::uint64_t> limits_;
};

}  // namespace eacgm::test
