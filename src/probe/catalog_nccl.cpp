// The NCCL catalog (libnccl): collectives, point-to-point, groups, communicator life cycle.
// Argument locations follow the x86-64 System V ABI (nccl.h of NCCL 2.28 checked).
#include "probe/catalog.h"
#include "probe/catalog_args.h"

namespace eacgm::probe {
namespace {

constexpr ArgFormat kSigned = ArgFormat::kSigned;

using namespace catalog_args;

ArgSpec handle(const char* name, std::uint8_t index) { return hex(name, index); }
ArgSpec stack_handle(const char* name, std::uint8_t slot) { return stack_hex(name, slot); }
// C enums and ints: only the low 32 bits of the register are defined by the ABI.
ArgSpec enum_arg(const char* name, std::uint8_t index) { return reg(name, index, ArgKind::kU32); }
ArgSpec int_arg(const char* name, std::uint8_t index) { return reg(name, index, ArgKind::kU32, kSigned); }
// ncclComm_t* (and int*) out-parameters: written by the call, read at its exit.
ArgSpec out_handle(const char* name, std::uint8_t index) { return out_ptr(name, index); }

// Only the nccl* names: libnccl exports each API twice (pncclX strong, ncclX weak)
// at the same address, and two probes there would report every call twice.
ProbeSpec spec(const char* name, std::vector<ArgSpec> args, std::vector<DerivedArg> derived = {}) {
  return api_spec(name, "nccl", "libnccl.so*", std::move(args), std::move(derived));  // ncclResult_t
}

// `bytes` = element count x datatype size, plus readable datatype (and op) names.
std::vector<DerivedArg> sized(const char* count, bool with_op) {
  std::vector<DerivedArg> d = {{"bytes", DerivedArg::Op::kTimesNcclDtype, count, "datatype"},
                               {"dtype_name", DerivedArg::Op::kNcclDtypeName, "datatype", ""}};
  if (with_op) d.push_back({"op_name", DerivedArg::Op::kNcclRedOpName, "op", ""});
  return d;
}

}  // namespace

Catalog nccl_catalog() {
  Catalog c{"nccl", "NCCL (libnccl): collectives, send/recv, groups, communicator creation and teardown", {}};
  auto& s = c.specs;
  // ncclAllReduce(sendbuff, recvbuff, count, datatype, op, comm, stream)
  s.push_back(spec("ncclAllReduce",
                   {handle("sendbuff", 0), handle("recvbuff", 1), reg("count", 2), enum_arg("datatype", 3),
                    enum_arg("op", 4), handle("comm", 5), stack_handle("stream", 0)},
                   sized("count", true)));
  // ncclReduceScatter(sendbuff, recvbuff, recvcount, datatype, op, comm, stream)
  s.push_back(spec("ncclReduceScatter",
                   {handle("sendbuff", 0), handle("recvbuff", 1), reg("recvcount", 2),
                    enum_arg("datatype", 3), enum_arg("op", 4), handle("comm", 5), stack_handle("stream", 0)},
                   sized("recvcount", true)));
  // ncclAllGather(sendbuff, recvbuff, sendcount, datatype, comm, stream): bytes are
  // what this rank contributes (the send side), as for the other collectives.
  s.push_back(spec("ncclAllGather",
                   {handle("sendbuff", 0), handle("recvbuff", 1), reg("sendcount", 2),
                    enum_arg("datatype", 3), handle("comm", 4), handle("stream", 5)},
                   sized("sendcount", false)));
  // ncclAlltoAll(sendbuff, recvbuff, count, datatype, comm, stream)
  s.push_back(spec("ncclAlltoAll",
                   {handle("sendbuff", 0), handle("recvbuff", 1), reg("count", 2), enum_arg("datatype", 3),
                    handle("comm", 4), handle("stream", 5)},
                   sized("count", false)));
  // ncclBroadcast(sendbuff, recvbuff, count, datatype, root, comm, stream)
  s.push_back(spec("ncclBroadcast",
                   {handle("sendbuff", 0), handle("recvbuff", 1), reg("count", 2), enum_arg("datatype", 3),
                    int_arg("root", 4), handle("comm", 5), stack_handle("stream", 0)},
                   sized("count", false)));
  // ncclBcast(buff, count, datatype, root, comm, stream): the in-place broadcast. It
  // calls ncclBroadcast through the PLT (NCCL 2.28), so it is an outer probe: that inner
  // ncclBroadcast is flagged nested and not counted twice.
  s.push_back(spec("ncclBcast",
                   {handle("buff", 0), reg("count", 1), enum_arg("datatype", 2), int_arg("root", 3),
                    handle("comm", 4), handle("stream", 5)},
                   sized("count", false)));
  s.back().outer = true;
  // ncclReduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream)
  s.push_back(
      spec("ncclReduce",
           {handle("sendbuff", 0), handle("recvbuff", 1), reg("count", 2), enum_arg("datatype", 3),
            enum_arg("op", 4), int_arg("root", 5), stack_handle("comm", 0), stack_handle("stream", 1)},
           sized("count", true)));
  // ncclGather / ncclScatter(sendbuff, recvbuff, count, datatype, root, comm, stream)
  for (const char* name : {"ncclGather", "ncclScatter"}) {
    s.push_back(spec(name,
                     {handle("sendbuff", 0), handle("recvbuff", 1), reg("count", 2), enum_arg("datatype", 3),
                      int_arg("root", 4), handle("comm", 5), stack_handle("stream", 0)},
                     sized("count", false)));
  }
  // ncclSend(sendbuff, count, datatype, peer, comm, stream), ncclRecv(recvbuff, ...)
  s.push_back(spec("ncclSend",
                   {handle("sendbuff", 0), reg("count", 1), enum_arg("datatype", 2), int_arg("peer", 3),
                    handle("comm", 4), handle("stream", 5)},
                   sized("count", false)));
  s.push_back(spec("ncclRecv",
                   {handle("recvbuff", 0), reg("count", 1), enum_arg("datatype", 2), int_arg("peer", 3),
                    handle("comm", 4), handle("stream", 5)},
                   sized("count", false)));
  s.push_back(spec("ncclGroupStart", {}));
  s.push_back(spec("ncclGroupEnd", {}));

  // ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank): the
  // 128-byte id is a MEMORY-class argument, copied onto the stack (slots 0..15), so it
  // takes no register and `rank` is the third integer argument (rdx). Its first two
  // words (bootstrap magic, root address) identify the communicator on every rank.
  std::vector<ArgSpec> init = {out_handle("comm", 0), int_arg("nranks", 1), int_arg("rank", 2),
                               stack_handle("unique_id_0", 0), stack_handle("unique_id_1", 1)};
  s.push_back(spec("ncclCommInitRank", init));
  // ncclCommInitRankConfig(comm*, nranks, commId, rank, ncclConfig_t* config)
  init.push_back(handle("config", 3));
  s.push_back(spec("ncclCommInitRankConfig", init));
  // ncclCommInitRankScalable(comm*, nranks, myrank, nId, ncclUniqueId* commIds, config):
  // the ids are behind a pointer; the first word alone does not name the communicator.
  s.push_back(
      spec("ncclCommInitRankScalable", {out_handle("comm", 0), int_arg("nranks", 1), int_arg("rank", 2),
                                        int_arg("n_id", 3), handle("comm_ids", 4), handle("config", 5)}));
  // ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist): `comm` is comms[0]
  // (rank 0 of the ndev communicators it creates in this process).
  s.push_back(spec("ncclCommInitAll", {out_handle("comm", 0), int_arg("ndev", 1), handle("devlist", 2)}));
  // ncclCommSplit(comm, color, key, ncclComm_t* newcomm, ncclConfig_t* config)
  s.push_back(spec("ncclCommSplit", {handle("comm", 0), int_arg("color", 1), int_arg("key", 2),
                                     out_handle("newcomm", 3), handle("config", 4)}));
  for (const char* name : {"ncclCommFinalize", "ncclCommDestroy", "ncclCommAbort"}) {
    s.push_back(spec(name, {handle("comm", 0)}));
  }
  // ncclCommCount(comm, int* count), ncclCommUserRank(comm, int* rank): they also teach
  // ingest the size and rank of communicators created before tracing started.
  s.push_back(spec("ncclCommCount", {handle("comm", 0), out_int("count", 1)}));
  s.push_back(spec("ncclCommUserRank", {handle("comm", 0), out_int("rank", 1)}));
  return c;
}

}  // namespace eacgm::probe
