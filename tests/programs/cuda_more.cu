// Test program for the integration tests: calls each API the CUDA runtime catalog added
// beyond cuda_calls (async and host memory, memsets, 2D and peer copies, streams,
// events, graphs, cudaLaunchKernelExC) once with known arguments, and prints each
// return code and the out-parameters as the program saw them after the call. Without
// a GPU the calls fail fast, but they still enter libcudart, so the probes fire.
//
// Usage: cuda_more [--wait-file PATH]
#include <cuda_runtime.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

__global__ void more_kernel(float* out, int n) {
  if (n > 0) *out = 1.0f;
}

static void wait_for(const char* path) {
  struct stat st;
  while (stat(path, &st) != 0) usleep(2000);
}

#define CALL(name, ...) std::printf(#name " ret=%d\n", static_cast<int>(name(__VA_ARGS__)))
#define OUT(name, var) std::printf(#name " out=%p\n", reinterpret_cast<void*>(var))

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
  cudaStream_t s = reinterpret_cast<cudaStream_t>(0x5000);
  cudaEvent_t ev = reinterpret_cast<cudaEvent_t>(0xe000);
  static char host[65536];

  CALL(cudaSetDevice, 3);

  // Out-pointers start at known values; the tracer must report what is there after
  // the call (what the program prints), not before.
  void* p = reinterpret_cast<void*>(0x7001);
  CALL(cudaMallocAsync, &p, 3000, s);
  OUT(cudaMallocAsync, p);
  CALL(cudaFreeAsync, reinterpret_cast<void*>(0x7100), s);
  p = reinterpret_cast<void*>(0x7002);
  CALL(cudaMallocManaged, &p, 5000, cudaMemAttachHost);
  OUT(cudaMallocManaged, p);
  p = reinterpret_cast<void*>(0x7003);
  CALL(cudaMallocHost, &p, 6000);
  OUT(cudaMallocHost, p);
  p = reinterpret_cast<void*>(0x7004);
  CALL(cudaHostAlloc, &p, 7000, cudaHostAllocPortable);
  OUT(cudaHostAlloc, p);
  CALL(cudaFreeHost, reinterpret_cast<void*>(0x7200));

  CALL(cudaMemset, reinterpret_cast<void*>(0x7300), 0x5a, 1111);
  CALL(cudaMemsetAsync, reinterpret_cast<void*>(0x7400), -1, 2222, s);
  CALL(cudaMemset2D, reinterpret_cast<void*>(0x7500), 512, 7, 100, 20);         // 2000 B
  CALL(cudaMemset2DAsync, reinterpret_cast<void*>(0x7600), 256, 3, 30, 40, s);  // 1200 B

  CALL(cudaMemcpy2D, reinterpret_cast<void*>(0x8000), 1024, host, 512, 300, 7,
       cudaMemcpyHostToDevice);  // 2100 B
  CALL(cudaMemcpy2DAsync, host, 128, reinterpret_cast<void*>(0x8100), 256, 64, 9, cudaMemcpyDeviceToHost,
       s);  // 576 B
  CALL(cudaMemcpyPeer, reinterpret_cast<void*>(0x9000), 1, reinterpret_cast<void*>(0x9100), 0, 4444);
  CALL(cudaMemcpyPeerAsync, reinterpret_cast<void*>(0x9200), 0, reinterpret_cast<void*>(0x9300), 1, 5555, s);

  cudaStream_t created = reinterpret_cast<cudaStream_t>(0xa001);
  CALL(cudaStreamCreate, &created);
  OUT(cudaStreamCreate, created);
  created = reinterpret_cast<cudaStream_t>(0xa002);
  CALL(cudaStreamCreateWithFlags, &created, cudaStreamNonBlocking);
  OUT(cudaStreamCreateWithFlags, created);
  created = reinterpret_cast<cudaStream_t>(0xa003);
  CALL(cudaStreamCreateWithPriority, &created, cudaStreamNonBlocking, -2);
  OUT(cudaStreamCreateWithPriority, created);
  CALL(cudaStreamDestroy, reinterpret_cast<cudaStream_t>(0xa100));

  CALL(cudaEventRecord, ev, s);
  CALL(cudaEventSynchronize, ev);
  CALL(cudaEventQuery, ev);
  CALL(cudaStreamWaitEvent, s, ev, 0);
  CALL(cudaGraphLaunch, reinterpret_cast<cudaGraphExec_t>(0xf000), s);

  // grid (5,6,7), block (64,2,1), 256 B dynamic shared memory, stream 0x6000.
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(5, 6, 7);
  cfg.blockDim = dim3(64, 2, 1);
  cfg.dynamicSmemBytes = 256;
  cfg.stream = reinterpret_cast<cudaStream_t>(0x6000);
  float* out = nullptr;
  int n = 1;
  void* args[] = {&out, &n};
  CALL(cudaLaunchKernelExC, &cfg, reinterpret_cast<const void*>(more_kernel), args);
  std::fflush(stdout);
  return 0;
}
