// The NCCL catalog: valid specs, the System V locations that are easy to get wrong, and
// (where libnccl is installed) one probe per function address.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "core/spec_validate.h"
#include "probe/catalog.h"
#include "probe/elf_symbols.h"

namespace eacgm::probe {
namespace {

const ProbeSpec& spec_named(const Catalog& c, const std::string& name) {
  for (const auto& s : c.specs) {
    if (s.name == name) return s;
  }
  static const ProbeSpec none;
  ADD_FAILURE() << "no spec " << name;
  return none;
}

const ArgSpec& arg_named(const ProbeSpec& s, const std::string& name) {
  for (const auto& a : s.args) {
    if (a.name == name) return a;
  }
  static const ArgSpec none;
  ADD_FAILURE() << s.name << " has no arg " << name;
  return none;
}

TEST(CatalogNccl, EverySpecIsValidAndInTheDefaultSet) {
  Catalog c = nccl_catalog();
  EXPECT_EQ(c.name, "nccl");
  for (const auto& s : c.specs) {
    auto st = validate_spec(s);
    EXPECT_TRUE(st.ok()) << st.error();
    EXPECT_EQ(s.domain, "nccl");
    EXPECT_EQ(s.library, "libnccl.so*");
    EXPECT_NE(s.symbol.rfind("pnccl", 0), 0u) << "profiling aliases share the address: " << s.symbol;
  }
  auto defaults = default_catalog_names();
  EXPECT_NE(std::find(defaults.begin(), defaults.end(), "nccl"), defaults.end());
}

TEST(CatalogNccl, UniqueIdByValueMovesRankToTheThirdRegister) {
  // ncclCommInitRank(comm*, int nranks, ncclUniqueId id /* 128 B, in memory */, int rank)
  Catalog c = nccl_catalog();
  for (const char* fn : {"ncclCommInitRank", "ncclCommInitRankConfig"}) {
    const ProbeSpec& s = spec_named(c, fn);
    const ArgSpec& rank = arg_named(s, "rank");
    EXPECT_EQ(rank.source, ArgSource::kRegister) << fn;
    EXPECT_EQ(rank.index, 2) << fn;
    EXPECT_EQ(arg_named(s, "unique_id_0").source, ArgSource::kStack);
    EXPECT_EQ(arg_named(s, "unique_id_0").index, 0);
    EXPECT_EQ(arg_named(s, "unique_id_1").index, 1);
    EXPECT_TRUE(arg_named(s, "comm").at_exit);
  }
  EXPECT_EQ(arg_named(spec_named(c, "ncclCommInitRankConfig"), "config").index, 3);
}

TEST(CatalogNccl, SeventhAndEighthArgumentsAreOnTheStack) {
  Catalog c = nccl_catalog();
  const ProbeSpec& reduce = spec_named(c, "ncclReduce");
  EXPECT_EQ(arg_named(reduce, "comm").source, ArgSource::kStack);
  EXPECT_EQ(arg_named(reduce, "comm").index, 0);
  EXPECT_EQ(arg_named(reduce, "stream").index, 1);
  EXPECT_EQ(arg_named(spec_named(c, "ncclAllReduce"), "stream").source, ArgSource::kStack);
  EXPECT_EQ(arg_named(spec_named(c, "ncclAllGather"), "stream").source, ArgSource::kRegister);
}

TEST(CatalogNccl, BytesComeFromTheSendSideOfAllGather) {
  Catalog c = nccl_catalog();
  const ProbeSpec& s = spec_named(c, "ncclAllGather");
  ASSERT_FALSE(s.derived.empty());
  EXPECT_EQ(s.derived[0].name, "bytes");
  EXPECT_EQ(s.derived[0].op, DerivedArg::Op::kTimesNcclDtype);
  EXPECT_EQ(s.derived[0].from, "sendcount");
  EXPECT_EQ(s.derived[0].with, "datatype");
}

// The installed libnccl: every spec resolves, each to its own address (two probes on
// one address would report each call twice).
TEST(CatalogNccl, ResolvesOnePerAddressInTheInstalledLibrary) {
  const char* candidates[] = {"/usr/local/cuda/lib/libnccl.so.2", "/usr/local/cuda-13.0/lib/libnccl.so.2",
                              "/usr/lib/x86_64-linux-gnu/libnccl.so.2"};
  std::string path;
  for (const char* p : candidates) {
    if (std::filesystem::exists(p)) {
      path = p;
      break;
    }
  }
  if (path.empty()) GTEST_SKIP() << "libnccl.so.2 not installed";
  auto elf = ElfSymbolTable::load(path);
  ASSERT_TRUE(elf.ok()) << elf.error();
  std::map<std::uint64_t, std::string> by_offset;
  for (const auto& s : nccl_catalog().specs) {
    const ElfSymbol* sym = elf->find(s.symbol);
    ASSERT_NE(sym, nullptr) << s.symbol << " not exported by " << path;
    EXPECT_TRUE(sym->is_function) << s.symbol;
    auto [it, inserted] = by_offset.emplace(sym->file_offset, s.symbol);
    EXPECT_TRUE(inserted) << s.symbol << " shares its address with " << it->second;
  }
}

}  // namespace
}  // namespace eacgm::probe
