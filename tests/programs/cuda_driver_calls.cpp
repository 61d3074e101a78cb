// Test program for the integration tests: calls each API of the CUDA driver catalog once
// with known arguments and prints each return code and out-parameter as seen after the
// call (versioned entry points under their exported names, cuMemAlloc_v2). It is linked
// against the toolkit's stub libcuda, whose functions only return
// CUDA_ERROR_STUB_LIBRARY: the calls still enter libcuda, so the probes fire.
//
// Usage: cuda_driver_calls [--wait-file PATH]
#include <cuda.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

static void wait_for(const char* path) {
  struct stat st;
  while (stat(path, &st) != 0) usleep(2000);
}

template <typename T>
static T handle(std::uintptr_t v) {
  return reinterpret_cast<T>(v);
}

#define CALL(name, ...) std::printf(#name " ret=%d\n", static_cast<int>(name(__VA_ARGS__)))
#define OUT(name, var) std::printf(#name " out=0x%llx\n", static_cast<unsigned long long>(var))

int main(int argc, char** argv) {
  const char* wait_file = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--wait-file") && i + 1 < argc) wait_file = argv[++i];
  }
  if (wait_file) {
    std::printf("ready %d\n", getpid());
    std::fflush(stdout);
    wait_for(wait_file);
  }
  CUstream s = handle<CUstream>(0x5000);
  CUfunction f = handle<CUfunction>(0xf00d);
  static char host[4096];
  void* params[] = {nullptr};

  // grid (2,3,4), block (64,2,3): blockDimZ is the first stack argument.
  CALL(cuLaunchKernel, f, 2, 3, 4, 64, 2, 3, 256, s, params, nullptr);
  CUlaunchConfig cfg = {};
  cfg.gridDimX = 7;
  cfg.gridDimY = 8;
  cfg.gridDimZ = 9;
  cfg.blockDimX = 32;
  cfg.blockDimY = 1;
  cfg.blockDimZ = 2;
  cfg.sharedMemBytes = 512;
  cfg.hStream = handle<CUstream>(0x6000);
  CALL(cuLaunchKernelEx, &cfg, handle<CUfunction>(0xf00e), params, nullptr);
  CALL(cuLaunchCooperativeKernel, f, 1, 1, 1, 128, 1, 1, 0, s, params);
  CALL(cuGraphLaunch, handle<CUgraphExec>(0xa000), s);

  CUdeviceptr d = 0x1111;
  CALL(cuMemAlloc_v2, &d, 1 << 20);
  OUT(cuMemAlloc_v2, d);
  d = 0x1112;
  CALL(cuMemAllocAsync, &d, 2048, s);
  OUT(cuMemAllocAsync, d);
  CALL(cuMemFree_v2, 0x2222);
  CALL(cuMemFreeAsync, 0x2223, s);

  CALL(cuMemcpyHtoD_v2, 0x3000, host, 100);
  CALL(cuMemcpyDtoH_v2, host, 0x3001, 200);
  CALL(cuMemcpyDtoD_v2, 0x3002, 0x3003, 300);
  CALL(cuMemcpyHtoDAsync_v2, 0x3000, host, 400, s);
  CALL(cuMemcpyDtoHAsync_v2, host, 0x3001, 500, s);
  CALL(cuMemcpyDtoDAsync_v2, 0x3002, 0x3003, 600, s);
  CALL(cuMemcpyAsync, 0x3004, 0x3005, 700, s);
  CALL(cuMemcpy, 0x3006, 0x3007, 800);
  CUcontext ctx = handle<CUcontext>(0xc000);
  CALL(cuMemcpyPeer, 0x3008, ctx, 0x3009, ctx, 900);
  CALL(cuMemcpyPeerAsync, 0x300a, ctx, 0x300b, ctx, 1000, s);

  CALL(cuStreamSynchronize, s);
  CALL(cuCtxSynchronize);

  CUmemGenericAllocationHandle h = 0x4444;
  CUmemAllocationProp prop = {};
  CALL(cuMemCreate, &h, 1 << 21, &prop, 0);
  OUT(cuMemCreate, h);
  CALL(cuMemMap, 0x50000, 1 << 21, 4096, 0x4444, 0);
  CALL(cuMemUnmap, 0x50000, 1 << 21);
  CALL(cuMemRelease, 0x4444);

  CUfunction got = handle<CUfunction>(0xf100);
  CALL(cuModuleGetFunction, &got, handle<CUmodule>(0x77), "_Z12probe_kernelPi");
  OUT(cuModuleGetFunction, reinterpret_cast<std::uintptr_t>(got));
  CUkernel k = handle<CUkernel>(0xf200);
  CALL(cuLibraryGetKernel, &k, handle<CUlibrary>(0x78), "_Z11lib_kernelv");
  CALL(cuKernelGetFunction, &got, k);
  std::fflush(stdout);
  return 0;
}
