// Built-in catalogs: every spec passes the same rules as a user's spec, names are
// unique, and the CUDA catalogs carry the flags nesting and naming rely on.
#include "probe/catalog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/spec_validate.h"

namespace eacgm::probe {
namespace {

const Catalog* find_catalog(const std::string& name) {
  for (const auto& c : builtin_catalogs()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const ProbeSpec* find_spec(const Catalog& c, const std::string& name) {
  for (const auto& s : c.specs) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

TEST(Catalog, EverySpecOfEveryCatalogIsValid) {
  std::size_t n = 0;
  for (const auto& c : builtin_catalogs()) {
    EXPECT_FALSE(c.specs.empty()) << c.name;
    for (const auto& s : c.specs) {
      auto st = validate_spec(s);
      EXPECT_TRUE(st.ok()) << c.name << ": " << (st.ok() ? "" : st.error());
      ++n;
    }
  }
  EXPECT_GT(n, 100u);
}

TEST(Catalog, SpecNamesAreUniqueAcrossCatalogs) {
  std::set<std::string> names;
  for (const auto& c : builtin_catalogs()) {
    for (const auto& s : c.specs) EXPECT_TRUE(names.insert(s.name).second) << s.name;
  }
}

TEST(Catalog, DefaultsNameExistingCatalogsAndIncludeBothCudaLayers) {
  auto names = default_catalog_names();
  for (const auto& n : names) EXPECT_NE(find_catalog(n), nullptr) << n;
  EXPECT_NE(std::find(names.begin(), names.end(), "cuda"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "cuda_driver"), names.end());
}

TEST(Catalog, RuntimeCallsAreOuterButNotRegistration) {
  const Catalog* rt = find_catalog("cuda");
  ASSERT_NE(rt, nullptr);
  for (const auto& s : rt->specs) {
    EXPECT_EQ(s.domain, "cuda");
    EXPECT_EQ(s.library, "libcudart.so*");
    if (s.name == "__cudaRegisterFunction") {
      EXPECT_FALSE(s.outer);
      EXPECT_EQ(s.ret, ReturnKind::kNone);
      // host_fun, then the device function's name in two parts (str, then str2), so
      // names up to 190 bytes come whole from the kernel.
      ASSERT_EQ(s.args.size(), 3u);
      EXPECT_TRUE(s.args[1].at_exit) << "the name's page may be absent at entry";
      EXPECT_TRUE(s.args[2].at_exit);
    } else {
      EXPECT_TRUE(s.outer) << s.name << ": its driver calls would be counted twice";
    }
  }
  for (const char* launch : {"cudaLaunchKernel", "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC"}) {
    const ProbeSpec* s = find_spec(*rt, launch);
    ASSERT_NE(s, nullptr) << launch;
    ASSERT_EQ(s->derived.size(), 1u);
    EXPECT_EQ(s->derived[0].op, DerivedArg::Op::kKernelName);
  }
}

TEST(Catalog, DriverCatalogIsNeverOuterAndSplitsLaunchDimensions) {
  const Catalog* drv = find_catalog("cuda_driver");
  ASSERT_NE(drv, nullptr);
  for (const auto& s : drv->specs) {
    EXPECT_EQ(s.domain, "cuda_driver");
    EXPECT_EQ(s.library, "libcuda.so*");
    EXPECT_FALSE(s.outer) << s.name;
  }
  const ProbeSpec* k = find_spec(*drv, "cuLaunchKernel");
  ASSERT_NE(k, nullptr);
  ASSERT_GE(k->args.size(), 3u);
  EXPECT_EQ(k->args[1].kind, ArgKind::kDim3Split);
  EXPECT_EQ(k->args[1].index, 1);
  EXPECT_EQ(k->args[2].kind, ArgKind::kDim3Split);
  EXPECT_EQ(k->args[2].index, 4);  // r8, r9, then stack slot 0
  const ProbeSpec* ex = find_spec(*drv, "cuLaunchKernelEx");
  ASSERT_NE(ex, nullptr);
  std::set<int> offsets;
  for (const auto& a : ex->args) {
    if (a.kind != ArgKind::kRaw) offsets.insert(a.offset);
  }
  EXPECT_EQ(offsets, (std::set<int>{0, 12, 24, 32}));
}

}  // namespace
}  // namespace eacgm::probe
