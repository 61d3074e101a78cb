// Where eacgm keeps the files it writes of its own accord (top's captures): the XDG state
// folder, else the home's, made when missing; the temporary folder where neither can be.
#include "cli/environment.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace eacgm::cli {
namespace {

std::string temp_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "eacgm-state-XXXXXX").string();
  return ::mkdtemp(pattern.data());
}

TEST(StateDirectory, XdgStateHomeThenHomeThenTemporary) {
  const std::string root = temp_dir();
  const std::string xdg = root + "/xdg";
  const std::string home = root + "/home";
  EXPECT_EQ(state_directory(xdg.c_str(), home.c_str(), "/tmp"), xdg + "/eacgm");
  struct stat st {};
  ASSERT_EQ(::stat((xdg + "/eacgm").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << "made private";
  EXPECT_EQ(state_directory(nullptr, home.c_str(), "/tmp"), home + "/.local/state/eacgm");
  EXPECT_EQ(state_directory("relative/xdg", home.c_str(), "/tmp"), home + "/.local/state/eacgm")
      << "a relative XDG path is ignored";
  // A file where the folder would go: nothing can be made there.
  const std::string blocked = root + "/blocked";
  FILE* f = std::fopen(blocked.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  EXPECT_EQ(state_directory(blocked.c_str(), blocked.c_str(), root.c_str()), root);
  EXPECT_EQ(state_directory(nullptr, nullptr, nullptr), "/tmp");
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace eacgm::cli
