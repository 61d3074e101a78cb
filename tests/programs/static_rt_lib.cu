// A shared library with the CUDA runtime linked in statically (as cuBLAS and cuDNN carry
// theirs): static_rt_work issues a memset, a copy and a launch through that runtime (they
// fail without a GPU, after being traced), then a memset and a copy through the driver
// API of the libcuda.so.1 named (the tests' FAKE one, where they succeed). Prints
// "NAME ret=N" lines.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>

__global__ void static_rt_lib_kernel(int* out) {
  if (out != nullptr) out[0] = 1;
}

extern "C" __attribute__((visibility("default"))) int static_rt_work(const char* libcuda) {
  static char host[2000];
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(0x1000);
  std::printf("cudaMemsetAsync ret=%d\n", static_cast<int>(cudaMemsetAsync(host, 0, 1000, stream)));
  std::printf("cudaMemcpyAsync ret=%d\n",
              static_cast<int>(cudaMemcpyAsync(host, host + 1000, 700, cudaMemcpyHostToDevice, stream)));
  static_rt_lib_kernel<<<1, 1, 0, stream>>>(nullptr);
  std::printf("cudaLaunchKernel ret=%d\n", static_cast<int>(cudaGetLastError()));
  void* lib = dlopen(libcuda, RTLD_NOW);
  if (lib == nullptr) return 2;
  using memset_fn = int (*)(std::uint64_t, unsigned, size_t, void*);
  using copy_fn = int (*)(std::uint64_t, const void*, size_t, void*);
  auto memset_d32 = reinterpret_cast<memset_fn>(dlsym(lib, "cuMemsetD32Async"));
  auto htod = reinterpret_cast<copy_fn>(dlsym(lib, "cuMemcpyHtoDAsync_v2"));
  if (memset_d32 == nullptr || htod == nullptr) return 2;
  std::printf("cuMemsetD32Async ret=%d\n", memset_d32(0x7e0000000000ull, 0, 50, stream));
  std::printf("cuMemcpyHtoDAsync_v2 ret=%d\n", htod(0x7e0000000000ull, host, 300, stream));
  return 0;
}
