/* The FAKE libnccl.so.2: a stand-in for NCCL whose communicators are created without a GPU
 * and whose collectives succeed at once, so the agent names communicators and numbers
 * collectives as on a GPU machine (the flight recorder's integration test). Signatures are
 * NCCL's (nccl.h 2.x), so the catalog's argument locations hold; nothing is moved.
 * EACGM_FAKE_NCCL_WAIT_AT=N and EACGM_FAKE_NCCL_WAIT_S=S: the process's N-th collective
 * (from 0) waits S seconds inside the call, as a rank whose peers never arrive does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct {
  char internal[128];
} ncclUniqueId;
typedef struct fake_comm {
  int nranks;
  int rank;
} * ncclComm_t;
typedef int ncclResult_t; /* ncclSuccess = 0, ncclInvalidArgument = 4 */
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
typedef void* cudaStream_t;

static long collectives;

/* The collective that waits, when the environment names one. */
static void maybe_wait(void) {
  const char* at = getenv("EACGM_FAKE_NCCL_WAIT_AT");
  const char* s = getenv("EACGM_FAKE_NCCL_WAIT_S");
  if (at != NULL && s != NULL && collectives == atol(at)) {
    struct timespec t = {atol(s), 0};
    nanosleep(&t, NULL);
  }
  ++collectives;
}

static ncclResult_t collective(ncclComm_t comm) {
  if (comm == NULL) return 4;
  maybe_wait();
  return 0;
}

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  /* Two words that differ per job: the pid and the time, as NCCL's magic and address do. */
  uint64_t w[2] = {(uint64_t)getpid() * 0x9e3779b97f4a7c15ULL, (uint64_t)time(NULL)};
  memset(id, 0, sizeof(*id));
  memcpy(id->internal, w, sizeof(w));
  return 0;
}

EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  (void)id;
  if (comm == NULL || nranks < 1 || rank < 0 || rank >= nranks) return 4;
  *comm = malloc(sizeof(**comm));
  (*comm)->nranks = nranks;
  (*comm)->rank = rank;
  return 0;
}

EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  free(comm);
  return 0;
}

EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (comm == NULL) return 4;
  *count = comm->nranks;
  return 0;
}

EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (comm == NULL) return 4;
  *rank = comm->rank;
  return 0;
}

EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                  ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)count, (void)datatype, (void)op, (void)stream;
  return collective(comm);
}

EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                  int root, ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)count, (void)datatype, (void)root, (void)stream;
  return collective(comm);
}

EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                  ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)sendcount, (void)datatype, (void)stream;
  return collective(comm);
}
