// The stack sampler's layout table: one entry per frame layout, what it encodes for the
// kernel, and, where CPython's headers are installed (pyenv), the table re-derived from
// those headers by tests/unit/probe/fixtures/python_stack_offsets.c.
#include "probe/python_stack_layouts.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "python_headers.h"

namespace eacgm::probe {
namespace {

namespace fs = std::filesystem;

TEST(PythonStackLayouts, OneForEachFrameLayout) {
  ASSERT_EQ(python_stack_layouts().size(), python_frame_layouts().size());
  for (const auto& f : python_frame_layouts()) EXPECT_NE(python_stack_layout(f.version), nullptr);
  EXPECT_EQ(python_stack_layout({3, 7}), nullptr);
  EXPECT_EQ(python_stack_layout({3, 14}), nullptr);
}

TEST(PythonStackLayouts, EncodesVersionAndInstructionKind) {
  const auto l310 = encode_stack_layout(*python_stack_layout({3, 10}), *python_frame_layout({3, 10}));
  EXPECT_EQ(l310.version, 0x030a);
  EXPECT_EQ(l310.instr_is_index, 1);  // f_lasti
  EXPECT_EQ(l310.tstate_native_id, EACGM_PY_NO_FIELD);
  EXPECT_EQ(l310.frame_code, 32);
  const auto l38 = encode_stack_layout(*python_stack_layout({3, 8}), *python_frame_layout({3, 8}));
  EXPECT_EQ(l38.version, 0x0308);
  EXPECT_EQ(l38.instr_is_index, 1);  // f_lasti, an int (in bytes up to 3.9)
  EXPECT_EQ(l38.frame_instr, 104);
  const auto l313 = encode_stack_layout(*python_stack_layout({3, 13}), *python_frame_layout({3, 13}));
  EXPECT_EQ(l313.version, 0x030d);
  EXPECT_EQ(l313.instr_is_index, 0);  // instr_ptr
  EXPECT_EQ(l313.cframe_frame, EACGM_PY_NO_FIELD);
  EXPECT_EQ(l313.frame_code, 0);
}

TEST(PythonStackLayouts, TableMatchesInstalledHeaders) {
  const std::string source =
      std::string(EACGM_SOURCE_DIR) + "/tests/unit/probe/fixtures/python_stack_offsets.c";
  const fs::path tmp = fs::temp_directory_path() / ("eacgm-pystack-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  std::size_t checked = 0;
  for (const auto& l : python_stack_layouts()) {
    const std::string minor = std::to_string(l.version.minor);
    const fs::path include = test::pyenv_include(l.version.minor, "pycore_pystate.h");
    if (include.empty()) continue;
    const std::string printed = test::fixture_output(source, include, tmp / ("off" + minor));
    std::ostringstream want;
    want << "3." << minor << " " << l.interp_head << " " << l.interp_next << " " << l.threads_head << " "
         << l.tstate_next << " " << l.tstate_thread_id << " " << l.tstate_native_id << " " << l.tstate_frame
         << " " << l.cframe_frame << " " << l.frame_previous << " " << l.frame_owner << " " << l.frame_instr
         << " " << l.code_units << " " << l.code_code << " " << l.code_linetable << " " << l.bytes_data << " "
         << l.code_id_words << "\n";
    EXPECT_EQ(printed, want.str()) << include;
    ++checked;
  }
  fs::remove_all(tmp);
  if (checked == 0) GTEST_SKIP() << "no CPython 3.8-3.13 headers under /root/.pyenv/versions";
}

}  // namespace
}  // namespace eacgm::probe
