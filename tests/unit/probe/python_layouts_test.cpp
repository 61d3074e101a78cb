// CPython frame layouts: the interpreter version from file names (and Py_Version), the
// table's values, the pointer chains built from them, and, where CPython's headers are
// installed (pyenv), the table re-derived from those headers.
#include "probe/python_layouts.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/spec_validate.h"
#include "probe/bpf_tracer.h"
#include "probe/catalog.h"
#include "probe/elf_symbols.h"
#include "python_headers.h"

namespace eacgm::probe {
namespace {

namespace fs = std::filesystem;

std::string version_of(std::string_view name) {
  auto v = python_version_from_name(name);
  return v ? std::to_string(v->major) + "." + std::to_string(v->minor) : "none";
}

TEST(PythonLayouts, VersionFromFileName) {
  EXPECT_EQ(version_of("python3.12"), "3.12");
  EXPECT_EQ(version_of("/usr/bin/python3.10"), "3.10");
  EXPECT_EQ(version_of("/root/.pyenv/versions/3.13.0/lib/libpython3.13.so.1.0"), "3.13");
  EXPECT_EQ(version_of("libpython3.11.so"), "3.11");
  EXPECT_EQ(version_of("python3.9"), "3.9");
  // The directory does not count, only the file name.
  EXPECT_EQ(version_of("/opt/python3.12/bin/python3"), "none");
  EXPECT_EQ(version_of("python3"), "none");
  EXPECT_EQ(version_of("libpython3.so"), "none");  // the stable-ABI forwarder
  EXPECT_EQ(version_of("python"), "none");
  // ABI flags: free-threaded and debug builds lay their objects out differently.
  EXPECT_EQ(version_of("python3.13t"), "none");
  EXPECT_EQ(version_of("libpython3.13t.so.1.0"), "none");
  EXPECT_EQ(version_of("python3.12d"), "none");
  EXPECT_EQ(version_of("python3.12-config"), "none");
  EXPECT_EQ(version_of("python2.7"), "none");
  // 3.7 and older mark default builds with "m" (pymalloc): no other layout.
  EXPECT_EQ(version_of("libpython3.7m.so.1.0"), "3.7");
  EXPECT_EQ(version_of("python3.6m"), "3.6");
  EXPECT_EQ(version_of("python3.6md"), "none");
}

TEST(PythonLayouts, TableCoversEightToThirteen) {
  ASSERT_EQ(python_frame_layouts().size(), 6u);
  for (int minor : {8, 9, 10, 11, 12, 13}) {
    const PythonFrameLayout* l = python_frame_layout({3, minor});
    ASSERT_NE(l, nullptr) << minor;
    EXPECT_EQ(l->version, (PythonVersion{3, minor}));
  }
  EXPECT_EQ(python_frame_layout({3, 7}), nullptr);
  EXPECT_EQ(python_frame_layout({3, 14}), nullptr);
  EXPECT_EQ(python_frame_layout({2, 7}), nullptr);
}

// The numbers themselves (from the headers, see the re-derivation test below).
TEST(PythonLayouts, TableValues) {
  struct Row {
    int minor;
    std::uint16_t frame_code, code_name, code_filename, code_firstlineno, ascii;
    const char* name_field;
  };
  const Row rows[] = {{8, 32, 112, 104, 40, 48, "co_name"},     {9, 32, 112, 104, 40, 48, "co_name"},
                      {10, 32, 112, 104, 40, 48, "co_name"},    {11, 32, 128, 112, 72, 48, "co_qualname"},
                      {12, 0, 128, 112, 68, 40, "co_qualname"}, {13, 0, 128, 112, 68, 40, "co_qualname"}};
  for (const Row& r : rows) {
    const PythonFrameLayout* l = python_frame_layout({3, r.minor});
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->frame_code, r.frame_code) << r.minor;
    EXPECT_EQ(l->code_name, r.code_name) << r.minor;
    EXPECT_EQ(l->code_filename, r.code_filename) << r.minor;
    EXPECT_EQ(l->code_firstlineno, r.code_firstlineno) << r.minor;
    EXPECT_EQ(l->str_ascii_data, r.ascii) << r.minor;
    EXPECT_STREQ(l->name_field, r.name_field);
  }
  EXPECT_STREQ(python_frame_layout({3, 13})->code_field, "f_executable");
  EXPECT_STREQ(python_frame_layout({3, 10})->frame_type, "PyFrameObject");
  // 3.8's _PyEval_EvalFrameDefault(f, throwflag) had no thread-state argument.
  EXPECT_EQ(python_frame_layout({3, 8})->frame_register, 0);
  for (int minor : {9, 10, 11, 12, 13})
    EXPECT_EQ(python_frame_layout({3, minor})->frame_register, 1) << minor;
  EXPECT_EQ(python_frame_args(python_frame_layout({3, 8}))[kFrameCode].index, 0);
}

// The chain: frame (rsi) -> code object -> name/file strs and the first line.
TEST(PythonLayouts, FrameArgsFollowTheLayout) {
  const PythonFrameLayout* l = python_frame_layout({3, 11});
  ASSERT_NE(l, nullptr);
  auto args = python_frame_args(l);
  ASSERT_EQ(args.size(), static_cast<std::size_t>(kFrameArgCount));
  EXPECT_EQ(args[kFrameSp].source, ArgSource::kPtReg);
  EXPECT_EQ(args[kFrameSp].kind, ArgKind::kRaw);
  EXPECT_EQ(args[kFrameCode].source, ArgSource::kRegister);
  EXPECT_EQ(args[kFrameCode].index, 1);  // _PyEval_EvalFrameDefault's second argument
  EXPECT_EQ(args[kFrameCode].kind, ArgKind::kDerefU64);
  EXPECT_EQ(args[kFrameCode].offset, 32);
  EXPECT_EQ(args[kFrameNameObj].source, ArgSource::kArg);
  EXPECT_EQ(args[kFrameNameObj].index, kFrameCode);
  EXPECT_EQ(args[kFrameNameObj].offset, 128);
  EXPECT_EQ(args[kFrameFunction].source, ArgSource::kArg);
  EXPECT_EQ(args[kFrameFunction].index, kFrameNameObj);
  EXPECT_EQ(args[kFrameFunction].kind, ArgKind::kString);
  EXPECT_EQ(args[kFrameFunction].offset, 48);
  EXPECT_EQ(args[kFrameFileObj].index, kFrameCode);
  EXPECT_EQ(args[kFrameFileObj].offset, 112);
  EXPECT_EQ(args[kFrameFile].index, kFrameFileObj);
  EXPECT_EQ(args[kFrameFile].kind, ArgKind::kString);
  EXPECT_EQ(args[kFrameFile].offset, 48);
  EXPECT_EQ(args[kFrameLine].index, kFrameCode);
  EXPECT_EQ(args[kFrameLine].kind, ArgKind::kDerefU32);
  EXPECT_EQ(args[kFrameLine].offset, 72);
  // Without a layout: the same chain, offsets left for the file to fill in.
  auto bare = python_frame_args(nullptr);
  ASSERT_EQ(bare.size(), args.size());
  for (std::size_t i = 0; i < bare.size(); ++i) {
    EXPECT_EQ(bare[i].name, args[i].name);
    EXPECT_EQ(bare[i].source, args[i].source);
    EXPECT_EQ(bare[i].offset, 0);
  }
}

// The catalog's spec, laid out for each version, passes the rules user specs pass.
TEST(PythonLayouts, LaidOutFrameSpecsAreValid) {
  const ProbeSpec* frame = nullptr;
  for (const auto& c : builtin_catalogs()) {
    for (const auto& s : c.specs) {
      if (s.name == kPythonFrameSpec) frame = &s;
    }
  }
  ASSERT_NE(frame, nullptr);
  EXPECT_EQ(frame->symbol, "_PyEval_EvalFrameDefault");
  EXPECT_EQ(frame->layout, ArgLayout::kCPythonFrame);
  EXPECT_TRUE(frame->split_return);
  EXPECT_EQ(frame->unless_usdt, "python:function__entry");
  for (const auto& l : python_frame_layouts()) {
    ProbeSpec s = *frame;
    s.args = python_frame_args(&l);
    auto st = validate_spec(s);
    EXPECT_TRUE(st.ok()) << l.version.minor << ": " << (st.ok() ? "" : st.error());
  }
}

// What the kernel gets: a split probe (no in-kernel pairing) whose chain args name the
// arg they read through, and whose second string goes to the record's str2.
TEST(PythonLayouts, EncodedFrameProbe) {
  ProbeSpec s;
  for (const auto& c : builtin_catalogs()) {
    for (const auto& spec : c.specs) {
      if (spec.name == kPythonFrameSpec) s = spec;
    }
  }
  s.args = python_frame_args(python_frame_layout({3, 12}));
  const eacgm_probe p = encode_probe(s);
  // Two strings: records carry both string areas.
  EXPECT_EQ(p.flags, static_cast<std::uint32_t>(EACGM_PROBE_ENABLED | EACGM_PROBE_SPLIT | EACGM_PROBE_STR |
                                                EACGM_PROBE_STR2));
  ASSERT_EQ(p.nargs, static_cast<std::uint32_t>(kFrameArgCount));
  EXPECT_EQ(p.args[kFrameSp].source, EACGM_SRC_PTREG);
  EXPECT_EQ(p.args[kFrameSp].index, EACGM_REG_RSP);
  EXPECT_EQ(p.args[kFrameCode].source, EACGM_SRC_REG);
  EXPECT_EQ(p.args[kFrameCode].index, 1);
  EXPECT_EQ(p.args[kFrameCode].kind, EACGM_KIND_DEREF_U64);
  EXPECT_EQ(p.args[kFrameCode].deref_offset, 0);
  EXPECT_EQ(p.args[kFrameNameObj].source, EACGM_SRC_ARG);
  EXPECT_EQ(p.args[kFrameNameObj].index, kFrameCode);
  EXPECT_EQ(p.args[kFrameNameObj].deref_offset, 128);
  EXPECT_EQ(p.args[kFrameFunction].kind, EACGM_KIND_STRING);
  EXPECT_EQ(p.args[kFrameFunction].flags, 0);
  EXPECT_EQ(p.args[kFrameFunction].deref_offset, 40);
  EXPECT_EQ(p.args[kFrameFile].flags, EACGM_ARG_STR2);
  EXPECT_EQ(p.args[kFrameLine].kind, EACGM_KIND_DEREF_U32);
  EXPECT_EQ(p.args[kFrameLine].deref_offset, 68);
  // An ordinary entry+exit probe keeps in-kernel pairing.
  s.split_return = false;
  EXPECT_EQ(encode_probe(s).flags, static_cast<std::uint32_t>(EACGM_PROBE_ENABLED | EACGM_PROBE_EXIT |
                                                              EACGM_PROBE_STR | EACGM_PROBE_STR2));
}

std::string interpreter_version(const std::string& path, const std::string& open_path) {
  auto elf = ElfSymbolTable::load(open_path);
  if (!elf) return "load failed: " + elf.error();
  auto interp = python_interpreter_layout(path, open_path, *elf);
  if (!interp) return interp.error();
  return std::to_string(interp->layout->version.minor) + " from " + interp->version_from;
}

TEST(PythonLayouts, InterpreterFileVersionFromNameThenPyVersion) {
  const std::string debian = "/usr/bin/python3.11";
  if (!fs::exists(debian)) GTEST_SKIP() << debian << " is not installed";
  EXPECT_EQ(interpreter_version(debian, debian), "11 from file name");
  // A name without the version (a hard link named python3): Py_Version, 3.11+.
  EXPECT_EQ(interpreter_version("/usr/bin/python3", debian), "11 from Py_Version");
  // The name wins: what the maps show is what the loader opened.
  EXPECT_EQ(interpreter_version("/x/python3.7", debian),
            "/x/python3.7: CPython 3.7 has no known frame layout (3.8 to 3.13 do)");
}

TEST(PythonLayouts, FileWithoutAnyVersionIsRefused) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  EXPECT_EQ(interpreter_version("/x/python3", self),
            "/x/python3: cannot tell its CPython version (no python3.N in the file name, no "
            "Py_Version; free-threaded and debug builds are not supported)");
  EXPECT_NE(interpreter_version("/x/python3.13t", self).find("cannot tell"), std::string::npos);
}

TEST(PythonLayouts, PyenvInterpretersByPyVersion) {
  std::size_t seen = 0;
  for (const char* v : {"3.8.18", "3.9.18", "3.10.13", "3.11.7", "3.12.1", "3.13.0"}) {
    const std::string minor = std::string(v).substr(2, std::string(v).find('.', 2) - 2);
    const std::string lib =
        std::string("/root/.pyenv/versions/") + v + "/lib/libpython3." + minor + ".so.1.0";
    if (!fs::exists(lib)) continue;
    ++seen;
    EXPECT_EQ(interpreter_version(lib, lib), minor + " from file name");
    if (std::stoi(minor) >= 11) {  // Py_Version is 3.11+
      EXPECT_EQ(interpreter_version("/x/libpython3.so", lib), minor + " from Py_Version");
    }
  }
  if (seen == 0) GTEST_SKIP() << "no pyenv CPython 3.8-3.13 installed";
}

// Compiles fixtures/python_offsets.c against each installed version's headers and
// compares its offsetof/sizeof output with the table.
TEST(PythonLayouts, TableMatchesInstalledHeaders) {
  const std::string source = std::string(EACGM_SOURCE_DIR) + "/tests/unit/probe/fixtures/python_offsets.c";
  const fs::path tmp = fs::temp_directory_path() / ("eacgm-pyoff-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  std::size_t checked = 0;
  for (const auto& l : python_frame_layouts()) {
    const std::string minor = std::to_string(l.version.minor);
    const fs::path include = test::pyenv_include(l.version.minor, "pycore_pystate.h");
    if (include.empty()) continue;
    const std::string printed = test::fixture_output(source, include, tmp / ("off" + minor));
    std::ostringstream want;
    want << "3." << minor << " " << l.frame_code << " " << l.code_name << " " << l.code_filename << " "
         << l.code_firstlineno << " " << l.str_ascii_data << "\n";
    EXPECT_EQ(printed, want.str()) << include;
    ++checked;
  }
  fs::remove_all(tmp);
  if (checked == 0) GTEST_SKIP() << "no CPython 3.8-3.13 headers under /root/.pyenv/versions";
}

}  // namespace
}  // namespace eacgm::probe
