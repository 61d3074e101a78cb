// Test program for GPU-time sampling over a short run, against the FAKE libcuda named on
// the command line: a training-loop shape, KERNELS kernels (step_kernel_00, ...) launched
// once each per step on one stream and a synchronize per step, for SECONDS seconds. With
// $EACGM_FAKE_FIRST_LAUNCH_US each kernel's first launch is slow, as lazy module loading
// makes it on a real GPU. With `alternate`, every other step launches step_kernel_00 last
// instead of first: it finds its stream idle in one step (right after the synchronize) and
// work queued in the next. Run under `eacgm run --gpu-time`.
//
// Usage: gpu_time_steps LIBCUDA_PATH SECONDS KERNELS [alternate]
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*init_fn)(unsigned);
typedef int (*retain_fn)(void**, int);
typedef int (*set_current_fn)(void*);
typedef int (*get_function_fn)(void**, void*, const char*);
typedef int (*launch_fn)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                         void**, void**);
typedef int (*sync_fn)(void);

enum { kMaxKernels = 64 };

static void* must(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (p == NULL) {
    fprintf(stderr, "gpu_time_steps: %s not found\n", name);
    exit(2);
  }
  return p;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  const int alternate = argc == 5 && strcmp(argv[4], "alternate") == 0;
  const double seconds = argc == 4 || alternate ? atof(argv[2]) : 0;
  const int kernels = argc == 4 || alternate ? atoi(argv[3]) : 0;
  if (seconds <= 0 || kernels <= 0 || kernels > kMaxKernels) {
    fprintf(stderr, "usage: gpu_time_steps LIBCUDA_PATH SECONDS KERNELS (1..%d) [alternate]\n", kMaxKernels);
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (lib == NULL) {
    fprintf(stderr, "gpu_time_steps: %s\n", dlerror());
    return 2;
  }
  init_fn init = (init_fn)must(lib, "cuInit");
  retain_fn retain = (retain_fn)must(lib, "cuDevicePrimaryCtxRetain");
  set_current_fn set_current = (set_current_fn)must(lib, "cuCtxSetCurrent");
  get_function_fn get_function = (get_function_fn)must(lib, "cuModuleGetFunction");
  launch_fn launch = (launch_fn)must(lib, "cuLaunchKernel");
  sync_fn sync = (sync_fn)must(lib, "cuCtxSynchronize");

  void* ctx = NULL;
  void* fn[kMaxKernels];
  if (init(0) != 0 || retain(&ctx, 0) != 0 || set_current(ctx) != 0) {
    fprintf(stderr, "gpu_time_steps: set-up failed\n");
    return 1;
  }
  for (int k = 0; k < kernels; ++k) {
    char name[32];
    snprintf(name, sizeof name, "step_kernel_%02d", k);
    if (get_function(&fn[k], NULL, name) != 0) return 1;
  }
  int failed = 0;
  long steps = 0;
  const double end = now_s() + seconds;
  while (now_s() < end) {
    const int last_first = alternate && steps % 2 == 1;  // step_kernel_00 last this step
    for (int i = 0; i < kernels; ++i) {
      const int k = last_first ? (i + 1) % kernels : i;
      failed += launch(fn[k], 1, 1, 1, 32, 1, 1, 0, (void*)0x5000, NULL, NULL) != 0;
    }
    failed += sync() != 0;
    ++steps;
  }
  struct timespec wait = {0, 400 * 1000 * 1000};
  nanosleep(&wait, NULL);
  printf("steps=%ld failed=%d\n", steps, failed);
  return failed == 0 ? 0 : 1;
}
