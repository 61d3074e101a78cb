/* Calls in flight, for the tests: on a thread of its own, SHORT calls of block_wait()
 * (libeacgm_block) of SHORT_MS each (indices 0..SHORT-1), then one of LONG_MS (index
 * 1000000), through block_outer() with --nested. Prints "ready PID" (then waits for
 * --wait-file), "long_start TID" and "long_end", and with --done-file waits for that file
 * before exiting.
 * With --cuda LIBCUDA_PATH (the tests' FAKE libcuda) the long call is instead a
 * cuStreamSynchronize on stream 0x5eed after a launch that queues LONG_MS of pretend
 * GPU work.
 * Usage: block_calls [--wait-file PATH] [--done-file PATH] [--cuda LIBCUDA_PATH] [--nested 1]
 *                    SHORT SHORT_MS LONG_MS */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int block_wait(long index, long ms);
int block_outer(long index, long ms);

static long short_calls, short_ms, long_ms;
static const char* libcuda;
static int nested;

typedef int (*launch_fn)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                         void**, void**);
typedef int (*sync_fn)(void*);

static void wait_for_file(const char* path) {
  struct stat st;
  while (stat(path, &st) != 0) usleep(2000);
}

static int cuda_wait(void) {
  char us[32];
  snprintf(us, sizeof(us), "%ld", long_ms * 1000);
  setenv("EACGM_FAKE_KERNEL_US", us, 1);
  void* lib = dlopen(libcuda, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) return 1;
  launch_fn launch = (launch_fn)dlsym(lib, "cuLaunchKernel");
  sync_fn stream_sync = (sync_fn)dlsym(lib, "cuStreamSynchronize");
  if (!launch || !stream_sync) return 1;
  static int kernel;
  launch(&kernel, 1, 1, 1, 1, 1, 1, 0, (void*)0x5eed, NULL, NULL);
  printf("long_start %d\n", (int)gettid());
  fflush(stdout);
  stream_sync((void*)0x5eed);
  return 0;
}

static void* work(void* arg) {
  (void)arg;
  for (long i = 0; i < short_calls; ++i) block_wait(i, short_ms);
  if (libcuda) {
    if (cuda_wait() != 0) {
      fprintf(stderr, "cannot call the FAKE libcuda\n");
      exit(1);
    }
  } else {
    printf("long_start %d\n", (int)gettid());
    fflush(stdout);
    if (nested) {
      block_outer(1000000, long_ms);
    } else {
      block_wait(1000000, long_ms);
    }
  }
  printf("long_end\n");
  fflush(stdout);
  return NULL;
}

int main(int argc, char** argv) {
  const char* wait_file = NULL;
  const char* done_file = NULL;
  int i = 1;
  for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
    if (!strcmp(argv[i], "--wait-file")) {
      wait_file = argv[i + 1];
    } else if (!strcmp(argv[i], "--done-file")) {
      done_file = argv[i + 1];
    } else if (!strcmp(argv[i], "--cuda")) {
      libcuda = argv[i + 1];
    } else if (!strcmp(argv[i], "--nested")) {
      nested = atoi(argv[i + 1]);
    } else {
      break;
    }
  }
  if (argc - i != 3) {
    fprintf(
        stderr,
        "usage: block_calls [--wait-file PATH] [--done-file PATH] [--cuda LIBCUDA_PATH] [--nested 1] SHORT "
        "SHORT_MS LONG_MS\n");
    return 2;
  }
  short_calls = atol(argv[i]);
  short_ms = atol(argv[i + 1]);
  long_ms = atol(argv[i + 2]);
  if (libcuda && dlopen(libcuda, RTLD_NOW | RTLD_LOCAL) == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  if (wait_file) wait_for_file(wait_file);
  pthread_t t;
  if (pthread_create(&t, NULL, work, NULL) != 0) return 1;
  pthread_join(t, NULL);
  if (done_file) wait_for_file(done_file);
  return 0;
}
