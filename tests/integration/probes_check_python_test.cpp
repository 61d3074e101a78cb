// Integration tests (root): `eacgm probes --check` lists the Python interpreters
// installed here (pyenv's versions, a virtualenv in $HOME, the python3 on PATH through
// pyenv's shim, the system's) with their versions and modes, and resolves the python
// catalog in interpreter files that no process maps now.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "probe/usdt_notes.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

namespace fs = std::filesystem;

const std::string kPyenv = "/root/.pyenv/versions";

// Sets environment variables for the test's children, and puts them back.
class ScopedEnv {
 public:
  void set(const char* name, const std::string& value) {
    const char* old = std::getenv(name);
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first, it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first);
      }
    }
  }

 private:
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

std::string escape(const std::string& s) {
  return std::regex_replace(s, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
}

TEST(ProbesCheckPython, ListsEveryPyenvInterpreterWithVersionAndModes) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (reads every process's maps)";
  if (!fs::is_directory(kPyenv)) GTEST_SKIP() << "pyenv is not installed";
  const std::string dir = temp_dir();
  // A virtualenv in $HOME made from pyenv's 3.12, and PATH's python3 as pyenv's shim.
  const std::string py312 = kPyenv + "/3.12.1/bin/python3.12";
  const bool have312 = fs::exists(py312);
  if (have312) {
    fs::create_directories(dir + "/.venv/bin");
    fs::create_symlink(py312, dir + "/.venv/bin/python3");
    std::ofstream(dir + "/.venv/pyvenv.cfg") << "home = " << kPyenv << "/3.12.1/bin\n";
  }
  ScopedEnv env;
  env.set("HOME", dir);
  env.set("PYENV_VERSION", "3.12.1");
  env.set("PATH", "/root/.pyenv/shims:/usr/bin:/bin");
  Subprocess check({bin("eacgm"), "probes", "--check"}, dir);
  ASSERT_EQ(check.wait(), 0) << check.err();
  const std::string out = check.out();
  ASSERT_NE(out.find("python interpreters: "), std::string::npos) << out;

  int listed = 0;
  for (const auto& v : fs::directory_iterator(kPyenv)) {
    const std::string release = v.path().filename().string();
    std::smatch m;
    if (!std::regex_match(release, m, std::regex(R"((\d)\.(\d+)\.\d+)"))) continue;
    const int major = std::stoi(m[1]);
    const int minor = std::stoi(m[2]);
    const std::string version = std::to_string(major) + "." + std::to_string(minor);
    const std::string exe = v.path().string() + "/bin/python" + version;
    if (!fs::exists(exe)) continue;
    ++listed;
    const bool traced = major == 3 && minor >= 8 && minor <= 13;
    // The interpreter, its version, and where it was found (once, by real path).
    const std::regex head("\n  " + std::string(traced ? "ok " : "-- ") + escape(exe) + ": CPython " +
                          escape(version) + " \\(version from file name\\); pyenv " + escape(release) +
                          "[,\n]");
    EXPECT_TRUE(std::regex_search(out, head)) << exe << "\n" << out;
    const std::string lib =
        v.path().string() + "/lib/libpython" + version + (minor <= 7 && major == 3 ? "m" : "") + ".so.1.0";
    if (!fs::exists(lib)) continue;  // a static build is its own code file
    EXPECT_NE(out.find("      code in " + lib + "\n"), std::string::npos) << lib << "\n" << out;
    if (!traced) continue;
    EXPECT_NE(out.find("ok " + lib + ": 1 symbol(s) [mode: frame reading, CPython " + version +
                       " layout, version from file name]"),
              std::string::npos)
        << out;
    const std::string calls =
        "      calls: frame reading (CPython " + version + " layout): exact calls with durations";
    EXPECT_NE(
        out.find(calls + (minor >= 11 ? "; 3.11+: Python-to-Python calls are inlined, exact mode sees only "
                                        "calls entering the eval loop\n"
                                      : "\n")),
        std::string::npos)
        << out;
  }
  EXPECT_GT(listed, 0);
  if (fs::exists(kPyenv + "/3.7.16/bin/python3.7")) {
    EXPECT_NE(
        out.find("      calls: not traced: no USDT probes, and frame reading has no layout for CPython 3.7"),
        std::string::npos)
        << out;
  }
  if (have312) {
    EXPECT_NE(out.find(py312 + ": CPython 3.12 (version from file name); pyenv 3.12.1, venv " + dir +
                       "/.venv, python3 on PATH (pyenv shim: 3.12.1)\n"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("      stacks: sampled (CPython 3.12 layout)\n"), std::string::npos) << out;
  }
  // The system's interpreter: Debian's python3.11 carries USDT probes.
  const std::string debian = "/usr/bin/python3.11";
  auto notes = probe::read_usdt_probes(debian);
  if (notes && probe::has_usdt_probe(*notes, "python:function__entry")) {
    EXPECT_NE(out.find("ok " + debian + ": CPython 3.11 (version from file name); system\n"),
              std::string::npos)
        << out;
    EXPECT_NE(
        out.find("      calls: USDT (python:function__entry/return): every call, exact, with durations"),
        std::string::npos)
        << out;
  }
}

}  // namespace
}  // namespace eacgm::test
