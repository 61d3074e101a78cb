// Memory sizes and the limit variables: units, HAMi-core's spellings, "0" as no limit,
// precedence, and refusal of anything else.
#include "govern/hookcore/memory_limits.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace eacgm::govern {
namespace {

std::uint64_t size_of(const char* text) {
  std::uint64_t v = 0;
  EXPECT_TRUE(parse_memory_size(text, &v)) << text;
  return v;
}

TEST(MemorySize, Units) {
  EXPECT_EQ(size_of("1073741824"), 1ull << 30);
  EXPECT_EQ(size_of("1GiB"), 1ull << 30);
  EXPECT_EQ(size_of("1g"), 1ull << 30);
  EXPECT_EQ(size_of("1024m"), 1ull << 30);
  EXPECT_EQ(size_of("1024M"), 1ull << 30);
  EXPECT_EQ(size_of("64k"), 64ull << 10);
  EXPECT_EQ(size_of("1GB"), 1000000000ull);
  EXPECT_EQ(size_of("1.5GiB"), 3ull << 29);
  EXPECT_EQ(size_of(" 512 MiB "), 512ull << 20);
  EXPECT_EQ(size_of("0"), 0u);
  EXPECT_EQ(size_of("2t"), 2ull << 40);
}

TEST(MemorySize, Rejects) {
  std::uint64_t v = 7;
  for (const char* bad :
       {"", "g", "-1g", "1x", "1 parsec", "1..5g", "99999999999999999999", "20000000000t", "1e9", "0x10"}) {
    EXPECT_FALSE(parse_memory_size(bad, &v)) << bad;
  }
  EXPECT_EQ(v, 7u);
}

std::map<std::string, std::string>* g_env = nullptr;
const char* lookup(const char* name, void*) {
  auto it = g_env->find(name);
  return it == g_env->end() ? nullptr : it->second.c_str();
}

MemoryLimits limits_from(std::map<std::string, std::string> env, std::string* warnings = nullptr) {
  g_env = &env;
  MemoryLimits l = read_memory_limits(lookup, nullptr, warnings);
  g_env = nullptr;
  return l;
}

TEST(MemoryLimitsEnv, ZeroIsNoLimit) {
  EXPECT_EQ(limits_from({{"EACGM_MEMORY_LIMIT", "0"}}).per_device[0], kNoLimit);
  EXPECT_EQ(limits_from({{"CUDA_DEVICE_MEMORY_LIMIT", "0"}}).per_device[3], kNoLimit);
  EXPECT_EQ(limits_from({}).per_device[0], kNoLimit);
}

TEST(MemoryLimitsEnv, Precedence) {
  MemoryLimits l = limits_from({{"CUDA_DEVICE_MEMORY_LIMIT", "1g"},
                                {"CUDA_DEVICE_MEMORY_LIMIT_2", "3g"},
                                {"EACGM_MEMORY_LIMIT_1", "2GiB"}});
  EXPECT_EQ(l.per_device[0], 1ull << 30);
  EXPECT_EQ(l.per_device[1], 2ull << 30);
  EXPECT_EQ(l.per_device[2], 3ull << 30);
  MemoryLimits all = limits_from({{"CUDA_DEVICE_MEMORY_LIMIT_2", "3g"}, {"EACGM_MEMORY_LIMIT", "5GiB"}});
  EXPECT_EQ(all.per_device[2], 5ull << 30) << "EACGM_MEMORY_LIMIT beats HAMi-core's per-device variable";
  EXPECT_EQ(all.per_device[63], 5ull << 30);
}

TEST(MemoryLimitsEnv, BadValueWarnsAndIsIgnored) {
  std::string warnings;
  MemoryLimits l =
      limits_from({{"EACGM_MEMORY_LIMIT", "lots"}, {"CUDA_DEVICE_MEMORY_LIMIT", "1g"}}, &warnings);
  EXPECT_EQ(l.per_device[0], 1ull << 30);
  EXPECT_NE(warnings.find("ignoring EACGM_MEMORY_LIMIT=lots"), std::string::npos) << warnings;
}

}  // namespace
}  // namespace eacgm::govern
