// JSON and text output of NCCL calls: `bytes` per datatype, datatype/op names, and the
// communicator fields ingest stamps (rank, nranks, comm_id).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "builtin_probe.h"
#include "core/nccl_types.h"
#include "export/event_format.h"
#include "probe/catalog.h"

namespace eacgm::exporting {
namespace {

using nlohmann::json;

CallEvent call(const std::string& fn, std::initializer_list<std::pair<const char*, std::uint64_t>> values) {
  CallEvent e;
  e.probe = test::builtin_probe(fn);
  e.pid = e.tid = 42;
  e.has_exit = true;
  e.dur_ns = 1000;
  e.ret = 4;
  e.nargs = static_cast<std::uint8_t>(e.probe->spec.args.size());
  for (const auto& [name, v] : values) {
    for (std::size_t i = 0; i < e.probe->spec.args.size(); ++i) {
      if (e.probe->spec.args[i].name == name) e.args[i] = v;
    }
  }
  return e;
}

json to_json(const CallEvent& e) {
  fmt::memory_buffer out;
  append_jsonl(out, e);
  return json::parse(std::string_view(out.data(), out.size()));
}

std::string to_text(const CallEvent& e) {
  fmt::memory_buffer out;
  append_text(out, e);
  return fmt::to_string(out);
}

TEST(EventFormatNccl, BytesAndNamesForEveryDatatype) {
  const std::uint32_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  for (std::uint64_t dt = 0; dt < 12; ++dt) {
    json j = to_json(call("ncclAllReduce", {{"count", 1000}, {"datatype", dt}, {"op", dt % 5}}));
    const json& a = j["args"];
    EXPECT_EQ(a["count"], 1000);
    EXPECT_EQ(a["datatype"], dt);
    EXPECT_EQ(a["bytes"], 1000u * sizes[dt]) << "datatype " << dt;
    EXPECT_EQ(a["dtype_name"], std::string(nccl_dtype_name(dt)));
    EXPECT_EQ(a["op_name"], std::string(nccl_red_op_name(dt % 5)));
    EXPECT_EQ(j["ret"], 4);
    EXPECT_FALSE(a.contains("rank")) << "no communicator known";
  }
}

TEST(EventFormatNccl, UnknownDatatypeHasNoBytesNorName) {
  json a = to_json(call("ncclAllReduce", {{"count", 1000}, {"datatype", 99}}))["args"];
  EXPECT_EQ(a["datatype"], 99);
  EXPECT_FALSE(a.contains("bytes"));
  EXPECT_FALSE(a.contains("dtype_name"));
}

TEST(EventFormatNccl, FaultedDatatypeHasNoBytes) {
  CallEvent e = call("ncclAllReduce", {{"count", 1000}, {"datatype", 7}});
  e.fault_mask = 1u << 3;  // datatype is the fourth arg
  json a = to_json(e)["args"];
  EXPECT_TRUE(a["datatype"].is_null());
  EXPECT_FALSE(a.contains("bytes"));
}

TEST(EventFormatNccl, AllGatherCountsTheSendSide) {
  json a = to_json(call("ncclAllGather", {{"sendcount", 2048}, {"datatype", 6}}))["args"];
  EXPECT_EQ(a["sendcount"], 2048);
  EXPECT_EQ(a["bytes"], 4096);
  EXPECT_FALSE(a.contains("op_name"));
}

TEST(EventFormatNccl, CommunicatorFieldsWhenKnown) {
  CallEvent e = call("ncclAllReduce", {{"count", 10}, {"datatype", 7}, {"comm", 0xabc0}});
  e.nccl_rank = 3;
  e.nccl_nranks = 8;
  e.nccl_comm_id = 0x0123456789abcdefull;
  json a = to_json(e)["args"];
  EXPECT_EQ(a["comm"], "0xabc0");
  EXPECT_EQ(a["rank"], 3);
  EXPECT_EQ(a["nranks"], 8);
  EXPECT_EQ(a["comm_id"], "0x0123456789abcdef");
  EXPECT_NE(to_text(e).find("comm=0xabc0, stream=0x0, bytes=40, dtype_name=float32, op_name=sum, rank=3, "
                            "nranks=8, comm_id=0x0123456789abcdef)"),
            std::string::npos)
      << to_text(e);
}

TEST(EventFormatNccl, CreationKeepsItsOwnRankArgs) {
  CallEvent e = call("ncclCommInitRank", {{"nranks", 4}, {"rank", 0xffffffff}});
  e.nccl_rank = 2;  // would clash with the captured `rank`
  e.nccl_nranks = 4;
  e.nccl_comm_id = 5;
  fmt::memory_buffer out;
  append_jsonl(out, e);
  std::string line = fmt::to_string(out);
  EXPECT_EQ(line.find("\"rank\""), line.rfind("\"rank\"")) << "one rank key only: " << line;
  json a = json::parse(line)["args"];
  EXPECT_EQ(a["rank"], -1);  // the captured (signed) value
  EXPECT_EQ(a["comm_id"], "0x0000000000000005");
}

}  // namespace
}  // namespace eacgm::exporting
