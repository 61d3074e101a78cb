// Integration tests (root, real eBPF uprobes on the machine's real libnccl, no GPU
// needed): nccl_calls calls each NCCL API a known number of times with known arguments
// and prints NCCL's return codes; eacgm's events must match exactly.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "events.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

bool have_nccl_program() { return std::filesystem::exists(bin("nccl_calls")); }

struct Traced {
  std::vector<json> calls;   // eacgm's JSON lines, but for nested ones
  std::vector<json> nested;  // calls made inside an outer probe's call
  std::string program_out;   // the program's own lines, interleaved on the same stdout
  std::string err;
  int rc = -1;
};

Traced trace_nccl_calls(const std::vector<std::string>& extra_args = {}) {
  std::vector<std::string> argv = {bin("eacgm"), "trace"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  argv.insert(argv.end(), {"--", bin("nccl_calls")});
  Subprocess eacgm(argv);
  Traced t;
  t.rc = eacgm.wait();
  t.err = eacgm.err();
  std::istringstream in(eacgm.out());
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '{') {
      json e = json::parse(line);
      (e.value("nested", false) ? t.nested : t.calls).push_back(std::move(e));
    } else {
      t.program_out += line + "\n";
    }
  }
  // The command's own stdout goes to eacgm's stderr while events go to stdout.
  t.program_out += t.err;
  return t;
}

std::vector<json> named(const std::vector<json>& events, const std::string& name) {
  std::vector<json> out;
  for (const auto& e : events) {
    if (e["name"] == name) out.push_back(e);
  }
  return out;
}

// "label 0x... 0x..." lines of the program.
std::pair<std::string, std::string> printed_words(const std::string& out, const std::string& label) {
  std::smatch m;
  std::regex re(label + R"( (0x[0-9a-f]+) (0x[0-9a-f]+))");
  if (!std::regex_search(out, m, re)) return {};
  return {m[1], m[2]};
}

std::string printed_value(const std::string& out, const std::string& label) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(label + R"( (\S+))"))) return {};
  return m[1];
}

// FNV-1a 64 over the two words' little-endian bytes (docs/probes.md, comm_id).
std::string comm_id_of(std::uint64_t w0, std::uint64_t w1) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::uint64_t w : {w0, w1}) {
    for (int i = 0; i < 8; ++i) {
      h ^= (w >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(h == 0 ? 1 : h));
  return buf;
}

class TraceNccl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_nccl_program()) GTEST_SKIP() << "nccl_calls not built (no nccl.h/libnccl on this machine)";
  }
};

TEST_F(TraceNccl, ExactCountsArgumentsBytesAndReturnCodes) {
  Traced t = trace_nccl_calls();
  ASSERT_EQ(t.rc, 0) << t.err << t.program_out;
  for (const auto& e : t.calls) {
    EXPECT_EQ(e["domain"], "nccl") << e.dump();
    EXPECT_EQ(e["comm"], "nccl_calls");
    ASSERT_TRUE(e["dur_ns"].is_number()) << e.dump();
  }

  // Every call the program made, once, with the return code it saw (failures included:
  // NULL communicators give ncclInvalidArgument, creations fail without a GPU).
  auto expected = program_returns(t.program_out);
  ASSERT_EQ(expected["ncclAllReduce"].size(), 12u) << t.program_out;
  std::map<std::string, std::vector<int>> seen;
  for (const auto& e : t.calls) seen[e["name"].get<std::string>()].push_back(e["ret"].get<int>());
  EXPECT_EQ(seen, expected) << t.err;
  EXPECT_EQ(expected["ncclAllReduce"], std::vector<int>(12, 4)) << "ncclInvalidArgument for NULL comm";

  // One all-reduce per datatype, 1000 elements: bytes = 1000 x element size.
  const std::uint32_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  const char* dtype_names[] = {"int8",    "uint8",   "int32",   "uint32",   "int64",      "uint64",
                               "float16", "float32", "float64", "bfloat16", "float8e4m3", "float8e5m2"};
  const char* op_names[] = {"sum", "prod", "max", "min", "avg"};
  auto all_reduce = named(t.calls, "ncclAllReduce");
  ASSERT_EQ(all_reduce.size(), 12u);
  for (std::size_t dt = 0; dt < 12; ++dt) {
    const json& a = all_reduce[dt]["args"];
    EXPECT_EQ(a["sendbuff"], "0x1000");
    EXPECT_EQ(a["recvbuff"], "0x2000");
    EXPECT_EQ(a["count"], 1000);
    EXPECT_EQ(a["datatype"], dt);
    EXPECT_EQ(a["bytes"], 1000u * sizes[dt]) << dtype_names[dt];
    EXPECT_EQ(a["dtype_name"], dtype_names[dt]);
    EXPECT_EQ(a["op"], dt % 5);
    EXPECT_EQ(a["op_name"], op_names[dt % 5]);
    EXPECT_EQ(a["comm"], "0x0");
    EXPECT_EQ(a["stream"], "0x5000");  // the seventh argument: first stack slot
    EXPECT_FALSE(a.contains("rank")) << "no communicator behind a NULL handle";
  }

  auto all_gather = named(t.calls, "ncclAllGather");
  ASSERT_EQ(all_gather.size(), 2u);
  for (const auto& e : all_gather) {
    EXPECT_EQ(e["args"]["sendcount"], 2048);
    EXPECT_EQ(e["args"]["bytes"], 4096) << "send side: 2048 float16";
    EXPECT_EQ(e["args"]["stream"], "0x5000");
  }
  auto rs = named(t.calls, "ncclReduceScatter");
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0]["args"]["recvcount"], 512);
  EXPECT_EQ(rs[0]["args"]["bytes"], 1024);
  EXPECT_EQ(rs[0]["args"]["dtype_name"], "bfloat16");
  EXPECT_EQ(rs[0]["args"]["op_name"], "max");

  auto bcast = named(t.calls, "ncclBroadcast");
  ASSERT_EQ(bcast.size(), 1u);
  EXPECT_EQ(bcast[0]["args"]["root"], 3);
  EXPECT_EQ(bcast[0]["args"]["bytes"], 4096 * 8);
  EXPECT_EQ(bcast[0]["args"]["stream"], "0x5000");
  auto inplace = named(t.calls, "ncclBcast");
  ASSERT_EQ(inplace.size(), 1u);
  EXPECT_EQ(inplace[0]["args"]["buff"], "0x1000");
  EXPECT_EQ(inplace[0]["args"]["root"], 1);
  EXPECT_EQ(inplace[0]["args"]["bytes"], 100);
  // ncclBcast calls ncclBroadcast through the PLT: seen, but flagged nested (the only
  // nested call), so it is not counted twice.
  ASSERT_EQ(t.nested.size(), 1u);
  EXPECT_EQ(t.nested[0]["name"], "ncclBroadcast");
  EXPECT_EQ(t.nested[0]["args"]["sendbuff"], "0x1000");
  EXPECT_EQ(t.nested[0]["args"]["recvbuff"], "0x1000");
  EXPECT_EQ(t.nested[0]["args"]["count"], 100);

  auto reduce = named(t.calls, "ncclReduce");  // 8 arguments: comm, stream on the stack
  ASSERT_EQ(reduce.size(), 1u);
  EXPECT_EQ(reduce[0]["args"]["root"], 2);
  EXPECT_EQ(reduce[0]["args"]["op_name"], "min");
  EXPECT_EQ(reduce[0]["args"]["bytes"], 300 * 8);
  EXPECT_EQ(reduce[0]["args"]["comm"], "0x0");
  EXPECT_EQ(reduce[0]["args"]["stream"], "0x5000");

  auto a2a = named(t.calls, "ncclAlltoAll");
  ASSERT_EQ(a2a.size(), 1u);
  EXPECT_EQ(a2a[0]["args"]["bytes"], 64 * 4);
  auto gather = named(t.calls, "ncclGather");
  ASSERT_EQ(gather.size(), 1u);
  EXPECT_EQ(gather[0]["args"]["bytes"], 10);
  EXPECT_EQ(gather[0]["args"]["root"], 1);
  auto scatter = named(t.calls, "ncclScatter");
  ASSERT_EQ(scatter.size(), 1u);
  EXPECT_EQ(scatter[0]["args"]["dtype_name"], "float8e5m2");
  EXPECT_EQ(scatter[0]["args"]["bytes"], 20);

  auto send = named(t.calls, "ncclSend");
  ASSERT_EQ(send.size(), 2u);
  for (const auto& e : send) {
    EXPECT_EQ(e["args"]["peer"], 1);
    EXPECT_EQ(e["args"]["count"], 256);
    EXPECT_EQ(e["args"]["bytes"], 1024);
    EXPECT_EQ(e["args"]["sendbuff"], "0x1000");
    EXPECT_EQ(e["args"]["stream"], "0x5000");
  }
  auto recv = named(t.calls, "ncclRecv");
  ASSERT_EQ(recv.size(), 1u);
  EXPECT_EQ(recv[0]["args"]["peer"], 5);
  EXPECT_EQ(recv[0]["args"]["bytes"], 128);
  EXPECT_EQ(recv[0]["args"]["recvbuff"], "0x2000");

  // The group brackets its point-to-point calls, in call order.
  std::vector<std::string> order;
  for (const auto& e : t.calls) {
    std::string n = e["name"];
    if (n == "ncclGroupStart" || n == "ncclGroupEnd" || n == "ncclSend" || n == "ncclRecv")
      order.push_back(n);
  }
  EXPECT_EQ(order,
            (std::vector<std::string>{"ncclGroupStart", "ncclSend", "ncclSend", "ncclRecv", "ncclGroupEnd"}));

  auto split = named(t.calls, "ncclCommSplit");
  ASSERT_EQ(split.size(), 1u);
  EXPECT_EQ(split[0]["args"]["color"], 1);
  EXPECT_EQ(split[0]["args"]["key"], 2);
  EXPECT_NE(t.err.find("lost_exits=0"), std::string::npos) << t.err;
  EXPECT_NE(t.err.find("drops=0"), std::string::npos) << t.err;
}

TEST_F(TraceNccl, CommunicatorCreationArgumentsAndIdentity) {
  Traced t = trace_nccl_calls();
  ASSERT_EQ(t.rc, 0) << t.err;
  auto ret_of = program_returns(t.program_out);
  // ncclCommInitRank(comm*, nranks, ncclUniqueId by value, rank): the 128-byte id is on
  // the stack, so rank is in rdx; the id's first words are read from the stack.
  for (const auto& [fn, label] : std::vector<std::pair<std::string, std::string>>{
           {"ncclCommInitRank", "id_init_rank"}, {"ncclCommInitRankConfig", "id_init_rank_config"}}) {
    auto ev = named(t.calls, fn);
    ASSERT_EQ(ev.size(), 1u) << fn;
    const json& a = ev[0]["args"];
    EXPECT_EQ(a["nranks"], 1) << fn;
    EXPECT_EQ(a["rank"], 0) << fn;
    auto [w0, w1] = printed_words(t.program_out, label);
    ASSERT_FALSE(w0.empty()) << t.program_out;
    EXPECT_EQ(a["unique_id_0"], w0) << fn;
    EXPECT_EQ(a["unique_id_1"], w1) << fn;
    EXPECT_EQ(a["comm_id"], comm_id_of(std::stoull(w0, nullptr, 16), std::stoull(w1, nullptr, 16))) << fn;
    EXPECT_EQ(ev[0]["ret"], ret_of[fn].at(0));
    if (ret_of[fn].at(0) == 0) {
      std::string handle =
          printed_value(t.program_out, fn == "ncclCommInitRank" ? "comm_init_rank" : "comm_init_rank_config");
      EXPECT_EQ(a["comm"], handle) << "the created communicator, read at exit";
    }
  }
  EXPECT_NE(named(t.calls, "ncclCommInitRankConfig")[0]["args"]["config"], "0x0");
  auto all = named(t.calls, "ncclCommInitAll");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0]["args"]["ndev"], 1);
  EXPECT_EQ(all[0]["args"]["rank"], 0);
  EXPECT_EQ(all[0]["args"]["nranks"], 1);
  EXPECT_EQ(all[0]["ret"], ret_of["ncclCommInitAll"].at(0));
}

// Only where communicators can be created (a GPU): later calls on them carry the
// rank and size learnt from their creation.
TEST_F(TraceNccl, CallsOnCreatedCommunicatorsCarryRankAndSize) {
  Traced t = trace_nccl_calls();
  ASSERT_EQ(t.rc, 0) << t.err;
  if (program_returns(t.program_out)["ncclCommInitRank"].at(0) != 0) {
    GTEST_SKIP() << "ncclCommInitRank fails on this machine (no GPU): nothing to name";
  }
  std::string handle = printed_value(t.program_out, "comm_init_rank");
  auto [w0, w1] = printed_words(t.program_out, "id_init_rank");
  int checked = 0;
  for (const auto& e : t.calls) {
    if (e["args"].value("comm", "") != handle || e["name"] == "ncclCommInitRank") continue;
    EXPECT_EQ(e["args"]["nranks"], 1) << e.dump();
    EXPECT_EQ(e["args"]["comm_id"], comm_id_of(std::stoull(w0, nullptr, 16), std::stoull(w1, nullptr, 16)));
    if (e["name"] != "ncclCommUserRank") {
      EXPECT_EQ(e["args"]["rank"], 0) << e.dump();
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4) << "count, user rank, finalize, destroy";
}

TEST_F(TraceNccl, NcclCatalogAloneAndTextFormat) {
  Traced t = trace_nccl_calls({"--probes", "nccl", "--format", "text"});
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_TRUE(std::regex_search(
      t.program_out,
      std::regex(
          R"(nccl_calls\[\d+/\d+\] nccl ncclReduce\(sendbuff=0x1000, recvbuff=0x2000, count=300, datatype=8, op=3, root=2, comm=0x0, stream=0x5000, bytes=2400, dtype_name=float64, op_name=min\) = 4( \(\w+\))?  [0-9.]+ (us|ms))")))
      << t.program_out;
}

TEST_F(TraceNccl, ProbesCheckResolvesNcclWithoutAliases) {
  Subprocess eacgm({bin("eacgm"), "probes", "--check"});
  EXPECT_EQ(eacgm.wait(), 0) << eacgm.err();
  std::string out = eacgm.out();
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(ncclAllReduce .*libnccl\.so\*)"))) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(ok \S*libnccl\.so\.2: \d+ symbol)"))) << out;
  EXPECT_EQ(out.find("pncclAllReduce"), std::string::npos) << "aliases would double every event";
}

}  // namespace
}  // namespace eacgm::test
