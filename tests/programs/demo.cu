// eacgm-demo: a small CUDA program that `make run` starts beside the tracer, so a new
// user sees events at once. Without a GPU every call fails, and the probes still fire.
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

static int iteration() {
  const int n = 1 << 20;
  float* d = nullptr;
  cudaError_t err = cudaMalloc(reinterpret_cast<void**>(&d), n * sizeof(float));
  static float host[1 << 20];
  cudaMemcpy(d, host, n * sizeof(float), cudaMemcpyHostToDevice);
  scale<<<(n + 255) / 256, 256>>>(d, 2.0f, n);
  cudaDeviceSynchronize();
  cudaMemcpy(host, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  return err;
}

int main(int argc, char** argv) {
  bool loop = argc > 1 && std::strcmp(argv[1], "--loop") == 0;
  int said = -1;  // the agent's lines (the web UI's address) stay readable: say each outcome once
  do {
    int err = iteration();
    if (err != said) {
      std::fprintf(stderr, "eacgm-demo: %s (cudaMalloc returned %d: %s)\n",
                   loop ? "looping, once a second" : "one iteration", err,
                   cudaGetErrorString(static_cast<cudaError_t>(err)));
      said = err;
    }
    if (loop) sleep(1);
  } while (loop);
  return 0;
}
