// Test program for the host waits: blocks for known times in each kind of wait eacgm
// reports, and prints what it planted for the test to compare with.
//   futex:      the main thread waits on a condition variable that a second thread
//               signals after 300 ms (pthread_cond_wait: FUTEX_WAIT_BITSET)
//   input_wait: poll on an empty pipe with a 200 ms timeout
// With --cuda LIBCUDA_PATH (the tests' FAKE libcuda, whose synchronizing calls sleep until
// the pretend GPU queue is empty), also one synchronizing call of each kind after a
// launch that queues 100 ms: cuStreamSynchronize, cuCtxSynchronize, cuMemcpyDtoH_v2.
//
// Usage: host_waits [--cuda LIBCUDA_PATH [--wait-file PATH] [--cuda-first]]
//   --wait-file: after the dlopen, print "ready PID" and wait until PATH exists
//   --cuda-first: the synchronizing calls first, then 1.5 s of sleep, then the futex and
//                 poll waits (a daemon tracing the whole machine watches a process's
//                 waits from its first traced call on)
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready;

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static void* signaller(void* arg) {
  (void)arg;
  sleep_ms(300);
  pthread_mutex_lock(&lock);
  ready = 1;
  pthread_cond_signal(&cond);
  pthread_mutex_unlock(&lock);
  return NULL;
}

static int futex_wait(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, signaller, NULL) != 0) return 1;
  pthread_mutex_lock(&lock);
  while (!ready) pthread_cond_wait(&cond, &lock);
  pthread_mutex_unlock(&lock);
  pthread_join(t, NULL);
  printf("futex_wait ms=300\n");
  return 0;
}

static int poll_wait(void) {
  int fds[2];
  if (pipe(fds) != 0) return 1;
  struct pollfd p = {fds[0], POLLIN, 0};
  if (poll(&p, 1, 200) != 0) return 1;  // nothing is written: times out
  close(fds[0]);
  close(fds[1]);
  printf("input_wait ms=200\n");
  return 0;
}

typedef int (*launch_fn)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                         void**, void**);
typedef int (*sync_fn)(void*);
typedef int (*ctx_sync_fn)(void);
typedef int (*copy_fn)(void*, uint64_t, size_t);

static int cuda_waits(const char* libcuda, const char* wait_file) {
  setenv("EACGM_FAKE_KERNEL_US", "100000", 1);  // each launch queues 100 ms
  void* lib = dlopen(libcuda, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  if (wait_file) {
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    struct stat st;
    while (stat(wait_file, &st) != 0) usleep(2000);
  }
  launch_fn launch = (launch_fn)dlsym(lib, "cuLaunchKernel");
  sync_fn stream_sync = (sync_fn)dlsym(lib, "cuStreamSynchronize");
  ctx_sync_fn ctx_sync = (ctx_sync_fn)dlsym(lib, "cuCtxSynchronize");
  copy_fn copy = (copy_fn)dlsym(lib, "cuMemcpyDtoH_v2");
  if (!launch || !stream_sync || !ctx_sync || !copy) {
    fprintf(stderr, "missing symbols\n");
    return 1;
  }
  static int kernel;
  char host[16];
  launch(&kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
  stream_sync(NULL);
  launch(&kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
  ctx_sync();
  launch(&kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
  copy(host, 0x7e0000000000ull, sizeof(host));
  printf("cuda_waits ms=100 each\n");
  return 0;
}

int main(int argc, char** argv) {
  const char* libcuda = NULL;
  const char* wait_file = NULL;
  int cuda_first = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--cuda") && i + 1 < argc) {
      libcuda = argv[++i];
    } else if (!strcmp(argv[i], "--wait-file") && i + 1 < argc) {
      wait_file = argv[++i];
    } else if (!strcmp(argv[i], "--cuda-first")) {
      cuda_first = 1;
    } else {
      fprintf(stderr, "usage: host_waits [--cuda LIBCUDA_PATH [--wait-file PATH] [--cuda-first]]\n");
      return 2;
    }
  }
  if (libcuda && cuda_first) {
    if (cuda_waits(libcuda, wait_file) != 0) return 1;
    sleep_ms(1500);
  }
  if (futex_wait() != 0 || poll_wait() != 0) return 1;
  if (libcuda && !cuda_first && cuda_waits(libcuda, wait_file) != 0) return 1;
  fflush(stdout);
  return 0;
}
