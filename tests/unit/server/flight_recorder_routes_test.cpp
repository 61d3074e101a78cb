// The flight recorder routes over a snapshot made by hand: the JSON and its filters, one
// rank's dump, and the answers to bad parameters.
#include "server/flight_recorder_routes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "http_client.h"
#include "recorded_daemon.h"

namespace eacgm::server {
namespace {

using testing::get;

std::shared_ptr<const analysis::AnalysisSnapshot> snapshot() {
  analysis::FlightRecord record;
  record.capacity = 64;
  for (int rank = 0; rank < 2; ++rank) {
    analysis::FlightRank r;
    r.comm_id = 0xabc;
    r.rank = rank;
    r.nranks = 2;
    r.pid = 100 + static_cast<std::uint32_t>(rank);
    r.comm = "train";
    r.recorded = 1;
    analysis::FlightEntry e;
    e.kind = analysis::NcclCollective::kAllReduce;
    e.count = 4;
    e.has_count = true;
    e.datatype = 7;  // ncclFloat32, ncclSum
    e.red_op = 0;
    e.tid = r.pid;
    e.entered_ns = 1000, e.returned_ns = 1500;
    r.entries.push_back(e);
    record.ranks.push_back(r);
  }
  auto snap = std::make_shared<analysis::AnalysisSnapshot>();
  snap->sequence = 3;
  snap->parts.put(std::move(record));
  return snap;
}

class FlightRecorderRoutes : public ::testing::Test {
 protected:
  void SetUp() override {
    add_flight_recorder_routes(http_, std::make_shared<test::RecordedSource>(snapshot()));
    ServerOptions o;
    o.port = 0;
    ASSERT_TRUE(http_.start(o).ok());
  }
  HttpServer http_;
};

TEST_F(FlightRecorderRoutes, ListsRanksByCommunicatorWithFilters) {
  auto r = get(http_.port(), "/api/v1/nccl/flight_recorder");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto doc = nlohmann::json::parse(r.body);
  EXPECT_EQ(doc["sequence"], 3);
  EXPECT_EQ(doc["entries_per_rank"], 64);
  ASSERT_EQ(doc["communicators"].size(), 1u);
  const auto& c = doc["communicators"][0];
  EXPECT_EQ(c["comm_id"], "0x0000000000000abc");
  ASSERT_EQ(c["ranks"].size(), 2u);
  const auto& e = c["ranks"][1]["entries"][0];
  EXPECT_EQ(e["name"], "ncclAllReduce");
  EXPECT_EQ(e["profiling_name"], "nccl:all_reduce");
  EXPECT_EQ(e["datatype"], "float32");
  EXPECT_EQ(e["op"], "sum");
  EXPECT_EQ(e["state"], "completed");
  EXPECT_EQ(e["duration_ns"], 500);
  EXPECT_TRUE(e["root"].is_null());
  EXPECT_TRUE(e["python_stack"].is_null());

  r = get(http_.port(), "/api/v1/nccl/flight_recorder?pid=101");
  EXPECT_EQ(nlohmann::json::parse(r.body)["communicators"][0]["ranks"].size(), 1u);
  r = get(http_.port(), "/api/v1/nccl/flight_recorder?comm_id=0xabd");
  EXPECT_TRUE(nlohmann::json::parse(r.body)["communicators"].empty());
  r = get(http_.port(), "/api/v1/nccl/flight_recorder?comm_id=2748");  // 0xabc in decimal
  EXPECT_EQ(nlohmann::json::parse(r.body)["communicators"].size(), 1u);
  EXPECT_EQ(get(http_.port(), "/api/v1/nccl/flight_recorder?comm_id=0xzz").status, 400);
  EXPECT_EQ(get(http_.port(), "/api/v1/nccl/flight_recorder?pid=x").status, 400);
}

TEST_F(FlightRecorderRoutes, DumpsOneRankAsAPickle) {
  auto r = get(http_.port(), "/api/v1/nccl/flight_recorder/dump?comm_id=0x0000000000000abc&rank=1");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("Content-Type"), "application/octet-stream");
  ASSERT_GE(r.body.size(), 3u);
  EXPECT_EQ(r.body.substr(0, 2), std::string("\x80\x02", 2));  // pickle protocol 2
  EXPECT_EQ(r.body.back(), '.');
  EXPECT_NE(r.body.find("nccl:all_reduce"), std::string::npos);
  EXPECT_EQ(get(http_.port(), "/api/v1/nccl/flight_recorder/dump?comm_id=0xabc&rank=2").status, 404);
  EXPECT_EQ(get(http_.port(), "/api/v1/nccl/flight_recorder/dump?rank=0").status, 400);
  EXPECT_EQ(get(http_.port(), "/api/v1/nccl/flight_recorder/dump?comm_id=0xabc").status, 400);
  EXPECT_EQ(get(http_.port(), "/api/v1/nccl/flight_recorder/dump?comm_id=0xabc&rank=-1").status, 400);
}

}  // namespace
}  // namespace eacgm::server
