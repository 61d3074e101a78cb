/* One rank of a communicator, for the cross-node hang tests: dlopens the FAKE libnccl
 * (tests/fakes/fake_libnccl) by path, prints "ready PID" and waits for the go file, creates
 * its communicator (the id's first two words from the command line), then calls COUNT
 * all-reduces 20 ms apart; with --stop-before K it stops before the K-th (1-based),
 * printing "stopped K", until the release file exists. Then prints "finished" and waits for
 * the done file before it exits.
 * Usage: nccl_ranks LIBNCCL RANK NRANKS ID0 ID1 COUNT GO_FILE DONE_FILE
 *                   [--stop-before K RELEASE_FILE] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
  char internal[128];
} ncclUniqueId;
typedef int (*init_fn)(void**, int, ncclUniqueId, int);
typedef int (*allreduce_fn)(const void*, void*, size_t, int, int, void*, void*);
typedef int (*destroy_fn)(void*);

static void wait_for_file(const char* path) {
  struct stat st;
  while (stat(path, &st) != 0) usleep(2000);
}

int main(int argc, char** argv) {
  if (argc != 9 && argc != 12) {
    fprintf(
        stderr,
        "usage: nccl_ranks LIBNCCL RANK NRANKS ID0 ID1 COUNT GO_FILE DONE_FILE [--stop-before K RELEASE]\n");
    return 2;
  }
  const int rank = atoi(argv[2]), nranks = atoi(argv[3]), count = atoi(argv[6]);
  const int stop_before = argc == 12 ? atoi(argv[10]) : 0;
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "cannot open %s: %s\n", argv[1], dlerror());
    return 1;
  }
  init_fn init = (init_fn)dlsym(lib, "ncclCommInitRank");
  allreduce_fn allreduce = (allreduce_fn)dlsym(lib, "ncclAllReduce");
  destroy_fn destroy = (destroy_fn)dlsym(lib, "ncclCommDestroy");
  if (!init || !allreduce || !destroy) return 1;
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  wait_for_file(argv[7]);

  ncclUniqueId id;
  memset(&id, 0, sizeof(id));
  const uint64_t w0 = strtoull(argv[4], NULL, 16), w1 = strtoull(argv[5], NULL, 16);
  memcpy(id.internal, &w0, 8);
  memcpy(id.internal + 8, &w1, 8);
  void* comm = NULL;
  if (init(&comm, nranks, id, rank) != 0) return 1;
  for (int k = 1; k <= count; ++k) {
    if (k == stop_before) {
      printf("stopped %d\n", k);
      fflush(stdout);
      wait_for_file(argv[11]);
    }
    if (allreduce((void*)0x1000, (void*)0x2000, 1024, 7, 0, comm, NULL) != 0) return 1;
    usleep(20000);
  }
  printf("finished\n");
  fflush(stdout);
  wait_for_file(argv[8]);
  destroy(comm);
  return 0;
}
