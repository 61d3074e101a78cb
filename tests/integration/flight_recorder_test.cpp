// The NCCL flight recorder end to end: `eacgm serve` traces the ranks of one communicator
// over the FAKE libnccl (tests/fakes/fake_libnccl, tests/programs/nccl_fork_ranks.c); rank 1 stops
// before all-reduce #20 while rank 0 waits inside it. /api/v1/nccl/flight_recorder lists each
// rank's last calls (rank 0 one collective ahead, started, rank 1 not), and `eacgm
// flight-recorder --dump` writes one pickle per rank that python3 reads with the fields
// PyTorch's analyzer reads. Needs root (eBPF uprobes).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "../unit/server/http_client.h"
#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using server::testing::get;

// The communicator of the flight recorder with both ranks' entries, or null.
json communicator(std::uint16_t port) {
  auto reply = get(port, "/api/v1/nccl/flight_recorder");
  if (reply.status != 200) return nullptr;
  const json doc = json::parse(reply.body, nullptr, false);
  if (doc.is_discarded()) return nullptr;
  for (const json& c : doc.at("communicators")) {
    if (c.at("ranks").size() == 2) return c;
  }
  return nullptr;
}

TEST(FlightRecorder, ListsEachRanksLastCollectivesAndDumpsThemForPyTorchsAnalyzer) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
  const std::string dir = temp_dir();
  const std::uint16_t port = free_port();
  std::ofstream(dir + "/eacgm.toml") << "[hangs]\nmin_age_s = 1\n[nccl]\nflight_recorder_entries = 8\n";
  Subprocess serve({bin("eacgm"), "serve", "--listen", "127.0.0.1:" + std::to_string(port), "--config",
                    dir + "/eacgm.toml", "--no-gpu", "--store", "sqlite:" + dir + "/eacgm.db"},
                   dir);
  ASSERT_TRUE(serve.wait_for("tracing all processes", true)) << serve.err();
  // Two ranks, 30 all-reduces; rank 1 stops 8 s before #20, rank 0 waits 8 s inside it.
  const std::string go = dir + "/go";
  Subprocess ranks({bin("nccl_fork_ranks"), go, "2", "30", "1", "20", "8"}, dir);
  ASSERT_TRUE(ranks.wait_for("ready")) << ranks.err();
  ASSERT_TRUE(serve.wait_for("probes to " + bin("fake_libnccl/libnccl.so.2"), true)) << serve.err();
  std::ofstream(go) << "go";

  // Rank 0's all-reduce #20 is recorded from the scans of the calls in flight.
  json comm;
  const auto deadline = std::chrono::steady_clock::now() + 6s;
  while (std::chrono::steady_clock::now() < deadline) {
    comm = communicator(port);
    if (!comm.is_null() && comm["ranks"][0]["entries"].back()["collective_seq_id"] == 20) break;
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_FALSE(comm.is_null()) << get(port, "/api/v1/nccl/flight_recorder").body << serve.err();
  EXPECT_EQ(comm["nranks"], 2);
  const json& r0 = comm["ranks"][0];
  const json& r1 = comm["ranks"][1];
  EXPECT_EQ(r0["rank"], 0);
  EXPECT_EQ(r1["rank"], 1);
  ASSERT_EQ(r0["entries"].size(), 8u) << comm.dump();
  ASSERT_EQ(r1["entries"].size(), 8u) << comm.dump();
  EXPECT_EQ(r0["recorded"], 21);
  EXPECT_EQ(r1["recorded"], 20);
  const json& waiting = r0["entries"].back();
  EXPECT_EQ(waiting["collective_seq_id"], 20) << waiting.dump();
  EXPECT_EQ(waiting["instance"], 20);
  EXPECT_EQ(waiting["name"], "ncclAllReduce");
  EXPECT_EQ(waiting["profiling_name"], "nccl:all_reduce");
  EXPECT_EQ(waiting["state"], "started");
  EXPECT_TRUE(waiting["returned_ns"].is_null());
  EXPECT_EQ(waiting["count"], 1024);
  EXPECT_EQ(waiting["datatype"], "float32");
  EXPECT_EQ(waiting["op"], "sum");
  const json& last1 = r1["entries"].back();
  EXPECT_EQ(last1["collective_seq_id"], 19);
  EXPECT_EQ(last1["state"], "completed");
  EXPECT_EQ(r1["entries"][0]["record_id"], 12);
  EXPECT_EQ(get(port, "/api/v1/nccl/flight_recorder?pid=" + r1["pid"].dump()).body.find("\"rank\":0,"),
            std::string::npos);

  // The dump: one pickle per rank, read by python3 with the analyzer's fields.
  const std::string out = dir + "/fr";
  Subprocess dump({bin("eacgm"), "flight-recorder", "--server", "http://127.0.0.1:" + std::to_string(port),
                   "--dump", out},
                  dir);
  ASSERT_EQ(dump.wait(), 0) << dump.err();
  EXPECT_NE(dump.err().find("wrote ranks 0,1 of communicator " + comm["comm_id"].get<std::string>()),
            std::string::npos)
      << dump.err();
  ASSERT_TRUE(std::filesystem::exists(out + "/nccl_trace_rank_0"));
  ASSERT_TRUE(std::filesystem::exists(out + "/nccl_trace_rank_1"));
  if (!std::filesystem::exists("/usr/bin/python3")) GTEST_SKIP() << "/usr/bin/python3 is not installed";
  std::ofstream(dir + "/check.py") << R"(import pickle, sys
for rank in (0, 1):
    d = pickle.load(open(f"{sys.argv[1]}/nccl_trace_rank_{rank}", "rb"))
    pg = next(iter(d["pg_config"]))
    assert d["pg_config"][pg]["ranks"] == "[0, 1]", d["pg_config"]
    e = d["entries"]
    assert [x["process_group"] for x in e] == [(pg, "undefined")] * 8
    keys = {"record_id", "pg_id", "collective_seq_id", "p2p_seq_id", "op_id", "profiling_name", "time_created_ns",
            "input_sizes", "input_dtypes", "output_sizes", "output_dtypes", "state", "time_discovered_started_ns",
            "time_discovered_completed_ns", "retired", "timeout_ms", "is_p2p", "frames"}
    assert all(keys <= set(x) for x in e), e[0]
    assert all(x["input_sizes"] == [[1024]] and x["input_dtypes"] == ["Float"] for x in e)
    print(d["version"], rank, [x["collective_seq_id"] for x in e], e[-1]["state"])
)";
  Subprocess check({"/usr/bin/python3", dir + "/check.py", out}, dir);
  ASSERT_EQ(check.wait(), 0) << check.err();
  EXPECT_EQ(check.out(),
            "2.10 0 [13, 14, 15, 16, 17, 18, 19, 20] started\n"
            "2.10 1 [12, 13, 14, 15, 16, 17, 18, 19] completed\n");
  ranks.wait();
}

}  // namespace
}  // namespace eacgm::test
