// USDT notes of the system Python: offsets are checked against the instruction SDT probes
// are built on (a one-byte nop at the probe site).
#include "probe/usdt_notes.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace eacgm::probe {
namespace {

constexpr const char* kPython = "/usr/bin/python3.11";

std::uint8_t byte_at(const std::string& path, std::uint64_t offset) {
  std::uint8_t b = 0;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::pread(fd, &b, 1, static_cast<off_t>(offset)), 1);
  ::close(fd);
  return b;
}

const UsdtProbe* find_probe(const std::vector<UsdtProbe>& probes, const std::string& name) {
  for (const UsdtProbe& p : probes) {
    if (p.provider == "python" && p.name == name) {
      return &p;
    }
  }
  return nullptr;
}

TEST(UsdtNotes, PythonFunctionProbes) {
  if (!std::filesystem::exists(kPython)) {
    GTEST_SKIP() << kPython << " not installed";
  }
  auto probes = read_usdt_probes(kPython);
  ASSERT_TRUE(probes.ok()) << probes.error();
  for (const char* name : {"function__entry", "function__return"}) {
    SCOPED_TRACE(name);
    const UsdtProbe* p = find_probe(*probes, name);
    ASSERT_NE(p, nullptr);
    EXPECT_NE(p->file_offset, 0U);
    EXPECT_NE(p->address, 0U);
    EXPECT_NE(p->base_address, 0U);
    // STAP_PROBE places its label on a nop; a wrong offset lands on other code.
    EXPECT_EQ(byte_at(kPython, p->file_offset), 0x90);
    // Three operands "size@location": filename, function name, line number.
    EXPECT_THAT(p->arguments, ::testing::MatchesRegex("-?[0-9]+@[^ ]+ -?[0-9]+@[^ ]+ -?[0-9]+@[^ ]+"));
    // CPython guards its probes with semaphores (in .probes), initially zero in the file.
    EXPECT_NE(p->semaphore_address, 0U);
    EXPECT_NE(p->semaphore_offset, 0U);
    EXPECT_EQ(byte_at(kPython, p->semaphore_offset), 0);
  }
  // Every probe site in the file, not only Python's function probes, is a nop.
  for (const UsdtProbe& p : *probes) {
    EXPECT_EQ(byte_at(kPython, p.file_offset), 0x90) << p.provider << ":" << p.name;
  }
}

TEST(UsdtNotes, FileWithoutNotesHasNoProbes) {
  auto probes = read_usdt_probes(EACGM_FX_ELF_LIB);
  ASSERT_TRUE(probes.ok()) << probes.error();
  EXPECT_TRUE(probes->empty());
}

TEST(UsdtNotes, MissingFileIsAnError) {
  auto probes = read_usdt_probes("/nonexistent/python");
  ASSERT_FALSE(probes.ok());
  EXPECT_EQ(probes.error(), "cannot open /nonexistent/python: No such file or directory");
}

// CPython 3.12+ built with dtrace keeps python:gc__start, audit and import probes but no
// function__entry: the frame-reading fallback must not stand aside for the provider alone.
TEST(UsdtNotes, HasProbeMatchesProviderAndName) {
  std::vector<UsdtProbe> probes(2);
  probes[0].provider = "python";
  probes[0].name = "gc__start";
  probes[1].provider = "libc";
  probes[1].name = "function__entry";
  EXPECT_FALSE(has_usdt_probe(probes, "python:function__entry"));
  EXPECT_TRUE(has_usdt_probe(probes, "python:gc__start"));
  EXPECT_TRUE(has_usdt_probe(probes, "libc:function__entry"));
  EXPECT_FALSE(has_usdt_probe(probes, "python"));
  EXPECT_FALSE(has_usdt_probe({}, "python:gc__start"));
}

}  // namespace
}  // namespace eacgm::probe
