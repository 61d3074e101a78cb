// Test program for the NCCL integration tests: calls each API of the NCCL catalog a
// known number of times with known arguments and prints what it did and what NCCL
// returned (the ground truth the tests compare eacgm's events with). Collectives get a
// NULL communicator, which NCCL rejects (ncclInvalidArgument) before touching anything;
// a bogus non-NULL handle would be dereferenced and crash. Without a GPU the
// communicator creations fail too; on a GPU they succeed and are used and destroyed.
//
// Usage: nccl_calls
#include <nccl.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

void* const kSend = reinterpret_cast<void*>(0x1000);
void* const kRecv = reinterpret_cast<void*>(0x2000);
cudaStream_t const kStream = reinterpret_cast<cudaStream_t>(0x5000);

void report(const char* name, ncclResult_t r) { std::printf("%s ret=%d\n", name, static_cast<int>(r)); }

// The first two 8-byte words of an id, as eacgm reads them from the stack.
void print_id(const char* label, const ncclUniqueId& id) {
  std::uint64_t w[2];
  std::memcpy(w, id.internal, sizeof(w));
  std::printf("%s 0x%llx 0x%llx\n", label, static_cast<unsigned long long>(w[0]),
              static_cast<unsigned long long>(w[1]));
}

ncclUniqueId make_id(const char* label) {
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  std::printf("unique_id_status %d\n", static_cast<int>(ncclGetUniqueId(&id)));
  print_id(label, id);
  return id;
}

}  // namespace

int main() {
  // Communicator creation: nranks 1, rank 0 (rank travels in rdx, the id on the stack).
  ncclUniqueId id_rank = make_id("id_init_rank");
  ncclUniqueId id_config = make_id("id_init_rank_config");
  ncclComm_t comm_rank = nullptr, comm_config = nullptr, comm_all = nullptr;
  ncclResult_t r = ncclCommInitRank(&comm_rank, 1, id_rank, 0);
  report("ncclCommInitRank", r);
  if (r != ncclSuccess) comm_rank = nullptr;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  r = ncclCommInitRankConfig(&comm_config, 1, id_config, 0, &config);
  report("ncclCommInitRankConfig", r);
  if (r != ncclSuccess) comm_config = nullptr;
  int devlist[1] = {0};
  r = ncclCommInitAll(&comm_all, 1, devlist);
  report("ncclCommInitAll", r);
  if (r != ncclSuccess) comm_all = nullptr;
  std::printf("comm_init_rank %p\ncomm_init_rank_config %p\ncomm_init_all %p\n",
              static_cast<void*>(comm_rank), static_cast<void*>(comm_config), static_cast<void*>(comm_all));

  // One all-reduce of 1000 elements per datatype, ops cycling sum..avg.
  for (int dt = 0; dt < ncclNumTypes; ++dt) {
    report("ncclAllReduce", ncclAllReduce(kSend, kRecv, 1000, static_cast<ncclDataType_t>(dt),
                                          static_cast<ncclRedOp_t>(dt % 5), nullptr, kStream));
  }
  // 2 all-gathers of 2048 float16 (send side).
  for (int i = 0; i < 2; ++i) {
    report("ncclAllGather", ncclAllGather(kSend, kRecv, 2048, ncclFloat16, nullptr, kStream));
  }
  report("ncclReduceScatter", ncclReduceScatter(kSend, kRecv, 512, ncclBfloat16, ncclMax, nullptr, kStream));
  report("ncclBroadcast", ncclBroadcast(kSend, kRecv, 4096, ncclInt64, 3, nullptr, kStream));
  report("ncclBcast", ncclBcast(kSend, 100, ncclUint8, 1, nullptr, kStream));
  // 8 arguments: comm and stream are the first two stack arguments.
  report("ncclReduce", ncclReduce(kSend, kRecv, 300, ncclFloat64, ncclMin, 2, nullptr, kStream));
  report("ncclAlltoAll", ncclAlltoAll(kSend, kRecv, 64, ncclInt32, nullptr, kStream));
  report("ncclGather", ncclGather(kSend, kRecv, 10, ncclFloat8e4m3, 1, nullptr, kStream));
  report("ncclScatter", ncclScatter(kSend, kRecv, 20, ncclFloat8e5m2, 0, nullptr, kStream));

  // A group: 2 sends of 256 float32 to peer 1, 1 receive of 128 int8 from peer 5.
  report("ncclGroupStart", ncclGroupStart());
  for (int i = 0; i < 2; ++i) report("ncclSend", ncclSend(kSend, 256, ncclFloat32, 1, nullptr, kStream));
  report("ncclRecv", ncclRecv(kRecv, 128, ncclInt8, 5, nullptr, kStream));
  report("ncclGroupEnd", ncclGroupEnd());

  ncclComm_t split = nullptr;
  report("ncclCommSplit", ncclCommSplit(nullptr, 1, 2, &split, nullptr));
  int value = -1;
  report("ncclCommCount", ncclCommCount(nullptr, &value));
  report("ncclCommUserRank", ncclCommUserRank(nullptr, &value));

  // Real communicators (GPU only): queried, then torn down.
  for (ncclComm_t c : {comm_rank, comm_config, comm_all}) {
    if (!c) continue;
    report("ncclCommCount", ncclCommCount(c, &value));
    std::printf("comm_count %d\n", value);
    report("ncclCommUserRank", ncclCommUserRank(c, &value));
    std::printf("comm_user_rank %d\n", value);
    report("ncclCommFinalize", ncclCommFinalize(c));
    report("ncclCommDestroy", ncclCommDestroy(c));
  }
  // NULL communicators: rejected (or ignored) without harm.
  report("ncclCommFinalize", ncclCommFinalize(nullptr));
  report("ncclCommDestroy", ncclCommDestroy(nullptr));
  report("ncclCommAbort", ncclCommAbort(nullptr));
  std::fflush(stdout);
  return 0;
}
