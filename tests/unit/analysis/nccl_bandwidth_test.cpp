// nccl-tests' size S and bus-bandwidth factors (doc/PERFORMANCE.md) for our catalog's
// `bytes`, checked on worked numbers, and NcclStats' bandwidth per (communicator, call).
#include "analysis/nccl_bandwidth.h"

#include <gtest/gtest.h>

#include "analysis/nccl_stats.h"
#include "nccl_events.h"

namespace eacgm::analysis {
namespace {

using testing::nccl_call;
using testing::nccl_probe;
using testing::NcclCall;

TEST(NcclBandwidth, NamesEachDataMovingFunctionAndBcastAsBroadcast) {
  EXPECT_EQ(nccl_collective_of("ncclAllReduce"), NcclCollective::kAllReduce);
  EXPECT_EQ(nccl_collective_of("ncclReduceScatter"), NcclCollective::kReduceScatter);
  EXPECT_EQ(nccl_collective_of("ncclAllGather"), NcclCollective::kAllGather);
  EXPECT_EQ(nccl_collective_of("ncclAlltoAll"), NcclCollective::kAlltoAll);
  EXPECT_EQ(nccl_collective_of("ncclBroadcast"), NcclCollective::kBroadcast);
  EXPECT_EQ(nccl_collective_of("ncclBcast"), NcclCollective::kBroadcast);
  EXPECT_EQ(nccl_collective_of("ncclReduce"), NcclCollective::kReduce);
  EXPECT_EQ(nccl_collective_of("ncclGather"), NcclCollective::kGather);
  EXPECT_EQ(nccl_collective_of("ncclScatter"), NcclCollective::kScatter);
  EXPECT_EQ(nccl_collective_of("ncclSend"), NcclCollective::kSend);
  EXPECT_EQ(nccl_collective_of("ncclRecv"), NcclCollective::kRecv);
  EXPECT_EQ(nccl_collective_of("ncclGroupStart"), NcclCollective::kNone);
  EXPECT_EQ(nccl_collective_of("cudaMemcpy"), NcclCollective::kNone);
  EXPECT_EQ(nccl_collective_name(NcclCollective::kAlltoAll), "AlltoAll");
  EXPECT_TRUE(nccl_is_collective(NcclCollective::kBroadcast));
  EXPECT_FALSE(nccl_is_collective(NcclCollective::kSend));
  EXPECT_FALSE(nccl_is_collective(NcclCollective::kNone));
}

// AllReduce: S is the whole buffer (count x size); busbw = algbw x 2(n-1)/n.
// 1 Mi float32 (4 MiB) on 8 ranks in 100 us: algbw 41.94 GB/s, busbw x 1.75 = 73.40 GB/s.
TEST(NcclBandwidth, AllReduceUsesTheBufferAndTwiceNMinusOneOverN) {
  const std::uint64_t bytes = (std::uint64_t{1} << 20) * 4;
  auto s = nccl_algorithm_bytes(NcclCollective::kAllReduce, bytes, 8);
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, 4194304u);
  auto algbw = bytes_per_second(static_cast<double>(*s), 100'000);
  ASSERT_TRUE(algbw);
  EXPECT_DOUBLE_EQ(*algbw, 41.94304e9);
  EXPECT_DOUBLE_EQ(*nccl_bus_factor(NcclCollective::kAllReduce, 8), 1.75);
  EXPECT_NEAR(*algbw * *nccl_bus_factor(NcclCollective::kAllReduce, 8), 73.40032e9, 1.0);
  // S needs no nranks, the factor does; one rank moves nothing over the bus.
  EXPECT_EQ(nccl_algorithm_bytes(NcclCollective::kAllReduce, 100, -1), 100u);
  EXPECT_FALSE(nccl_bus_factor(NcclCollective::kAllReduce, -1));
  EXPECT_DOUBLE_EQ(*nccl_bus_factor(NcclCollective::kAllReduce, 1), 0.0);
}

// AllGather: `bytes` is the send side (sendcount); S = sendcount x size x n, the
// receive buffer. 1000 float16 on 4 ranks in 2 us: S = 8000 B, algbw 4 GB/s, busbw 3.
TEST(NcclBandwidth, AllGatherAndReduceScatterScaleThePerRankCountByN) {
  auto s = nccl_algorithm_bytes(NcclCollective::kAllGather, 2000, 4);
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, 8000u);
  EXPECT_DOUBLE_EQ(*bytes_per_second(static_cast<double>(*s), 2000), 4e9);
  EXPECT_DOUBLE_EQ(*nccl_bus_factor(NcclCollective::kAllGather, 4), 0.75);
  // ReduceScatter: `bytes` is the receive side (recvcount); S = recvcount x size x n.
  // 256 Ki bfloat16 on 2 ranks in 1 ms: S = 1 MiB, algbw 1.048576 GB/s, busbw half.
  s = nccl_algorithm_bytes(NcclCollective::kReduceScatter, 524288, 2);
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, 1048576u);
  EXPECT_DOUBLE_EQ(*bytes_per_second(static_cast<double>(*s), 1'000'000), 1.048576e9);
  EXPECT_DOUBLE_EQ(*nccl_bus_factor(NcclCollective::kReduceScatter, 2), 0.5);
  // Without nranks there is no S.
  EXPECT_FALSE(nccl_algorithm_bytes(NcclCollective::kAllGather, 2000, -1));
  EXPECT_FALSE(nccl_algorithm_bytes(NcclCollective::kReduceScatter, 2000, 0));
}

// AlltoAll, Gather, Scatter: `count` per peer (per rank), S = count x size x n;
// factor (n-1)/n. 1024 int32 per peer on 8 ranks: S = 32 KiB, factor 0.875.
TEST(NcclBandwidth, AlltoAllGatherScatterScaleByNWithNMinusOneOverN) {
  for (auto kind : {NcclCollective::kAlltoAll, NcclCollective::kGather, NcclCollective::kScatter}) {
    EXPECT_EQ(nccl_algorithm_bytes(kind, 4096, 8), 32768u) << nccl_collective_name(kind);
    EXPECT_DOUBLE_EQ(*nccl_bus_factor(kind, 8), 0.875);
  }
}

// Broadcast, Reduce, Send, Recv: S = count x size, factor 1 whatever n. The line
// "134217728 ... 1211.2 us 110.81 GB/s 110.81 GB/s" of an nccl-tests sendrecv_perf run:
TEST(NcclBandwidth, RootedAndPointToPointUseTheBufferWithFactorOne) {
  for (auto kind :
       {NcclCollective::kBroadcast, NcclCollective::kReduce, NcclCollective::kSend, NcclCollective::kRecv}) {
    EXPECT_EQ(nccl_algorithm_bytes(kind, 134217728, -1), 134217728u) << nccl_collective_name(kind);
    EXPECT_DOUBLE_EQ(*nccl_bus_factor(kind, -1), 1.0);
    EXPECT_DOUBLE_EQ(*nccl_bus_factor(kind, 16), 1.0);
  }
  EXPECT_NEAR(*bytes_per_second(134217728.0, 1'211'200) / 1e9, 110.81, 0.005);
}

TEST(NcclBandwidth, NothingForUnknownCallsZeroTimeOrAnOverflowingSize) {
  EXPECT_FALSE(nccl_algorithm_bytes(NcclCollective::kNone, 10, 2));
  EXPECT_FALSE(nccl_bus_factor(NcclCollective::kNone, 2));
  EXPECT_FALSE(bytes_per_second(10.0, 0));
  EXPECT_FALSE(nccl_algorithm_bytes(NcclCollective::kAllGather, std::uint64_t{1} << 62, 8));
}

// Per row: sum of S over the sum of host durations (nccl-tests averages the time of
// repeated calls of one size, which is the same for equal sizes).
TEST(NcclStatsBandwidth, SumsSizesOverDurationsOfIssuedTimedCalls) {
  auto allgather = nccl_probe("ncclAllGather");
  NcclStats n;
  // 1000 float32 per rank on 4 ranks: S = 16000 B each; 3 us + 5 us.
  n.add(nccl_call(allgather, {.rank = 1, .nranks = 4, .dur_ns = 3000, .count = 1000}));
  n.add(nccl_call(allgather, {.rank = 1, .nranks = 4, .dur_ns = 5000, .count = 1000}));
  // Failed: counted as a call and its bytes, not in the bandwidth.
  n.add(nccl_call(allgather, {.rank = 1, .nranks = 4, .dur_ns = 1, .count = 1000, .ret = 4}));
  // ncclInProgress from a non-blocking communicator was issued: it counts.
  n.add(nccl_call(allgather, {.rank = 1, .nranks = 4, .dur_ns = 2000, .count = 500, .ret = 7}));
  auto rows = n.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].calls, 4u);
  EXPECT_EQ(rows[0].errors, 2u);  // ncclInProgress is a non-zero result
  EXPECT_EQ(rows[0].bandwidth_calls, 3u);
  // (16000 + 16000 + 8000) B / 10 us = 4 GB/s; busbw x 3/4.
  ASSERT_TRUE(rows[0].algbw);
  EXPECT_DOUBLE_EQ(*rows[0].algbw, 4e9);
  ASSERT_TRUE(rows[0].busbw);
  EXPECT_DOUBLE_EQ(*rows[0].busbw, 3e9);
}

TEST(NcclStatsBandwidth, NoBandwidthWithoutTheSizeOrTheFactor) {
  auto allgather = nccl_probe("ncclAllGather");
  auto allreduce = nccl_probe("ncclAllReduce");
  NcclStats n;
  // Communicator unknown: no nranks, so no S for AllGather, and no factor for AllReduce.
  n.add(nccl_call(allgather, {.comm_id = 0, .rank = -1, .nranks = -1}));
  n.add(nccl_call(allreduce, {.comm_id = 0, .rank = -1, .nranks = -1, .dur_ns = 4096, .count = 1024}));
  auto rows = n.rows();
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    if (r.function == "ncclAllGather") {
      EXPECT_FALSE(r.algbw);
      EXPECT_FALSE(r.busbw);
      EXPECT_EQ(r.bandwidth_calls, 0u);
    } else {
      ASSERT_TRUE(r.algbw);
      EXPECT_DOUBLE_EQ(*r.algbw, 1e9);  // 4096 B in 4096 ns
      EXPECT_FALSE(r.busbw);
    }
  }
}

}  // namespace
}  // namespace eacgm::analysis
