// Interpreter discovery on a made-up machine: a tree of pyenv versions, conda
// environments, virtualenvs, a pyenv shim and system interpreters, whose executables and
// libpythons are small ELF files compiled here (shared builds name their libpython in
// DT_NEEDED with a $ORIGIN run path, as pyenv's do).
#include "probe/interpreter_scan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "probe/interpreter_modes.h"

namespace eacgm::probe {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

void write(const fs::path& path, const std::string& text, bool executable = false) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
  if (executable)
    fs::permissions(path, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
}

void run(const std::string& cmd) { ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd; }

// What an interpreter's code defines, as far as eacgm looks: the eval loop, the runtime
// and code type the sampler reads, and (3.11+) Py_Version.
std::string interpreter_source(const char* version_hex) {
  std::string s =
      "void _PyEval_EvalFrameDefault(void) {}\n"
      "int _PyRuntime[64];\n"
      "int PyCode_Type[64];\n";
  if (version_hex != nullptr) s += std::string("const unsigned long Py_Version = ") + version_hex + ";\n";
  return s;
}

class InterpreterScan : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // One tree per process: ctest runs each test in a process of its own, in parallel
    // with -j, and a shared tree would be removed under another test's feet.
    root_ = fs::path(::testing::TempDir()) / ("eacgm_interpreter_scan." + std::to_string(::getpid()));
    fs::remove_all(root_);
    const fs::path src = root_ / "src";
    write(src / "lib.c", interpreter_source("0x030c01f0"));
    write(src / "main.c", "int main(void) { return 0; }\n");
    write(src / "static.c", interpreter_source(nullptr) + "int main(void) { return 0; }\n");
    write(src / "static311.c", interpreter_source("0x030b04f0") + "int main(void) { return 0; }\n");
    // A shared build: bin/python3.12 loads lib/libpython3.12.so.1.0 through $ORIGIN/../lib.
    const fs::path v312 = root_ / "pyenv/versions/3.12.1";
    fs::create_directories(v312 / "lib");
    fs::create_directories(v312 / "bin");
    run("cc -shared -fPIC -o '" + (v312 / "lib/libpython3.12.so.1.0").string() +
        "' -Wl,-soname,libpython3.12.so.1.0 '" + (src / "lib.c").string() + "'");
    run("cc -o '" + (v312 / "bin/python3.12").string() + "' '" + (src / "main.c").string() +
        "' -Wl,--no-as-needed '" + (v312 / "lib/libpython3.12.so.1.0").string() +
        "' -Wl,-rpath,'$ORIGIN/../lib'");
    // A shared build whose libpython is gone.
    fs::create_directories(root_ / "pyenv/versions/3.8.18/bin");
    run("cc -shared -fPIC -o '" + (src / "libpython3.8.so.1.0").string() +
        "' -Wl,-soname,libpython3.8.so.1.0 '" + (src / "lib.c").string() + "'");
    run("cc -o '" + (root_ / "pyenv/versions/3.8.18/bin/python3.8").string() + "' '" +
        (src / "main.c").string() + "' -Wl,--no-as-needed '" + (src / "libpython3.8.so.1.0").string() + "'");
    run("cc -o '" + (src / "static").string() + "' '" + (src / "static.c").string() + "'");
    run("cc -o '" + (src / "static311").string() + "' '" + (src / "static311.c").string() + "'");
  }

  static void TearDownTestSuite() { fs::remove_all(root_); }

  void SetUp() override {
    const fs::path v312 = root_ / "pyenv/versions/3.12.1";
    link(v312 / "bin/python3", "python3.12");
    write(v312 / "bin/python3.12-config", "#!/bin/sh\necho -lpython3.12\n", true);
    copy_static(root_ / "pyenv/versions/3.9.18/bin/python3.9");
    link(root_ / "pyenv/versions/3.9.18/bin/python3", "python3.9");
    copy_static(root_ / "pyenv/versions/2.7.18/bin/python2.7");
    write(root_ / "pyenv/shims/python3",
          "#!/usr/bin/env bash\nset -e\nprogram=\"${0##*/}\"\n\nexport PYENV_ROOT=\"" +
              (root_ / "pyenv").string() + "\"\nexec \"" + (root_ / "pyenv/libexec/pyenv").string() +
              "\" exec \"$program\" \"$@\"\n",
          true);
    write(root_ / "pyenv/version", "3.12.1\n");
    copy_static(root_ / "conda/bin/python3.10");
    link(root_ / "conda/bin/python", "python3.10");
    copy_static(root_ / "conda/envs/ml/bin/python3.11");
    link(root_ / "conda/envs/ml/bin/python3", "python3.11");
    write(root_ / "opt/app/.venv/pyvenv.cfg", "home = " + (v312 / "bin").string() + "\n");
    link(root_ / "opt/app/.venv/bin/python3", (v312 / "bin/python3.12").string());
    link(root_ / "opt/app/.venv/bin/python", "python3");
    // `python -m venv --copies`: a copy named python3, whose version is in Py_Version only.
    copy_static(root_ / "opt/copies/.venv/bin/python3", "static311");
    copy_static(root_ / "usr/bin/python3.11");
    link(root_ / "usr/bin/python3", "python3.11");
    copy_static(root_ / "usr/local/bin/python3.13t");

    where_.pyenv_roots = {(root_ / "pyenv").string()};
    where_.conda_roots = {(root_ / "conda").string(), (root_ / "no-such-conda").string()};
    where_.venv_patterns = {(root_ / "opt/*/.venv").string()};
    where_.system_dirs = {(root_ / "usr/bin").string(), (root_ / "usr/local/bin").string()};
    where_.path = (root_ / "pyenv/shims").string() + ":" + (root_ / "usr/bin").string();
    where_.cwd = (root_ / "work").string();
    fs::create_directories(where_.cwd);
  }

  void TearDown() override {
    for (const char* d :
         {"pyenv/versions/3.9.18", "pyenv/versions/2.7.18", "pyenv/shims", "conda", "opt", "usr", "work"}) {
      fs::remove_all(root_ / d);
    }
    fs::remove(root_ / "pyenv/versions/3.12.1/bin/python3");
    fs::remove(root_ / "pyenv/version");
  }

  static void link(const fs::path& at, const std::string& target) {
    fs::create_directories(at.parent_path());
    fs::remove(at);
    fs::create_symlink(target, at);
  }
  static void copy_static(const fs::path& to, const char* which = "static") {
    fs::create_directories(to.parent_path());
    fs::copy_file(root_ / "src" / which, to, fs::copy_options::overwrite_existing);
  }
  std::string at(const std::string& rel) const { return (root_ / rel).string(); }

  const FoundInterpreter* find(const std::vector<FoundInterpreter>& all, const std::string& rel) const {
    for (const auto& f : all) {
      if (f.path == at(rel)) return &f;
    }
    ADD_FAILURE() << "not found: " << rel;
    return nullptr;
  }

  static fs::path root_;
  InterpreterPlaces where_;
};

fs::path InterpreterScan::root_;

TEST_F(InterpreterScan, FindsEachInterpreterOnceByRealPath) {
  const auto all = scan_interpreters(where_);
  std::vector<std::string> paths;
  for (const auto& f : all) paths.push_back(f.path);
  // pyenv's versions (in version order), conda's base and env, the --copies venv, the system's;
  // no -config script, and symlinks (python3, the venv's python) fold into their targets.
  EXPECT_THAT(
      paths, ElementsAre(at("pyenv/versions/2.7.18/bin/python2.7"), at("pyenv/versions/3.8.18/bin/python3.8"),
                         at("pyenv/versions/3.9.18/bin/python3.9"),
                         at("pyenv/versions/3.12.1/bin/python3.12"), at("conda/bin/python3.10"),
                         at("conda/envs/ml/bin/python3.11"), at("opt/copies/.venv/bin/python3"),
                         at("usr/bin/python3.11"), at("usr/local/bin/python3.13t")));
}

TEST_F(InterpreterScan, SharedBuildsHaveTheirLibpythonAsCodeFile) {
  const auto all = scan_interpreters(where_);
  const FoundInterpreter* py = find(all, "pyenv/versions/3.12.1/bin/python3.12");
  ASSERT_NE(py, nullptr);
  ASSERT_TRUE(py->version);
  EXPECT_EQ(*py->version, (PythonVersion{3, 12}));
  EXPECT_EQ(py->version_from, "file name");
  EXPECT_EQ(py->code_file, at("pyenv/versions/3.12.1/lib/libpython3.12.so.1.0"));
  // Found as a pyenv version, in a virtualenv made from it, and as PATH's python3
  // through pyenv's shim and its global version file.
  EXPECT_THAT(py->found_as, ElementsAre("pyenv 3.12.1", "venv " + at("opt/app/.venv"),
                                        "python3 on PATH (pyenv shim: 3.12.1)"));

  const FoundInterpreter* gone = find(all, "pyenv/versions/3.8.18/bin/python3.8");
  ASSERT_NE(gone, nullptr);
  EXPECT_EQ(gone->code_file, "");
  EXPECT_EQ(gone->problem, "libpython3.8.so.1.0 (which it loads) not found");
}

TEST_F(InterpreterScan, StaticBuildsAreTheirOwnCodeFile) {
  const auto all = scan_interpreters(where_);
  const FoundInterpreter* conda = find(all, "conda/bin/python3.10");
  ASSERT_NE(conda, nullptr);
  EXPECT_EQ(conda->code_file, conda->path);
  EXPECT_THAT(conda->found_as, ElementsAre("conda " + at("conda")));
  const FoundInterpreter* env = find(all, "conda/envs/ml/bin/python3.11");
  ASSERT_NE(env, nullptr);
  EXPECT_THAT(env->found_as, ElementsAre("conda env " + at("conda/envs/ml")));
  // A copy named python3: the version comes from the Py_Version it exports.
  const FoundInterpreter* copy = find(all, "opt/copies/.venv/bin/python3");
  ASSERT_NE(copy, nullptr);
  ASSERT_TRUE(copy->version);
  EXPECT_EQ(*copy->version, (PythonVersion{3, 11}));
  EXPECT_EQ(copy->version_from, "Py_Version");
  EXPECT_THAT(copy->found_as, ElementsAre("venv " + at("opt/copies/.venv")));
  const FoundInterpreter* ft = find(all, "usr/local/bin/python3.13t");
  ASSERT_NE(ft, nullptr);
  EXPECT_EQ(ft->abi_flags, "t");
  const FoundInterpreter* old = find(all, "pyenv/versions/2.7.18/bin/python2.7");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(*old->version, (PythonVersion{2, 7}));
}

TEST_F(InterpreterScan, ShimFollowsPyenvVersionSelection) {
  // $PYENV_VERSION first, a version prefix picking the newest installed match.
  where_.pyenv_version = "3.9";
  auto all = scan_interpreters(where_);
  EXPECT_THAT(find(all, "pyenv/versions/3.9.18/bin/python3.9")->found_as,
              ElementsAre("pyenv 3.9.18", "python3 on PATH (pyenv shim: 3.9.18)"));
  // A .python-version file above the working folder.
  where_.pyenv_version.clear();
  write(root_ / ".python-version", "3.9.18\n");
  all = scan_interpreters(where_);
  fs::remove(root_ / ".python-version");
  EXPECT_THAT(find(all, "pyenv/versions/3.9.18/bin/python3.9")->found_as,
              ElementsAre("pyenv 3.9.18", "python3 on PATH (pyenv shim: 3.9.18)"));
  // "system": the next python3 on PATH after the shims.
  where_.pyenv_version = "system";
  all = scan_interpreters(where_);
  EXPECT_THAT(find(all, "usr/bin/python3.11")->found_as,
              ElementsAre("python3 on PATH (pyenv shim: system)", "system"));
}

TEST_F(InterpreterScan, PathPython3WithoutShim) {
  where_.path = at("usr/bin");
  const auto all = scan_interpreters(where_);
  EXPECT_THAT(find(all, "usr/bin/python3.11")->found_as, ElementsAre("python3 on PATH", "system"));
}

TEST_F(InterpreterScan, FactsComeFromTheCodeFile) {
  const auto all = scan_interpreters(where_);
  auto facts = read_interpreter_facts(*find(all, "pyenv/versions/3.12.1/bin/python3.12"));
  ASSERT_TRUE(facts) << facts.error();
  EXPECT_TRUE(facts->catalog_name);
  EXPECT_TRUE(facts->eval_frame);
  EXPECT_TRUE(facts->runtime);
  EXPECT_FALSE(facts->usdt_entry);
  auto gone = read_interpreter_facts(*find(all, "pyenv/versions/3.8.18/bin/python3.8"));
  ASSERT_FALSE(gone);
  EXPECT_THAT(gone.error(), HasSubstr("libpython3.8.so.1.0 (which it loads) not found"));
}

TEST(PythonNameVersion, ReadsVersionAndAbiFlags) {
  auto v = python_name_version("/usr/lib/libpython3.12.so.1.0");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->version, (PythonVersion{3, 12}));
  EXPECT_EQ(v->abi_flags, "");
  EXPECT_EQ(python_name_version("python3.13t")->abi_flags, "t");
  EXPECT_EQ(python_name_version("libpython3.6m.so.1.0")->abi_flags, "m");
  EXPECT_EQ(python_name_version("python2.7")->version, (PythonVersion{2, 7}));
  EXPECT_FALSE(python_name_version("python3"));
  EXPECT_FALSE(python_name_version("python3.12-config"));
  EXPECT_FALSE(python_name_version("libc.so.6"));
}

InterpreterFacts facts(int minor, bool usdt, bool eval_frame = true, std::string flags = "") {
  InterpreterFacts f;
  f.version = PythonVersion{3, minor};
  f.abi_flags = std::move(flags);
  f.catalog_name = true;
  f.usdt_entry = usdt;
  f.eval_frame = eval_frame;
  f.runtime = true;
  return f;
}

TEST(InterpreterModes, UsdtWhereTheNotesAre) {
  const InterpreterModes m = interpreter_modes(facts(11, true));
  EXPECT_EQ(m.calls, CallMode::kUsdt);
  EXPECT_TRUE(m.every_call);
  EXPECT_THAT(m.calls_text, HasSubstr("every call, exact, with durations"));
  EXPECT_TRUE(m.sampled);
  EXPECT_EQ(interpreter_modes(facts(7, true)).calls, CallMode::kUsdt);
  EXPECT_FALSE(interpreter_modes(facts(7, true)).sampled);
}

TEST(InterpreterModes, FrameReadingSeesEveryCallOnlyUpTo310) {
  EXPECT_TRUE(interpreter_modes(facts(8, false)).every_call);
  EXPECT_TRUE(interpreter_modes(facts(9, false)).sampled);
  const InterpreterModes m310 = interpreter_modes(facts(10, false));
  EXPECT_EQ(m310.calls, CallMode::kFrameReading);
  EXPECT_TRUE(m310.every_call);
  const InterpreterModes m312 = interpreter_modes(facts(12, false));
  EXPECT_EQ(m312.calls, CallMode::kFrameReading);
  EXPECT_FALSE(m312.every_call);
  EXPECT_THAT(
      m312.calls_text,
      HasSubstr(
          "3.11+: Python-to-Python calls are inlined, exact mode sees only calls entering the eval loop"));
  EXPECT_EQ(m312.stacks_text, "sampled (CPython 3.12 layout)");
}

TEST(InterpreterModes, SaysWhyAnInterpreterIsNotTraced) {
  const InterpreterModes m37 = interpreter_modes(facts(7, false));
  EXPECT_EQ(m37.calls, CallMode::kNone);
  EXPECT_EQ(m37.calls_text,
            "not traced: no USDT probes, and frame reading has no layout for CPython 3.7 (3.8 to 3.13)");
  EXPECT_EQ(m37.stacks_text, "not sampled: no stack layout for CPython 3.7 (3.8 to 3.13 have one)");
  const InterpreterModes ft = interpreter_modes(facts(13, false, true, "t"));
  EXPECT_EQ(ft.calls, CallMode::kNone);
  EXPECT_THAT(ft.calls_text, HasSubstr("free-threaded"));
  EXPECT_FALSE(ft.sampled);
  InterpreterFacts two = facts(7, false);
  two.version = PythonVersion{2, 7};
  EXPECT_THAT(interpreter_modes(two).calls_text, HasSubstr("CPython 2.7"));
  InterpreterFacts unknown = facts(12, false);
  unknown.version.reset();
  EXPECT_THAT(interpreter_modes(unknown).calls_text, HasSubstr("version is not known"));
  EXPECT_EQ(interpreter_modes(unknown).stacks_text, "not sampled: its version is not known");
}

}  // namespace
}  // namespace eacgm::probe
