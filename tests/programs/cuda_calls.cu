// Test program for the integration tests: calls each API of the CUDA runtime catalog a
// known number of times with known arguments, and prints what it did (the ground
// truth the tests compare eacgm's events with). Without a GPU the calls fail fast,
// but they still enter libcudart, so the probes fire.
//
// Usage: cuda_calls [--wait-file PATH] [--repeat N] [--exit-file PATH]
//                   [--driver LIBCUDA --driver-after R] [--gpu]
//   --wait-file: print "ready <pid>" and wait until PATH exists before calling.
//   --exit-file: print "calls done" and wait until PATH exists before exiting (so a
//                tracer can still read /proc/<pid>/maps for names).
//   --driver: before repetition R (default 0), dlopen LIBCUDA (a driver found late, as
//             one outside the loader cache is), and from then on also make 3 launches
//             per repetition through its cuLaunchKernel, as the runtime's would reach it.
//   --gpu: the same calls, safe on a real GPU: the default stream instead of the made-up
//          0x5000 (which the runtime would read as a stream object and crash on). The
//          copies to and from made-up addresses still fail, as they do without a GPU.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void probe_kernel(int* out) {
  if (out != nullptr) *out = 1;
}

static void wait_for(const char* path) {
  struct stat st;
  while (stat(path, &st) != 0) usleep(2000);
}

int main(int argc, char** argv) {
  const char* wait_file = nullptr;
  const char* exit_file = nullptr;
  int repeat = 1;
  const char* driver = nullptr;
  int driver_after = 0;
  bool gpu = false;
  using CuLaunchKernel = int (*)(const void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 unsigned, void*, void**, void**);
  CuLaunchKernel cu_launch_kernel = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--wait-file") && i + 1 < argc) wait_file = argv[++i];
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--exit-file") && i + 1 < argc) exit_file = argv[++i];
    if (!std::strcmp(argv[i], "--driver") && i + 1 < argc) driver = argv[++i];
    if (!std::strcmp(argv[i], "--driver-after") && i + 1 < argc) driver_after = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--gpu")) gpu = true;
  }
  if (wait_file) {
    std::printf("ready %d\n", getpid());
    std::fflush(stdout);
    wait_for(wait_file);
  }
  void* fake_stream = gpu ? nullptr : reinterpret_cast<void*>(0x5000);
  for (int r = 0; r < repeat; ++r) {
    if (driver && r == driver_after) {
      void* lib = dlopen(driver, RTLD_NOW | RTLD_LOCAL);
      cu_launch_kernel = lib ? reinterpret_cast<CuLaunchKernel>(dlsym(lib, "cuLaunchKernel")) : nullptr;
      if (!cu_launch_kernel) {
        std::fprintf(stderr, "cuda_calls: no cuLaunchKernel in %s\n", driver);
        return 3;
      }
    }
    // 3 driver launches (same shape and stream as the runtime's) once the driver is loaded.
    for (int i = 0; cu_launch_kernel && i < 3; ++i) {
      std::printf("cuLaunchKernel ret=%d\n", cu_launch_kernel(reinterpret_cast<const void*>(0xf00d), 2, 3, 4,
                                                              32, 4, 1, 128, fake_stream, nullptr, nullptr));
    }
    // 3 launches: grid (2,3,4), block (32,4,1), 128 B shared memory, stream 0x5000.
    for (int i = 0; i < 3; ++i) {
      int* out = nullptr;
      void* args[] = {&out};
      cudaError_t e = cudaLaunchKernel(reinterpret_cast<const void*>(probe_kernel), dim3(2, 3, 4),
                                       dim3(32, 4, 1), args, 128, static_cast<cudaStream_t>(fake_stream));
      std::printf("cudaLaunchKernel ret=%d\n", static_cast<int>(e));
    }
    // 2 allocations of 1 MiB and 4096 B, then 2 frees.
    void* p1 = nullptr;
    void* p2 = nullptr;
    std::printf("cudaMalloc ret=%d\n", static_cast<int>(cudaMalloc(&p1, 1 << 20)));
    std::printf("cudaMalloc ret=%d\n", static_cast<int>(cudaMalloc(&p2, 4096)));
    std::printf("cudaFree ret=%d\n", static_cast<int>(cudaFree(p1)));
    std::printf("cudaFree ret=%d\n", static_cast<int>(cudaFree(p2)));
    // 1 synchronous copy of 65536 B host-to-device, 1 async copy of 8192 B device-to-host.
    static char host[65536];
    std::printf("cudaMemcpy ret=%d\n", static_cast<int>(cudaMemcpy(reinterpret_cast<void*>(0x1000), host,
                                                                   65536, cudaMemcpyHostToDevice)));
    std::printf(
        "cudaMemcpyAsync ret=%d\n",
        static_cast<int>(cudaMemcpyAsync(host, reinterpret_cast<void*>(0x2000), 8192, cudaMemcpyDeviceToHost,
                                         static_cast<cudaStream_t>(fake_stream))));
    std::printf("cudaStreamSynchronize ret=%d\n",
                static_cast<int>(cudaStreamSynchronize(static_cast<cudaStream_t>(fake_stream))));
    std::printf("cudaDeviceSynchronize ret=%d\n", static_cast<int>(cudaDeviceSynchronize()));
  }
  std::fflush(stdout);
  if (exit_file) {
    std::printf("calls done\n");
    std::fflush(stdout);
    wait_for(exit_file);
  }
  return 7;  // a distinctive exit code: `eacgm trace -- CMD` must return it
}
