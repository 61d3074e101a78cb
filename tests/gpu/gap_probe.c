// Device probe of what a CUDA event pair adds to a kernel queued behind earlier work (the
// hook's dispatch gap, src/govern/hook/dispatch_gap.cpp), one factor at a time, through
// libcuda only: the span of an event pair around a 1x1 kernel behind a spinning kernel,
// median of ROUNDS, for each of
//   stream: the hook's own (cuStreamCreate, non-blocking) or the legacy default stream;
//   spin:   50 us (the hook's) or 400 us;
//   kernel: empty, or one that stores a word; loaded as a module function
//           (cuModuleLoadData, the hook's way) or as a library kernel (cuLibraryLoadData,
//           a CUkernel: how the CUDA 12+ runtime launches PyTorch's kernels).
// The profiler's figure for an empty kernel (tests/gpu/empty_kernel_time.py) is what the
// hook subtracts from the empty kernel's span.
// Build: cc -O2 -I/usr/local/cuda/include -o gap_probe tests/gpu/gap_probe.c -ldl
// Usage: gap_probe [ROUNDS]
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static const char kPtx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry spin(.param .u64 ns)\n{\n .reg .u64 %t0, %t1, %d, %lim;\n .reg .pred %p;\n"
    " ld.param.u64 %lim, [ns];\n mov.u64 %t0, %globaltimer;\nSPIN:\n mov.u64 %t1, %globaltimer;\n"
    " sub.u64 %d, %t1, %t0;\n setp.lt.u64 %p, %d, %lim;\n @%p bra SPIN;\n ret;\n}\n"
    ".visible .entry empty()\n{\n ret;\n}\n"
    ".visible .entry store(.param .u64 p)\n{\n .reg .u64 %a;\n .reg .u32 %v;\n ld.param.u64 %a, [p];\n"
    " mov.u32 %v, 1;\n st.global.u32 [%a], %v;\n ret;\n}\n";

#define LOAD(name) name##_t p_##name = (name##_t)dlsym(lib, #name)
typedef CUresult (*cuInit_t)(unsigned);
typedef CUresult (*cuDeviceGet_t)(CUdevice*, int);
typedef CUresult (*cuDevicePrimaryCtxRetain_t)(CUcontext*, CUdevice);
typedef CUresult (*cuCtxSetCurrent_t)(CUcontext);
typedef CUresult (*cuModuleLoadData_t)(CUmodule*, const void*);
typedef CUresult (*cuModuleGetFunction_t)(CUfunction*, CUmodule, const char*);
typedef CUresult (*cuLibraryLoadData_t)(CUlibrary*, const void*, CUjit_option*, void**, unsigned,
                                        CUlibraryOption*, void**, unsigned);
typedef CUresult (*cuLibraryGetKernel_t)(CUkernel*, CUlibrary, const char*);
typedef CUresult (*cuLaunchKernel_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, CUstream, void**, void**);
typedef CUresult (*cuEventCreate_t)(CUevent*, unsigned);
typedef CUresult (*cuEventRecord_t)(CUevent, CUstream);
typedef CUresult (*cuEventSynchronize_t)(CUevent);
typedef CUresult (*cuEventElapsedTime_t)(float*, CUevent, CUevent);
typedef CUresult (*cuStreamCreate_t)(CUstream*, unsigned);
typedef CUresult (*cuMemAlloc_v2_t)(CUdeviceptr*, size_t);

static int cmp(const void* a, const void* b) {
  float x = *(const float*)a, y = *(const float*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 200;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == NULL) {
    fprintf(stderr, "gap_probe: %s\n", dlerror());
    return 77;
  }
  LOAD(cuInit);
  LOAD(cuDeviceGet);
  LOAD(cuDevicePrimaryCtxRetain);
  LOAD(cuCtxSetCurrent);
  LOAD(cuModuleLoadData);
  LOAD(cuModuleGetFunction);
  LOAD(cuLibraryLoadData);
  LOAD(cuLibraryGetKernel);
  LOAD(cuLaunchKernel);
  LOAD(cuEventCreate);
  LOAD(cuEventRecord);
  LOAD(cuEventSynchronize);
  cuEventElapsedTime_t p_cuEventElapsedTime = (cuEventElapsedTime_t)dlsym(lib, "cuEventElapsedTime_v2");
  if (p_cuEventElapsedTime == NULL)
    p_cuEventElapsedTime = (cuEventElapsedTime_t)dlsym(lib, "cuEventElapsedTime");
  LOAD(cuStreamCreate);
  LOAD(cuMemAlloc_v2);
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUlibrary library;
  CUfunction spin, fn[2];
  CUkernel kn[2];
  CUstream own;
  CUevent start, end;
  CUdeviceptr word;
  if (p_cuInit(0) || p_cuDeviceGet(&dev, 0) || p_cuDevicePrimaryCtxRetain(&ctx, dev) ||
      p_cuCtxSetCurrent(ctx) || p_cuModuleLoadData(&mod, kPtx) || p_cuModuleGetFunction(&spin, mod, "spin") ||
      p_cuModuleGetFunction(&fn[0], mod, "empty") || p_cuModuleGetFunction(&fn[1], mod, "store") ||
      p_cuLibraryLoadData(&library, kPtx, NULL, NULL, 0, NULL, NULL, 0) ||
      p_cuLibraryGetKernel(&kn[0], library, "empty") || p_cuLibraryGetKernel(&kn[1], library, "store") ||
      p_cuStreamCreate(&own, CU_STREAM_NON_BLOCKING) || p_cuEventCreate(&start, CU_EVENT_DEFAULT) ||
      p_cuEventCreate(&end, CU_EVENT_DEFAULT) || p_cuMemAlloc_v2(&word, 4)) {
    fprintf(stderr, "gap_probe: set-up failed\n");
    return 1;
  }
  float* spans = malloc(sizeof(float) * (size_t)rounds);
  printf("%-10s %-7s %-6s %-8s %10s %10s %10s\n", "stream", "spin", "kernel", "handle", "p10_us", "p50_us",
         "p90_us");
  for (int s = 0; s < 2; ++s)
    for (int h = 0; h < 2; ++h)
      for (int k = 0; k < 2; ++k)
        for (int l = 0; l < 2; ++l) {
          CUstream stream = s == 0 ? own : NULL;
          unsigned long long hold = l == 0 ? 50000ull : 400000ull;
          CUfunction f = h == 0 ? fn[k] : (CUfunction)kn[k];
          for (int r = 0; r < rounds + 5; ++r) {
            void* spin_args[] = {&hold};
            void* store_args[] = {&word};
            float ms = 0;
            if (p_cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, stream, spin_args, NULL) ||
                p_cuEventRecord(start, stream) ||
                p_cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, k == 1 ? store_args : NULL, NULL) ||
                p_cuEventRecord(end, stream) || p_cuEventSynchronize(end) ||
                p_cuEventElapsedTime(&ms, start, end)) {
              fprintf(stderr, "gap_probe: a step failed\n");
              return 1;
            }
            if (r >= 5) spans[r - 5] = ms * 1000.0f;
          }
          qsort(spans, (size_t)rounds, sizeof(float), cmp);
          printf("%-10s %-7s %-6s %-8s %10.3f %10.3f %10.3f\n", s == 0 ? "own" : "legacy",
                 l == 0 ? "50us" : "400us", k == 0 ? "empty" : "store", h == 0 ? "module" : "library",
                 spans[rounds / 10], spans[rounds / 2], spans[9 * rounds / 10]);
        }
  return 0;
}
