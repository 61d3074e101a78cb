// The CPython 3.11 entry gate: where the line probe's semaphore is held, and which files
// need it. Checked against Debian's python3.11 (USDT notes) where it is installed.
#include "probe/python_usdt.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "probe/catalog.h"
#include "probe/elf_symbols.h"

namespace eacgm::probe {
namespace {

using ::testing::HasSubstr;

TEST(PythonUsdt, CatalogGatesTheEntryProbeOnly) {
  for (const auto& c : builtin_catalogs()) {
    for (const auto& s : c.specs) {
      EXPECT_EQ(s.usdt_gate == UsdtGate::kCPythonLineTracing, s.name == kPythonEntrySpec) << s.name;
    }
  }
}

TEST(PythonUsdt, Debian311HoldsTheLineSemaphoreAtPyFinalizeEx) {
  const std::string python = "/usr/bin/python3.11";
  auto notes = read_usdt_probes(python);
  if (!std::filesystem::exists(python) || !notes || !has_usdt_probe(*notes, "python:line")) {
    GTEST_SKIP() << python << " missing or built without USDT probes";
  }
  auto elf = ElfSymbolTable::load(python);
  ASSERT_TRUE(elf) << elf.error();
  auto gate = cpython_entry_gate(python, python, *elf, *notes);
  ASSERT_TRUE(gate) << gate.error();
  ASSERT_TRUE(gate->has_value());
  std::uint64_t line_semaphore = 0;
  for (const auto& n : *notes) {
    if (n.name == "line") line_semaphore = n.semaphore_offset;
  }
  EXPECT_EQ((*gate)->ref_ctr_offset, line_semaphore);
  EXPECT_EQ((*gate)->file_offset, elf->find("Py_FinalizeEx")->file_offset);
  // The same file under another version's name needs nothing (3.10 fires every entry).
  auto as310 = cpython_entry_gate("/opt/python3.10", python, *elf, *notes);
  ASSERT_TRUE(as310);
  EXPECT_FALSE(as310->has_value());
  // A 3.11 without a line probe cannot have its entries fired: said, not guessed.
  auto no_line = cpython_entry_gate(python, python, *elf, {});
  ASSERT_FALSE(no_line);
  EXPECT_THAT(no_line.error(), HasSubstr("without a python:line probe semaphore"));
}

}  // namespace
}  // namespace eacgm::probe
