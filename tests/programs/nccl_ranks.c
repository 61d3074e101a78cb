/* One rank of a communicator, for the cross-node hang tests: dlopens the FAKE libnccl
 * (tests/fakes/fake_libnccl) by path, prints "ready PID" and waits for the go file, creates
 * its communicator (the id's first two words from the command line), then calls COUNT
 * all-reduces on one schedule shared by every rank: the K-th (from 0) at the go file's
 * modification time + 100 ms + K x 20 ms (a rank behind its schedule calls at once); with
 * --late MS this rank calls MS later than the schedule each time (a straggler); with
 * --stop-before K it stops before the K-th (1-based), printing "stopped K", until the
 * release file exists. Then prints "finished" and waits for the done file before it exits.
 * Usage: nccl_ranks LIBNCCL RANK NRANKS ID0 ID1 COUNT GO_FILE DONE_FILE
 *                   [--stop-before K RELEASE_FILE] [--late MS] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

static int usage(void) {
  fprintf(stderr,
          "usage: nccl_ranks LIBNCCL RANK NRANKS ID0 ID1 COUNT GO_FILE DONE_FILE [--stop-before K RELEASE] "
          "[--late MS]\n");
  return 2;
}

int main(int argc, char** argv) {
  if (argc < 9) return usage();
  const int rank = atoi(argv[2]), nranks = atoi(argv[3]), count = atoi(argv[6]);
  int stop_before = 0;
  const char* release = NULL;
  long late_ms = 0;
  for (int i = 9; i < argc; ++i) {
    if (strcmp(argv[i], "--stop-before") == 0 && i + 2 < argc) {
      stop_before = atoi(argv[i + 1]);
      release = argv[i + 2];
      i += 2;
    } else if (strcmp(argv[i], "--late") == 0 && i + 1 < argc) {
      late_ms = atol(argv[++i]);
    } else {
      return usage();
    }
  }
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
  struct stat go;
  if (stat(argv[7], &go) != 0) return 1;
  const long long start_ns = (long long)go.st_mtim.tv_sec * 1000000000LL + go.st_mtim.tv_nsec + 100000000LL;
  for (int k = 1; k <= count; ++k) {
    if (k == stop_before) {
      printf("stopped %d\n", k);
      fflush(stdout);
      wait_for_file(release);
    }
    const long long at = start_ns + (long long)(k - 1) * 20000000LL + late_ms * 1000000LL;
    struct timespec ts = {(time_t)(at / 1000000000LL), (long)(at % 1000000000LL)};
    clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL);
    if (allreduce((void*)0x1000, (void*)0x2000, 1024, 7, 0, comm, NULL) != 0) return 1;
  }
  printf("finished\n");
  fflush(stdout);
  wait_for_file(argv[8]);
  destroy(comm);
  return 0;
}
