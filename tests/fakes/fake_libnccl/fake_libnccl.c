/* A FAKE libnccl.so.2 for the tests: communicators of ranks in several processes on one
 * machine, without a GPU. ncclCommInitRank keeps the rank, the size and the id it is given
 * (the id by value, on the stack, as NCCL's ABI has it); each collective is a rendezvous
 * of the communicator's ranks through files in $EACGM_FAKE_NCCL_DIR (rank r of the n-th
 * collective creates <id>.<n>.<r>, then waits inside the call until every rank's file of
 * that collective is there), so a rank that never calls leaves the others waiting inside
 * the call, as a blocking collective does. Signatures as nccl.h (NCCL 2.28). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef enum { ncclSuccess = 0, ncclSystemError = 2, ncclInvalidArgument = 4 } ncclResult_t;
typedef struct {
  char internal[128];
} ncclUniqueId;
typedef struct ncclComm {
  int rank, nranks;
  uint64_t id0, id1;
  uint64_t seq; /* collectives this rank entered */
} * ncclComm_t;
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
typedef void* cudaStream_t;

static void path_of(char* out, size_t size, const struct ncclComm* c, uint64_t seq, int rank) {
  const char* dir = getenv("EACGM_FAKE_NCCL_DIR");
  snprintf(out, size, "%s/%016llx%016llx.%llu.%d", dir ? dir : "/tmp", (unsigned long long)c->id0,
           (unsigned long long)c->id1, (unsigned long long)seq, rank);
}

static ncclResult_t rendezvous(struct ncclComm* c) {
  if (c == NULL) return ncclInvalidArgument;
  const uint64_t seq = ++c->seq;
  char path[512];
  path_of(path, sizeof(path), c, seq, c->rank);
  int fd = open(path, O_CREAT | O_WRONLY, 0644);
  if (fd < 0) return ncclSystemError;
  close(fd);
  for (int r = 0; r < c->nranks; ++r) {
    struct stat st;
    path_of(path, sizeof(path), c, seq, r);
    while (stat(path, &st) != 0) {
      const struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
    }
  }
  return ncclSuccess;
}

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  if (id == NULL) return ncclInvalidArgument;
  /* Two words that differ per job: the pid and the time, as NCCL's magic and address do. */
  const uint64_t w[2] = {(uint64_t)getpid() * 0x9e3779b97f4a7c15ULL, (uint64_t)time(NULL)};
  memset(id, 0, sizeof(*id));
  memcpy(id->internal, w, sizeof(w));
  return ncclSuccess;
}

EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  if (comm == NULL || nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
  struct ncclComm* c = calloc(1, sizeof(*c));
  if (c == NULL) return ncclSystemError;
  c->rank = rank;
  c->nranks = nranks;
  memcpy(&c->id0, id.internal, 8);
  memcpy(&c->id1, id.internal + 8, 8);
  *comm = c;
  return ncclSuccess;
}

EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                  ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)count, (void)datatype, (void)op, (void)stream;
  return rendezvous(comm);
}

EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                  int root, ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)count, (void)datatype, (void)root, (void)stream;
  return rendezvous(comm);
}

EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  free(comm);
  return ncclSuccess;
}

EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                  ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)sendcount, (void)datatype, (void)stream;
  return rendezvous(comm);
}

EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (comm == NULL || count == NULL) return ncclInvalidArgument;
  *count = comm->nranks;
  return ncclSuccess;
}

EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (comm == NULL || rank == NULL) return ncclInvalidArgument;
  *rank = comm->rank;
  return ncclSuccess;
}
