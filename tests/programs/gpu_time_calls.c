// Test program for GPU time through libeacgm_hook.so, against the FAKE libcuda named on
// the command line (tests/fakes/fake_libcuda: each launch is $EACGM_FAKE_KERNEL_US of
// pretend GPU work, and event pairs time it exactly). Run with LD_PRELOAD=libeacgm_hook.so
// and EACGM_GPU_TIME=1 (what `eacgm run --gpu-time` sets).
//
// On device 0's primary context:
//   stream 0x5000: 200 launches of _Z7kernelAPf (kernelA(float*));
//   stream 0x6000: 7 launches of ncclDevKernel_AllReduce_Sum_f32_RING_LL;
//   stream 0x7000: captured: 2 launches of the NCCL kernel (counted, never timed);
//   stream 0x8000: a graph launched 3 times;
// then synchronizes and waits 400 ms, so that the hook's timing thread reads the events
// back and writes the counts before the program exits.
//
// Usage: gpu_time_calls LIBCUDA_PATH
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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
  void* nccl = NULL;
  if (init(0) != 0 || retain(&ctx, 0) != 0 || set_current(ctx) != 0 ||
      get_function(&kernel, NULL, "_Z7kernelAPf") != 0 ||
      get_function(&nccl, NULL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL") != 0) {
    fprintf(stderr, "gpu_time_calls: set-up failed\n");
    return 1;
  }
  int failed = 0;
  for (int i = 0; i < 200; ++i)
    failed += launch(kernel, 1, 1, 1, 32, 1, 1, 0, (void*)0x5000, NULL, NULL) != 0;
  for (int i = 0; i < 7; ++i) failed += launch(nccl, 1, 1, 1, 32, 1, 1, 0, (void*)0x6000, NULL, NULL) != 0;
  void* graph = NULL;
  void* exec = NULL;
  failed += begin_capture((void*)0x7000, 0) != 0;
  for (int i = 0; i < 2; ++i) failed += launch(nccl, 1, 1, 1, 32, 1, 1, 0, (void*)0x7000, NULL, NULL) != 0;
  failed += end_capture((void*)0x7000, &graph) != 0;
  failed += instantiate(&exec, graph, 0) != 0;
  for (int i = 0; i < 3; ++i) failed += graph_launch(exec, (void*)0x8000) != 0;
  failed += sync() != 0;
  struct timespec wait = {0, 400 * 1000 * 1000};
  nanosleep(&wait, NULL);
  printf("failed=%d\n", failed);
  return failed == 0 ? 0 : 1;
}
