// NcclFlightRecorder: the ring per (communicator, rank), its numbering, calls seen in flight
// completed by their record, and the caps.
#include "analysis/nccl_flight_recorder.h"

#include <gtest/gtest.h>

#include "nccl_events.h"

namespace eacgm::analysis {
namespace {

using testing::nccl_call;
using testing::nccl_probe;
using testing::NcclCall;

const FlightRank* find_rank(const FlightRecord& rec, std::uint64_t comm, std::int32_t rank) {
  for (const auto& r : rec.ranks) {
    if (r.comm_id == comm && r.rank == rank) return &r;
  }
  return nullptr;
}

// A probe shaped like the catalog's ncclAllReduce: count, datatype, op.
std::shared_ptr<const ProbeInfo> all_reduce_probe() {
  auto p = std::make_shared<ProbeInfo>(*nccl_probe("ncclAllReduce"));
  ArgSpec op;
  op.name = "op";
  p->spec.args.push_back(op);
  return p;
}

InflightCall in_flight(const CallEvent& call, std::uint64_t entry_mono_ns) {
  InflightCall in;
  in.call = call;
  in.call.has_exit = false;
  in.call.dur_ns = 0;
  in.entry_mono_ns = entry_mono_ns;
  return in;
}

TEST(NcclFlightRecorder, KeepsTheLastNCallsPerRankOldestFirstWithTheirSequence) {
  NcclFlightRecorder::Options o;
  o.entries = 4;
  NcclFlightRecorder rec(o);
  auto ar = all_reduce_probe();
  auto bc = nccl_probe("ncclBroadcast");
  for (int i = 0; i < 10; ++i) {
    for (int rank = 0; rank < 2; ++rank) {
      NcclCall c;
      c.rank = rank;
      c.ts_ns = 1'000'000'000ULL + static_cast<std::uint64_t>(i) * 1'000'000;
      c.count = 100 + static_cast<std::uint64_t>(i);
      CallEvent e = nccl_call(i % 3 == 2 ? bc : ar, c);
      e.nargs = 3;
      e.args[2] = 0;  // ncclSum
      rec.add(e);
    }
  }
  FlightRecord out = rec.record();
  EXPECT_EQ(out.capacity, 4u);
  ASSERT_EQ(out.ranks.size(), 2u);
  const FlightRank* r1 = find_rank(out, 0xc0, 1);
  ASSERT_NE(r1, nullptr);
  EXPECT_EQ(r1->recorded, 10u);
  EXPECT_EQ(r1->pid, 1001u);
  EXPECT_EQ(r1->nranks, 2);
  ASSERT_EQ(r1->entries.size(), 4u);
  // Calls 6..9: all-reduce, all-reduce, broadcast, all-reduce.
  EXPECT_EQ(r1->entries[0].record_id, 6u);
  EXPECT_EQ(r1->entries[0].collective_seq_id, 6u);
  EXPECT_EQ(r1->entries[0].kind, NcclCollective::kAllReduce);
  EXPECT_EQ(r1->entries[0].instance, 4u);  // all-reduces 0,1,3,4,6: the fifth
  EXPECT_EQ(r1->entries[0].count, 106u);
  EXPECT_TRUE(r1->entries[0].has_count);
  EXPECT_EQ(r1->entries[0].datatype, static_cast<std::int64_t>(testing::kFloat32));
  EXPECT_EQ(r1->entries[0].red_op, 0);
  EXPECT_EQ(r1->entries[2].kind, NcclCollective::kBroadcast);
  EXPECT_EQ(r1->entries[2].instance, 2u);  // broadcasts 2,5,8
  EXPECT_EQ(r1->entries[2].red_op, -1);
  EXPECT_EQ(r1->entries[3].record_id, 9u);
  EXPECT_EQ(r1->entries[3].state, FlightState::kCompleted);
  EXPECT_EQ(r1->entries[3].entered_ns, 1'009'000'000u);
  EXPECT_EQ(r1->entries[3].returned_ns, 1'009'001'000u);
  EXPECT_FALSE(rec.changed());
}

TEST(NcclFlightRecorder, NumbersPointToPointApartFromCollectives) {
  NcclFlightRecorder rec;
  auto ar = nccl_probe("ncclAllReduce");
  auto send = nccl_probe("ncclSend");
  NcclCall c;
  rec.add(nccl_call(ar, c));
  c.ts_ns += 1000;
  rec.add(nccl_call(send, c));
  c.ts_ns += 1000;
  rec.add(nccl_call(send, c));
  c.ts_ns += 1000;
  rec.add(nccl_call(ar, c));
  FlightRecord out = rec.record();
  ASSERT_EQ(out.ranks.size(), 1u);
  const auto& e = out.ranks[0].entries;
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[1].collective_seq_id, 1u);  // after the first collective
  EXPECT_EQ(e[1].p2p_seq_id, 0u);
  EXPECT_EQ(e[2].p2p_seq_id, 1u);
  EXPECT_EQ(e[3].collective_seq_id, 1u);
  EXPECT_EQ(e[3].p2p_seq_id, 2u);
  EXPECT_EQ(e[3].record_id, 3u);
}

TEST(NcclFlightRecorder, LeavesOutRefusedNestedAndNonCollectiveCalls) {
  NcclFlightRecorder rec;
  auto ar = nccl_probe("ncclAllReduce");
  NcclCall c;
  c.ret = 4;  // ncclInvalidArgument
  rec.add(nccl_call(ar, c));
  c.ret = 0;
  CallEvent nested = nccl_call(ar, c);
  nested.nested = true;
  rec.add(nested);
  rec.add(nccl_call(testing::nccl_plain_probe("ncclCommCount"), c));
  CallEvent no_comm = nccl_call(ar, c);
  no_comm.nccl_comm_id = 0;
  rec.add(no_comm);
  EXPECT_TRUE(rec.record().ranks.empty());
  c.ret = 7;  // ncclInProgress: issued on a non-blocking communicator
  rec.add(nccl_call(ar, c));
  EXPECT_EQ(rec.record().ranks.size(), 1u);
}

TEST(NcclFlightRecorder, ACallSeenInFlightIsStartedWithItsStackThenCompletedByItsRecord) {
  NcclFlightRecorder rec;
  auto ar = nccl_probe("ncclAllReduce");
  NcclCall c;
  rec.add(nccl_call(ar, c));  // #0 completed
  c.ts_ns += 2'000'000;
  CallEvent call = nccl_call(ar, c);
  const std::uint64_t entry_mono = 50'000'000'000;
  InflightCall in = in_flight(call, entry_mono);
  // Too young: its thread's earlier records may still be on their way.
  rec.add_inflight({&in, 1}, entry_mono + 10'000'000);
  EXPECT_EQ(rec.record().ranks[0].entries.size(), 1u);
  rec.add_inflight({&in, 1}, entry_mono + 200'000'000);
  FlightRecord out = rec.record();
  ASSERT_EQ(out.ranks[0].entries.size(), 2u);
  EXPECT_EQ(out.ranks[0].entries[1].state, FlightState::kStarted);
  EXPECT_EQ(out.ranks[0].entries[1].collective_seq_id, 1u);
  EXPECT_EQ(out.ranks[0].entries[1].returned_ns, 0u);
  EXPECT_EQ(out.ranks[0].entries[1].python_stack, nullptr);

  // A later scan carries the stack; the entry is not made twice. The scan's clock may
  // differ from the records' by microseconds.
  auto stack = std::make_shared<PythonStack>();
  stack->frames.push_back(
      {std::make_shared<PythonCode>(PythonCode{"train_step", "train.py", 10, false}), 12});
  in.python_stack = stack;
  in.call.ts_ns += 3000;
  rec.add_inflight({&in, 1}, entry_mono + 6'000'000'000);
  out = rec.record();
  ASSERT_EQ(out.ranks[0].entries.size(), 2u);
  EXPECT_EQ(out.ranks[0].entries[1].python_stack, stack);

  // Its record completes it in place.
  call.dur_ns = 9'000'000'000;
  rec.add(call);
  out = rec.record();
  ASSERT_EQ(out.ranks[0].entries.size(), 2u);
  EXPECT_EQ(out.ranks[0].entries[1].state, FlightState::kCompleted);
  EXPECT_EQ(out.ranks[0].entries[1].returned_ns, call.ts_ns + call.dur_ns);
  EXPECT_EQ(out.ranks[0].entries[1].python_stack, stack);
  EXPECT_EQ(out.ranks[0].recorded, 2u);

  // A scan made before that record but handled after it adds nothing.
  rec.add_inflight({&in, 1}, entry_mono + 8'000'000'000);
  EXPECT_EQ(rec.record().ranks[0].entries.size(), 2u);
}

TEST(NcclFlightRecorder, AnInFlightCallRightAfterAShortOneIsItsOwnEntry) {
  NcclFlightRecorder rec;
  auto ar = nccl_probe("ncclAllReduce");
  NcclCall c;
  c.dur_ns = 2000;
  rec.add(nccl_call(ar, c));
  c.ts_ns += 3000;  // entered 1 us after the previous call returned
  InflightCall in = in_flight(nccl_call(ar, c), 1'000'000'000);
  rec.add_inflight({&in, 1}, 2'000'000'000);
  FlightRecord out = rec.record();
  ASSERT_EQ(out.ranks[0].entries.size(), 2u);
  EXPECT_EQ(out.ranks[0].entries[1].state, FlightState::kStarted);
}

TEST(NcclFlightRecorder, ALaterCallOfTheThreadClosesAStartedOneWhoseRecordWasLost) {
  NcclFlightRecorder rec;
  auto ar = nccl_probe("ncclAllReduce");
  NcclCall c;
  InflightCall in = in_flight(nccl_call(ar, c), 1'000'000'000);
  rec.add_inflight({&in, 1}, 2'000'000'000);
  c.ts_ns += 5'000'000'000;
  rec.add(nccl_call(ar, c));
  FlightRecord out = rec.record();
  ASSERT_EQ(out.ranks[0].entries.size(), 2u);
  EXPECT_EQ(out.ranks[0].entries[0].state, FlightState::kCompleted);
  EXPECT_EQ(out.ranks[0].entries[0].returned_ns, 0u);
  EXPECT_EQ(out.ranks[0].entries[1].collective_seq_id, 1u);
}

TEST(NcclFlightRecorder, CapsRanksAndLetsGoOfExitedProcesses) {
  NcclFlightRecorder::Options o;
  o.max_ranks = 2;
  o.exited_keep_ns = 1000;
  NcclFlightRecorder rec(o);
  auto ar = nccl_probe("ncclAllReduce");
  NcclCall c;
  for (int rank = 0; rank < 3; ++rank) {
    c.rank = rank;
    rec.add(nccl_call(ar, c));
  }
  FlightRecord out = rec.record();
  EXPECT_EQ(out.ranks.size(), 2u);
  EXPECT_EQ(out.untracked_calls, 1u);

  auto alive = [](std::uint32_t pid) { return pid != 1000; };  // rank 0's process is gone
  rec.sweep(alive, 5000, 8);
  out = rec.record();
  ASSERT_EQ(out.ranks.size(), 2u);
  EXPECT_TRUE(out.ranks[0].exited);
  EXPECT_FALSE(out.ranks[1].exited);
  // Full: the exited rank makes room for a new one.
  c.rank = 2;
  rec.add(nccl_call(ar, c));
  out = rec.record();
  ASSERT_EQ(out.ranks.size(), 2u);
  EXPECT_EQ(out.ranks[0].rank, 1);
  EXPECT_EQ(out.ranks[1].rank, 2);
  EXPECT_EQ(out.dropped_ranks, 1u);

  // Gone longer than exited_keep_ns: let go by the sweep.
  auto none = [](std::uint32_t) { return false; };
  rec.sweep(none, 10'000, 8);
  rec.sweep(none, 20'000, 8);
  EXPECT_TRUE(rec.record().ranks.empty());
}

TEST(NcclFlightRecorder, LongRingsFollowFewerRanks) {
  NcclFlightRecorder::Options o;
  o.entries = NcclFlightRecorder::kMaxEntries;
  NcclFlightRecorder rec(o);
  auto ar = nccl_probe("ncclAllReduce");
  NcclCall c;
  for (int rank = 0; rank < 100; ++rank) {
    c.rank = rank;
    c.nranks = 100;
    rec.add(nccl_call(ar, c));
  }
  const FlightRecord out = rec.record();
  EXPECT_EQ(out.ranks.size(), NcclFlightRecorder::kMaxTotalEntries / NcclFlightRecorder::kMaxEntries);
  EXPECT_EQ(out.untracked_calls, 100 - out.ranks.size());
}

TEST(NcclFlightRecorder, ResizingKeepsTheNewestEntries) {
  NcclFlightRecorder rec;
  auto ar = nccl_probe("ncclAllReduce");
  NcclCall c;
  for (int i = 0; i < 10; ++i) {
    c.ts_ns += 1'000'000;
    rec.add(nccl_call(ar, c));
  }
  rec.set_entries(3);
  FlightRecord out = rec.record();
  ASSERT_EQ(out.ranks[0].entries.size(), 3u);
  EXPECT_EQ(out.ranks[0].entries[0].record_id, 7u);
  EXPECT_EQ(out.ranks[0].entries[2].record_id, 9u);
  c.ts_ns += 1'000'000;
  rec.add(nccl_call(ar, c));
  out = rec.record();
  ASSERT_EQ(out.ranks[0].entries.size(), 3u);
  EXPECT_EQ(out.ranks[0].entries[2].record_id, 10u);
  rec.set_entries(8);
  out = rec.record();
  ASSERT_EQ(out.ranks[0].entries.size(), 3u);
  EXPECT_EQ(out.ranks[0].entries[0].record_id, 8u);
}

}  // namespace
}  // namespace eacgm::analysis
