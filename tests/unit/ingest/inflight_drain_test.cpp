// InflightDrain: the kernel's table of calls in flight as InflightCalls: the probe named,
// the entry on the wall clock, the arguments the entry did not read (or read as a
// pointer) unknown, NCCL calls stamped with their communicator, unknown probes left out.
#include "ingest/inflight_drain.h"

#include <gtest/gtest.h>

#include <cstring>

#include "../common/builtin_spec.h"
#include "core/nccl_types.h"
#include "ingest/enricher_stages.h"

namespace eacgm::ingest {
namespace {

class RecordedTable final : public InflightSource {
 public:
  std::vector<eacgm_call_in_flight> entries;
  std::vector<eacgm_call_in_flight> read() override { return entries; }
};

eacgm_call_in_flight entry(std::uint32_t probe_id, std::uint32_t pid, std::uint32_t tid,
                           std::uint64_t ts_ns) {
  eacgm_call_in_flight e{};
  e.probe_id = probe_id;
  e.pid = pid;
  e.tid = tid;
  e.ts_ns = ts_ns;
  std::strncpy(e.comm, "trainer", sizeof(e.comm));
  return e;
}

struct InflightFixture : ::testing::Test {
  std::shared_ptr<const ProbeInfo> add(const std::string& name) {
    ProbeInfo info;
    info.function = name;
    info.spec = test::builtin_spec(name);
    return table.add(std::move(info));
  }
  probe::ProbeTable table;
  EnricherChain chain;
  RecordedTable source;
};

TEST_F(InflightFixture, EachEntryIsACallOfItsProbeSinceItsEntry) {
  auto sync = add("cuStreamSynchronize");
  InflightDrain drain(source, table, chain);
  const std::uint64_t entered = monotonic_ns() - 3'000'000'000;
  auto e = entry(sync->id, 10, 11, entered);
  e.nargs = 1;
  e.read_mask = 0x1;
  e.args[0] = 0x5eed;
  // 999: no such probe; an entry whose time is 0: a thread in no waiting call now.
  source.entries = {e, entry(999, 10, 12, entered), entry(sync->id, 10, 14, 0)};
  std::vector<InflightCall> calls;
  const std::uint64_t before = monotonic_ns();
  const std::uint64_t scanned = drain.drain(calls);
  EXPECT_GE(scanned, before);
  EXPECT_LE(scanned, monotonic_ns());
  ASSERT_EQ(calls.size(), 1u);
  const InflightCall& c = calls[0];
  EXPECT_EQ(c.entry_mono_ns, entered);
  EXPECT_EQ(c.call.probe, sync);
  EXPECT_EQ(c.call.pid, 10u);
  EXPECT_EQ(c.call.tid, 11u);
  EXPECT_EQ(c.call.comm_view(), "trainer");
  EXPECT_FALSE(c.call.has_exit);
  EXPECT_EQ(c.call.nargs, 1);
  EXPECT_EQ(c.call.args[0], 0x5eedu);
  EXPECT_EQ(c.call.fault_mask, 0);
  // On the wall clock: within a second of now minus three seconds.
  const std::uint64_t wall_entry = realtime_ns() - 3'000'000'000;
  EXPECT_NEAR(static_cast<double>(c.call.ts_ns), static_cast<double>(wall_entry), 1e9);
  EXPECT_EQ(drain.counters().in_flight, 1u);
  EXPECT_EQ(drain.counters().unknown_probe, 1u);
  EXPECT_EQ(drain.counters().scans, 1u);
}

TEST_F(InflightFixture, WhatTheEntryDidNotReadIsUnknown) {
  // Counted in always-on mode: the entry read only the stream (the count's argument).
  auto copy = add("cuMemcpyDtoH_v2");
  const auto& args = copy->spec.args;
  ASSERT_GE(args.size(), 3u);
  auto e = entry(copy->id, 10, 11, 1);
  e.nargs = static_cast<std::uint8_t>(args.size());
  e.read_mask = 0x4;
  InflightDrain drain(source, table, chain);
  source.entries = {e};
  std::vector<InflightCall> calls;
  drain.drain(calls);
  ASSERT_EQ(calls.size(), 1u);
  const std::uint8_t all = static_cast<std::uint8_t>((1u << args.size()) - 1);
  EXPECT_EQ(calls[0].call.fault_mask, all & ~0x4);
  // A read that faulted is unknown too.
  e.read_mask = 0xff;
  e.fault_mask = 0x2;
  source.entries = {e};
  calls.clear();
  drain.drain(calls);
  EXPECT_EQ(calls[0].call.fault_mask, 0x2);
}

TEST_F(InflightFixture, AnOutParameterIsOnlyItsPointerAtEntry) {
  chain.add(make_nccl_comm_stage());
  auto init = add("ncclCommInitRank");
  ASSERT_TRUE(init->spec.args[0].at_exit);
  auto e = entry(init->id, 10, 10, 1);
  e.nargs = static_cast<std::uint8_t>(init->spec.args.size());
  e.read_mask = 0xff;
  e.args[0] = 0x7ffc0000;  // the ncclComm_t* the call will write
  e.args[1] = 2;
  e.args[2] = 1;
  source.entries = {e};
  InflightDrain drain(source, table, chain);
  std::vector<InflightCall> calls;
  drain.drain(calls);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].call.fault_mask, 0x1);
  // The communicator it is creating: rank and size from its arguments.
  EXPECT_EQ(calls[0].call.nccl_rank, 1);
  EXPECT_EQ(calls[0].call.nccl_nranks, 2);
}

TEST_F(InflightFixture, ACollectiveIsStampedWithItsCommunicator) {
  chain.add(make_nccl_comm_stage());
  auto init = add("ncclCommInitRank");
  auto allreduce = add("ncclAllReduce");
  // The communicator's creation, as a returned call through the chain.
  CallEvent created;
  created.probe = init;
  created.pid = 10;
  created.tid = 10;
  created.has_exit = true;
  created.ret = 0;
  created.nargs = static_cast<std::uint8_t>(init->spec.args.size());
  created.args[0] = 0xc0ffee;  // the ncclComm_t written at exit
  created.args[1] = 4;
  created.args[2] = 3;
  created.args[3] = 0x1111;
  created.args[4] = 0x2222;
  struct Drop final : CallSink {
    void take(CallEvent&) override {}
  } drop;
  chain.process(created, drop);

  const int comm = arg_index(allreduce->spec, "comm");
  ASSERT_GE(comm, 0);
  auto e = entry(allreduce->id, 10, 13, 1);
  e.nargs = static_cast<std::uint8_t>(allreduce->spec.args.size());
  e.read_mask = 0xff;
  e.args[static_cast<std::size_t>(comm)] = 0xc0ffee;
  source.entries = {e};
  InflightDrain drain(source, table, chain);
  std::vector<InflightCall> calls;
  drain.drain(calls);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].call.nccl_rank, 3);
  EXPECT_EQ(calls[0].call.nccl_nranks, 4);
  EXPECT_EQ(calls[0].call.nccl_comm_id, nccl_comm_id(0x1111, 0x2222));
  EXPECT_EQ(calls[0].call.tid, 13u) << "the call itself is not the chain's";
}

}  // namespace
}  // namespace eacgm::ingest
