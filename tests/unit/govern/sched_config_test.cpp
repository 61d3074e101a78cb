// The scheduler config: a full file, and clear errors for each kind of mistake.
#include <gtest/gtest.h>

#include "govern/sched/memory_accounts.h"
#include "govern/sched/tenant_config.h"

namespace eacgm::govern::sched {
namespace {

TEST(SchedConfig, ReadsAFullFile) {
  auto c = parse_scheduler_config(R"(
[scheduler]
gpus = 2
socket = "/tmp/s.sock"
tcp = "0.0.0.0:9478"
metrics = ""
window_seconds = 5
max_slice_ms = 40
min_slice_ms = 1

[[tenant]]
name = "train"
request = 0.3
limit = 0.5
memory_limit = "4GiB"
uids = [1000, 1001]
secret = "abc"

[[tenant]]
name = "infer"
request = 0.7
memory_limit = 1048576
)",
                                  "s.toml");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->gpus, 2);
  EXPECT_EQ(c->tcp, "0.0.0.0:9478");
  EXPECT_EQ(c->metrics, "");
  EXPECT_EQ(c->max_slice_ms, 40u);
  ASSERT_EQ(c->tenants.size(), 2u);
  EXPECT_EQ(c->tenants[0].memory_limit, 4ull << 30);
  EXPECT_EQ(c->tenants[0].uids.size(), 2u);
  EXPECT_DOUBLE_EQ(c->tenants[1].limit, 1.0);
  EXPECT_EQ(c->tenants[1].memory_limit, 1048576u);
}

void expect_error(const char* text, const char* words) {
  auto c = parse_scheduler_config(text, "s.toml");
  ASSERT_FALSE(c) << text;
  EXPECT_NE(c.error().find(words), std::string::npos) << c.error();
  EXPECT_EQ(c.error().rfind("s.toml", 0), 0u) << c.error();
}

TEST(SchedConfig, ClearErrors) {
  expect_error("[scheduler]\nwindow = 3\n", "unknown key \"window\"");
  expect_error("[[tenant]]\nname = \"a\"\nrequest = 1.5\n", "request must be between 0 and 1");
  expect_error("[[tenant]]\nname = \"a\"\nrequest = 0.6\nlimit = 0.5\n", "is above its limit");
  expect_error("[[tenant]]\nname = \"a\"\nrequest = 0.6\n[[tenant]]\nname = \"b\"\nrequest = 0.6\n",
               "add up to 1.20");
  expect_error("[[tenant]]\nname = \"a\"\n[[tenant]]\nname = \"a\"\n", "defined twice");
  expect_error("[[tenant]]\nname = \"a b\"\n", "must be 1-64 letters");
  expect_error("[[tenant]]\nname = \"a\"\nmemory_limit = \"lots\"\n", "memory_limit must be a size");
  expect_error("[[tenant]]\nname = \"a\"\nuids = [-1]\n", "uids must hold user ids");
  expect_error("[scheduler]\nmin_slice_ms = 50\nmax_slice_ms = 10\n", "min_slice_ms must not be above");
  expect_error("[scheduler\n", "s.toml:");
}

TEST(MemoryAccounts, SharedByTheTenantsProcessesAndFreedOnExit) {
  MemoryAccounts m;
  EXPECT_TRUE(m.reserve(1, "a", 0, 600, 1000));
  EXPECT_TRUE(m.reserve(2, "a", 0, 400, 1000));
  EXPECT_FALSE(m.reserve(2, "a", 0, 1, 1000)) << "the tenant's processes share one account";
  EXPECT_TRUE(m.reserve(3, "b", 0, 1000, 1000));
  EXPECT_TRUE(m.reserve(1, "a", 1, 1000, 1000)) << "per GPU";
  m.release(2, 0, 10'000);  // never more than the client added
  EXPECT_EQ(m.used("a", 0), 600u);
  m.drop_client(1);  // process exit
  EXPECT_EQ(m.used("a", 0), 0u);
  EXPECT_EQ(m.used("a", 1), 0u);
  EXPECT_EQ(m.used("b", 0), 1000u);
}

}  // namespace
}  // namespace eacgm::govern::sched
