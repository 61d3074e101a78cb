// The NCCL communicator table: learning from creations and queries, stamping later
// calls, forgetting destroyed communicators, per-pid keys and its bound.
#include "ingest/nccl_comms.h"

#include <gtest/gtest.h>

#include <memory>

#include "core/nccl_types.h"
#include "probe/catalog.h"

namespace eacgm::ingest {
namespace {

std::shared_ptr<const ProbeInfo> nccl_probe(const std::string& name) {
  for (const auto& c : probe::builtin_catalogs()) {
    if (c.name != "nccl") continue;
    for (const auto& s : c.specs) {
      if (s.name == name) {
        auto p = std::make_shared<ProbeInfo>();
        p->function = name;
        p->symbol = name;
        p->spec = s;
        return p;
      }
    }
  }
  ADD_FAILURE() << "no nccl probe " << name;
  return nullptr;
}

// A completed call with the named args set (others 0).
CallEvent call(const std::string& fn, std::uint32_t pid, std::int32_t ret,
               std::initializer_list<std::pair<const char*, std::uint64_t>> values) {
  CallEvent e;
  e.probe = nccl_probe(fn);
  e.pid = e.tid = pid;
  e.has_exit = true;
  e.ret = ret;
  e.nargs = static_cast<std::uint8_t>(e.probe->spec.args.size());
  for (const auto& [name, v] : values) {
    bool found = false;
    for (std::size_t i = 0; i < e.probe->spec.args.size(); ++i) {
      if (e.probe->spec.args[i].name == name) {
        e.args[i] = v;
        found = true;
      }
    }
    EXPECT_TRUE(found) << fn << " has no arg " << name;
  }
  return e;
}

CallEvent init_rank(std::uint32_t pid, std::uint64_t comm, int nranks, int rank, std::int32_t ret = 0) {
  return call("ncclCommInitRank", pid, ret,
              {{"comm", comm},
               {"nranks", static_cast<std::uint32_t>(nranks)},
               {"rank", static_cast<std::uint32_t>(rank)},
               {"unique_id_0", 0x1111},
               {"unique_id_1", 0x2222}});
}

CallEvent all_reduce(std::uint32_t pid, std::uint64_t comm) {
  return call("ncclAllReduce", pid, 0, {{"comm", comm}, {"count", 1000}, {"datatype", 7}});
}

TEST(NcclComms, CreationStampsLaterCallsOnThatCommunicator) {
  NcclCommTable t;
  CallEvent init = init_rank(10, 0xabc0, 8, 3);
  t.enrich(init);
  EXPECT_EQ(init.nccl_rank, 3);
  EXPECT_EQ(init.nccl_nranks, 8);
  EXPECT_EQ(init.nccl_comm_id, nccl_comm_id(0x1111, 0x2222));

  CallEvent ar = all_reduce(10, 0xabc0);
  t.enrich(ar);
  EXPECT_EQ(ar.nccl_rank, 3);
  EXPECT_EQ(ar.nccl_nranks, 8);
  EXPECT_EQ(ar.nccl_comm_id, nccl_comm_id(0x1111, 0x2222));

  // Another communicator, and the same handle value in another process: unknown.
  CallEvent other = all_reduce(10, 0xdef0);
  t.enrich(other);
  EXPECT_EQ(other.nccl_rank, -1);
  CallEvent other_pid = all_reduce(11, 0xabc0);
  t.enrich(other_pid);
  EXPECT_EQ(other_pid.nccl_rank, -1);
  EXPECT_EQ(other_pid.nccl_comm_id, 0u);
}

TEST(NcclComms, StampsAreClearedOnReusedEvents) {
  NcclCommTable t;
  CallEvent e = init_rank(10, 0xabc0, 2, 1);
  t.enrich(e);
  ASSERT_EQ(e.nccl_rank, 1);
  // The reader reuses one CallEvent; a later unrelated call must not keep the stamp.
  CallEvent next = all_reduce(10, 0);
  next.nccl_rank = 5;
  next.nccl_nranks = 6;
  next.nccl_comm_id = 7;
  t.enrich(next);
  EXPECT_EQ(next.nccl_rank, -1);
  EXPECT_EQ(next.nccl_nranks, -1);
  EXPECT_EQ(next.nccl_comm_id, 0u);
}

TEST(NcclComms, FailedCreationIsStampedButNotRemembered) {
  NcclCommTable t;
  CallEvent init = init_rank(10, 0xabc0, 4, 2, /*ncclUnhandledCudaError*/ 1);
  t.enrich(init);
  EXPECT_EQ(init.nccl_rank, 2);  // what it tried to create
  EXPECT_EQ(t.size(), 0u);
  CallEvent ar = all_reduce(10, 0xabc0);
  t.enrich(ar);
  EXPECT_EQ(ar.nccl_rank, -1);
}

TEST(NcclComms, NonBlockingCreationInProgressIsRemembered) {
  NcclCommTable t;
  CallEvent init = init_rank(10, 0xabc0, 4, 2, /*ncclInProgress*/ 7);
  t.enrich(init);
  CallEvent ar = all_reduce(10, 0xabc0);
  t.enrich(ar);
  EXPECT_EQ(ar.nccl_rank, 2);
}

TEST(NcclComms, FaultedOutPointerIsNotRemembered) {
  NcclCommTable t;
  CallEvent init = init_rank(10, 0xabc0, 4, 2);
  init.fault_mask = 1;  // `comm` could not be read at exit
  t.enrich(init);
  EXPECT_EQ(t.size(), 0u);
}

TEST(NcclComms, InitAllNamesRankZeroOfNdev) {
  NcclCommTable t;
  CallEvent init = call("ncclCommInitAll", 10, 0, {{"comm", 0x5550}, {"ndev", 4}});
  t.enrich(init);
  CallEvent ar = all_reduce(10, 0x5550);
  t.enrich(ar);
  EXPECT_EQ(ar.nccl_rank, 0);
  EXPECT_EQ(ar.nccl_nranks, 4);
  EXPECT_EQ(ar.nccl_comm_id, 0u);  // the id is made inside NCCL, never passed
}

TEST(NcclComms, CountAndUserRankTeachCommunicatorsCreatedBeforeTracing) {
  NcclCommTable t;
  CallEvent count = call("ncclCommCount", 10, 0, {{"comm", 0x7770}, {"count", 16}});
  t.enrich(count);
  EXPECT_EQ(count.nccl_nranks, 16);
  EXPECT_EQ(count.nccl_rank, -1);
  CallEvent rank = call("ncclCommUserRank", 10, 0, {{"comm", 0x7770}, {"rank", 5}});
  t.enrich(rank);
  CallEvent ar = all_reduce(10, 0x7770);
  t.enrich(ar);
  EXPECT_EQ(ar.nccl_rank, 5);
  EXPECT_EQ(ar.nccl_nranks, 16);
  // A failed query teaches nothing (the out-parameter is not written).
  CallEvent bad = call("ncclCommCount", 10, 4, {{"comm", 0x8880}, {"count", 99}});
  t.enrich(bad);
  EXPECT_EQ(bad.nccl_nranks, -1);
  EXPECT_EQ(t.size(), 1u);
}

TEST(NcclComms, DestroyAndAbortForgetTheCommunicator) {
  for (const char* fn : {"ncclCommDestroy", "ncclCommAbort"}) {
    NcclCommTable t;
    CallEvent init = init_rank(10, 0xabc0, 2, 0);
    t.enrich(init);
    CallEvent d = call(fn, 10, 0, {{"comm", 0xabc0}});
    t.enrich(d);
    EXPECT_EQ(d.nccl_nranks, 2) << fn << ": the teardown itself still names it";
    EXPECT_EQ(t.size(), 0u) << fn;
    CallEvent ar = all_reduce(10, 0xabc0);  // the handle may be reused by a new allocation
    t.enrich(ar);
    EXPECT_EQ(ar.nccl_rank, -1) << fn;
  }
}

TEST(NcclComms, ForgetDropsOnlyThatProcess) {
  NcclCommTable t;
  CallEvent a = init_rank(10, 0xa0, 2, 0), b = init_rank(11, 0xa0, 2, 1);
  t.enrich(a);
  t.enrich(b);
  t.forget(10);
  EXPECT_EQ(t.size(), 1u);
  CallEvent on_a = all_reduce(10, 0xa0), on_b = all_reduce(11, 0xa0);
  t.enrich(on_a);
  t.enrich(on_b);
  EXPECT_EQ(on_a.nccl_rank, -1);
  EXPECT_EQ(on_b.nccl_rank, 1);
}

TEST(NcclComms, BoundedByEvictingTheLeastRecentlyUsed) {
  NcclCommTable t(2);
  CallEvent a = init_rank(10, 0xa0, 2, 0), b = init_rank(10, 0xb0, 2, 1), c = init_rank(10, 0xc0, 2, 0);
  t.enrich(a);
  t.enrich(b);
  CallEvent use_a = all_reduce(10, 0xa0);  // a is now more recent than b
  t.enrich(use_a);
  t.enrich(c);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.evictions(), 1u);
  CallEvent on_b = all_reduce(10, 0xb0), on_a = all_reduce(10, 0xa0);
  t.enrich(on_b);
  t.enrich(on_a);
  EXPECT_EQ(on_b.nccl_rank, -1);
  EXPECT_EQ(on_a.nccl_rank, 0);
}

TEST(NcclComms, OtherDomainsAreUntouched) {
  NcclCommTable t;
  auto p = std::make_shared<ProbeInfo>();
  p->function = "cudaMalloc";
  p->spec.domain = "cuda";
  p->spec.args = {ArgSpec{"comm", ArgSource::kRegister, 0, ArgKind::kRaw, ArgFormat::kHex, false}};
  CallEvent init = init_rank(10, 0xabc0, 2, 0);
  t.enrich(init);
  CallEvent e;
  e.probe = p;
  e.pid = 10;
  e.nargs = 1;
  e.args[0] = 0xabc0;
  t.enrich(e);
  EXPECT_EQ(e.nccl_rank, -1);
}

}  // namespace
}  // namespace eacgm::ingest
