/* The ranks of one NCCL communicator as forked processes (linked to the FAKE libnccl,
 * tests/fakes/fake_libnccl): the parent makes the id, each child creates its rank and runs
 * CALLS all-reduces of 1024 floats; rank STOP_RANK stops STOP_S seconds before all-reduce
 * number STOP_AT (from 0) while the others wait inside it until it comes, as NCCL ranks
 * whose peer is late do. The parent prints "ready PID" and waits for WAIT_FILE (the
 * tracer attaches to the library meanwhile); each child prints "rank R pid P" once its
 * communicator exists; the parent waits for them all.
 *
 * Usage: nccl_fork_ranks WAIT_FILE NRANKS CALLS STOP_RANK STOP_AT STOP_S */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
  char internal[128];
} ncclUniqueId;
typedef struct fake_comm* ncclComm_t;
int ncclGetUniqueId(ncclUniqueId* id);
int ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank);
int ncclCommDestroy(ncclComm_t comm);
int ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, int datatype, int op, ncclComm_t comm,
                  void* stream);

enum { kFloat32 = 7, kSum = 0 };

static int run_rank(ncclUniqueId id, int nranks, int rank, int calls, int stop_rank, int stop_at,
                    int stop_s) {
  ncclComm_t comm = NULL;
  if (ncclCommInitRank(&comm, nranks, id, rank) != 0) return 1;
  printf("rank %d pid %d\n", rank, (int)getpid());
  fflush(stdout);
  for (int i = 0; i < calls; ++i) {
    if (i == stop_at && rank == stop_rank) sleep((unsigned)stop_s);
    if (ncclAllReduce((void*)0x1000, (void*)0x2000, 1024, kFloat32, kSum, comm, NULL) != 0) return 1;
    usleep(2000);
  }
  ncclCommDestroy(comm);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: nccl_fork_ranks WAIT_FILE NRANKS CALLS STOP_RANK STOP_AT STOP_S\n");
    return 2;
  }
  const int nranks = atoi(argv[2]), calls = atoi(argv[3]), stop_rank = atoi(argv[4]), stop_at = atoi(argv[5]),
            stop_s = atoi(argv[6]);
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  struct stat st;
  while (stat(argv[1], &st) != 0) usleep(20000);
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  /* The collectives' rendezvous files beside the wait file; the ranks that arrive wait
   * inside the collective their peer stops before until it comes. */
  char dir[4096];
  snprintf(dir, sizeof(dir), "%s", argv[1]);
  char* slash = strrchr(dir, '/');
  if (slash != NULL) *slash = 0;
  setenv("EACGM_FAKE_NCCL_DIR", slash != NULL ? dir : ".", 0);
  for (int r = 0; r < nranks; ++r) {
    if (fork() == 0) _exit(run_rank(id, nranks, r, calls, stop_rank, stop_at, stop_s));
  }
  int failed = 0, status = 0;
  while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  return failed;
}
