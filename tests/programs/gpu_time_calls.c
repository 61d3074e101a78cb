// Test program for GPU time through libeacgm_hook.so, against the FAKE libcuda named on
// the command line (tests/fakes/fake_libcuda: each launch is $EACGM_FAKE_KERNEL_US of
// pretend GPU work, and event pairs time it exactly). Run with LD_PRELOAD=libeacgm_hook.so
// and EACGM_GPU_TIME=1 (what `eacgm run --gpu-time` sets).
//
// On device 0's primary context:
//   stream 0x5000: 200 launches of _Z7kernelAPf (kernelA(float*));
//   stream 0x5100: 64 launches of _Z7kernelBPf (kernelB(float*)) on a grid of 1 block of 64
//                  threads, then 64 on a grid of 4 blocks of 128 threads with 256 bytes of
//                  shared memory (with EACGM_FAKE_KERNEL_PER_BLOCK=1 those take 4 times as long);
//   stream 0x6000: 7 launches of ncclDevKernel_AllReduce_Sum_f32_RING_LL;
//   stream 0x7000: captured: 2 launches of the NCCL kernel (counted, never timed);
//   stream 0x8000: a graph launched 3 times;
//   then a 1 MiB buffer: 3 cuMemcpyHtoDAsync_v2 of 4096 bytes, 2 cuMemcpyDtoH_v2 of 1000
//   bytes, 2 cuMemsetD32Async of 1000 words, and its cuMemFree_v2; then a 64 KiB buffer it
//   never frees (a leak);
// With GPU_TIME_CALLS_PAUSED=1 it first sets its ring's `paused` word (as a benchmark does),
// so the hook counts every launch and times none.
// Then it synchronizes and waits 400 ms, so that the hook's timing thread reads the events
// back and writes the counts before the program exits.
//
// Usage: gpu_time_calls LIBCUDA_PATH
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef int (*init_fn)(unsigned);
typedef int (*retain_fn)(void**, int);
typedef int (*set_current_fn)(void*);
typedef int (*get_function_fn)(void**, void*, const char*);
typedef int (*launch_fn)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                         void**, void**);
typedef int (*begin_capture_fn)(void*, int);
typedef int (*end_capture_fn)(void*, void**);
typedef int (*instantiate_fn)(void**, void*, unsigned long long);
typedef int (*graph_launch_fn)(void*, void*);
typedef int (*sync_fn)(void);

static void* must(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (p == NULL) {
    fprintf(stderr, "gpu_time_calls: %s not found\n", name);
    exit(2);
  }
  return p;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: gpu_time_calls LIBCUDA_PATH\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (lib == NULL) {
    fprintf(stderr, "gpu_time_calls: %s\n", dlerror());
    return 2;
  }
  init_fn init = (init_fn)must(lib, "cuInit");
  retain_fn retain = (retain_fn)must(lib, "cuDevicePrimaryCtxRetain");
  set_current_fn set_current = (set_current_fn)must(lib, "cuCtxSetCurrent");
  get_function_fn get_function = (get_function_fn)must(lib, "cuModuleGetFunction");
  launch_fn launch = (launch_fn)must(lib, "cuLaunchKernel");
  begin_capture_fn begin_capture = (begin_capture_fn)must(lib, "cuStreamBeginCapture_v2");
  end_capture_fn end_capture = (end_capture_fn)must(lib, "cuStreamEndCapture");
  instantiate_fn instantiate = (instantiate_fn)must(lib, "cuGraphInstantiateWithFlags");
  graph_launch_fn graph_launch = (graph_launch_fn)must(lib, "cuGraphLaunch");
  sync_fn sync = (sync_fn)must(lib, "cuCtxSynchronize");

  void* ctx = NULL;
  void* kernel = NULL;
  void* kernel_b = NULL;
  void* nccl = NULL;
  if (init(0) != 0 || retain(&ctx, 0) != 0 || set_current(ctx) != 0 ||
      get_function(&kernel, NULL, "_Z7kernelAPf") != 0 ||
      get_function(&kernel_b, NULL, "_Z7kernelBPf") != 0 ||
      get_function(&nccl, NULL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL") != 0) {
    fprintf(stderr, "gpu_time_calls: set-up failed\n");
    return 1;
  }
  int failed = 0;
  if (getenv("GPU_TIME_CALLS_PAUSED") != NULL) {
    // An allocation sets the hook up (and its ring) before any launch.
    typedef int (*alloc_fn)(uint64_t*, size_t);
    uint64_t dptr = 0;
    if (((alloc_fn)must(lib, "cuMemAlloc_v2"))(&dptr, 1 << 20) != 0) return 1;
    char path[64];
    snprintf(path, sizeof path, "/dev/shm/eacgm-gpu-time.%d", (int)getpid());
    int fd = open(path, O_RDWR);
    void* ring = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ring == MAP_FAILED) {
      fprintf(stderr, "gpu_time_calls: cannot map %s\n", path);
      return 1;
    }
    __atomic_store_n((uint32_t*)((char*)ring + 256), 1u, __ATOMIC_RELEASE);  // kPausedOffset
    close(fd);
  }
  for (int i = 0; i < 200; ++i)
    failed += launch(kernel, 1, 1, 1, 32, 1, 1, 0, (void*)0x5000, NULL, NULL) != 0;
  for (int i = 0; i < 64; ++i)
    failed += launch(kernel_b, 1, 1, 1, 64, 1, 1, 0, (void*)0x5100, NULL, NULL) != 0;
  for (int i = 0; i < 64; ++i)
    failed += launch(kernel_b, 4, 1, 1, 128, 1, 1, 256, (void*)0x5100, NULL, NULL) != 0;
  for (int i = 0; i < 7; ++i) failed += launch(nccl, 1, 1, 1, 32, 1, 1, 0, (void*)0x6000, NULL, NULL) != 0;
  void* graph = NULL;
  void* exec = NULL;
  failed += begin_capture((void*)0x7000, 0) != 0;
  for (int i = 0; i < 2; ++i) failed += launch(nccl, 1, 1, 1, 32, 1, 1, 0, (void*)0x7000, NULL, NULL) != 0;
  failed += end_capture((void*)0x7000, &graph) != 0;
  failed += instantiate(&exec, graph, 0) != 0;
  for (int i = 0; i < 3; ++i) failed += graph_launch(exec, (void*)0x8000) != 0;
  // Memory calls, which a process on its own copy of the driver has counted by its hook.
  typedef int (*free_fn)(uint64_t);
  typedef int (*htod_async_fn)(uint64_t, const void*, size_t, void*);
  typedef int (*dtoh_fn)(void*, uint64_t, size_t);
  typedef int (*memset_async_fn)(uint64_t, unsigned, size_t, void*);
  typedef int (*alloc_fn)(uint64_t*, size_t);
  static char host[4096];
  uint64_t buffer = 0;
  failed += ((alloc_fn)must(lib, "cuMemAlloc_v2"))(&buffer, 1 << 20) != 0;
  htod_async_fn htod = (htod_async_fn)must(lib, "cuMemcpyHtoDAsync_v2");
  for (int i = 0; i < 3; ++i) failed += htod(buffer, host, sizeof host, (void*)0x5000) != 0;
  dtoh_fn dtoh = (dtoh_fn)must(lib, "cuMemcpyDtoH_v2");
  for (int i = 0; i < 2; ++i) failed += dtoh(host, buffer, 1000) != 0;
  memset_async_fn memset_async = (memset_async_fn)must(lib, "cuMemsetD32Async");
  for (int i = 0; i < 2; ++i) failed += memset_async(buffer, 0, 1000, (void*)0x5000) != 0;
  failed += ((free_fn)must(lib, "cuMemFree_v2"))(buffer) != 0;
  uint64_t leaked = 0;
  failed += ((alloc_fn)must(lib, "cuMemAlloc_v2"))(&leaked, 65536) != 0;
  failed += sync() != 0;
  struct timespec wait = {0, 400 * 1000 * 1000};
  nanosleep(&wait, NULL);
  printf("failed=%d\n", failed);
  return failed == 0 ? 0 : 1;
}
