// Integration tests (root, real eBPF uprobes): the memory ledger end to end. The test
// program allocates through the driver API of the tests' FAKE libcuda.so.1
// (tests/fakes/fake_libcuda: allocations succeed with fake addresses, no GPU), leaks
// three known allocations, double-frees one and has one allocation fail; `eacgm run`
// must report exactly those.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

constexpr std::uint64_t kMiB = 1 << 20;

std::string fake_libcuda() { return bin("fake_libcuda/libcuda.so.1"); }

// "leak ptr=0x... size=N" lines of the program: address -> size.
std::map<std::string, std::uint64_t> program_leaks(const std::string& out) {
  std::map<std::string, std::uint64_t> r;
  std::regex re(R"(leak ptr=(0x[0-9a-f]+) size=(\d+))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it) {
    r[(*it)[1]] = std::stoull((*it)[2]);
  }
  return r;
}

TEST(MemoryLedgerTrace, RunJsonReportsTheLeaksDoubleFreeAndFailedAllocationOfTheFakeDriver) {
  Subprocess eacgm({bin("eacgm"), "run", "--json", "--no-gpu", "--probes", "cuda_driver", "--",
                    bin("memory_leaks"), fake_libcuda()});
  ASSERT_EQ(eacgm.wait(), 0) << eacgm.err();
  const std::string err = eacgm.err();
  // The program's own lines go to stderr: stdout holds the one document.
  auto leaks = program_leaks(err);
  ASSERT_EQ(leaks.size(), 3u) << err;
  ASSERT_NE(err.find("failed ret=2"), std::string::npos) << err;
  json doc = json::parse(eacgm.out());
  for (const char* key : {"functions", "gpus", "processes", "memory", "accounting"}) {
    EXPECT_TRUE(doc.contains(key)) << key;
  }
  EXPECT_EQ(doc["accounting"]["events"], 11)
      << "5 cuMemAlloc_v2, 2 cuMemAllocAsync, 3 cuMemFree_v2, 1 cuMemFreeAsync";

  const json& procs = doc["memory"]["processes"];
  ASSERT_EQ(procs.size(), 1u) << doc["memory"].dump(2);
  const json& p = procs[0];
  EXPECT_EQ(p["comm"], "memory_leaks");
  EXPECT_EQ(p["device"], 0) << "no cudaSetDevice was traced: the runtime's default device";
  EXPECT_TRUE(p["exited"].get<bool>());
  EXPECT_EQ(p["allocations"], 6);
  EXPECT_EQ(p["frees"], 3);
  EXPECT_EQ(p["double_frees"], 1);
  EXPECT_EQ(p["unknown_frees"], 0);
  EXPECT_EQ(p["failed_allocations"], 1);
  EXPECT_EQ(p["live_bytes"], 6 * kMiB);
  EXPECT_EQ(p["peak_bytes"], 12 * kMiB) << "1+2+3 held, then 6 MiB on top";
  // Sizes 1, 2, 3, 4, 5, 6 MiB in log2 buckets.
  EXPECT_EQ(p["size_histogram"], json::parse(R"([{"min_bytes":1048576,"count":1},
      {"min_bytes":2097152,"count":2},{"min_bytes":4194304,"count":3}])"));

  const json& l = p["leaks"];
  EXPECT_EQ(l["count"], 3);
  EXPECT_EQ(l["bytes"], 6 * kMiB);
  ASSERT_EQ(l["largest"].size(), 3u);
  std::vector<std::uint64_t> sizes;
  std::map<std::string, std::uint64_t> reported;
  for (const auto& a : l["largest"]) {
    sizes.push_back(a["size"].get<std::uint64_t>());
    reported[a["ptr"].get<std::string>()] = a["size"].get<std::uint64_t>();
    EXPECT_GT(a["ts_ns"].get<std::uint64_t>(), 0u);
  }
  EXPECT_EQ(sizes, (std::vector<std::uint64_t>{3 * kMiB, 2 * kMiB, 1 * kMiB})) << "largest first";
  EXPECT_EQ(reported, leaks) << "the addresses the program leaked";
  EXPECT_EQ(l["largest"][0]["kind"], "async");
  EXPECT_EQ(l["largest"][1]["kind"], "device");
}

TEST(MemoryLedgerTrace, RunTablesHaveAMemorySection) {
  Subprocess eacgm({bin("eacgm"), "run", "--no-gpu", "--probes", "cuda_driver", "--", bin("memory_leaks"),
                    fake_libcuda()});
  ASSERT_EQ(eacgm.wait(), 0) << eacgm.err();
  const std::string out = eacgm.out();
  auto at = out.find("\nmemory ");
  ASSERT_NE(at, std::string::npos) << out;
  std::regex row(
      R"(\d+\s+memory_leaks\s+0\s+exited\s+6\s+3\s+6\.00 MiB\s+12\.0 MiB\s+3\s+6\.00 MiB\s+1\s+0\s+1)");
  EXPECT_TRUE(std::regex_search(out.substr(at), row)) << out;
  EXPECT_NE(out.find("leaked 3.00 MiB (async)"), std::string::npos) << out;
}

}  // namespace
}  // namespace eacgm::test
