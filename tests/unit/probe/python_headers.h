// CPython's own headers as the reference for the offset tables: the include folder of an
// installed pyenv version, and what a fixture compiled against it prints.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace eacgm::probe::test {

// The include folder of an installed pyenv CPython 3.<minor> whose internal/ holds
// `internal_header`; empty when none is installed.
inline std::filesystem::path pyenv_include(int minor, const std::string& internal_header) {
  namespace fs = std::filesystem;
  const std::string m = std::to_string(minor);
  fs::path include;
  std::error_code ec;
  for (const auto& d : fs::directory_iterator("/root/.pyenv/versions", ec)) {
    fs::path inc = d.path() / "include" / ("python3." + m);
    if (d.path().filename().string().rfind("3." + m + ".", 0) == 0 &&
        fs::exists(inc / "internal" / internal_header))
      include = inc;
  }
  return include;
}

// Compiles `source` against `include` (and its internal/) into `exe`, runs it and returns
// the first line it prints; on any failure adds a test failure and returns "".
inline std::string fixture_output(const std::string& source, const std::filesystem::path& include,
                                  const std::filesystem::path& exe) {
  const std::string cmd = "cc -o '" + exe.string() + "' -I'" + include.string() + "' -I'" + include.string() +
                          "/internal' '" + source + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    ADD_FAILURE() << "failed: " << cmd;
    return "";
  }
  std::FILE* out = ::popen(exe.c_str(), "r");
  if (out == nullptr) {
    ADD_FAILURE() << "cannot run " << exe;
    return "";
  }
  char buf[256] = {};
  const bool read = std::fgets(buf, sizeof buf, out) != nullptr;
  const int status = ::pclose(out);
  if (status != 0 || !read) {
    ADD_FAILURE() << exe << " exited with status " << status << (read ? "" : ", printing nothing");
    return "";
  }
  return buf;
}

}  // namespace eacgm::probe::test
