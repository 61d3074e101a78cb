// Tight-loop load for the overhead and capture benchmarks: T threads each call a
// CUDA runtime function N times and report the mean cost per call. Without a GPU the
// calls fail fast inside libcudart, which is what makes probe costs visible.
//
// Usage: cuda_loop [--threads T] [--iters N] [--call malloc|free_null|sync] [--wait-file PATH]
// (sync: cudaStreamSynchronize(0), which reaches the driver's cuStreamSynchronize on a GPU)
#include <cuda_runtime_api.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  int threads = 1;
  long iters = 1000000;
  bool free_null = false;
  bool sync = false;
  const char* wait_file = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = std::atol(argv[++i]);
    else if (!std::strcmp(argv[i], "--call") && i + 1 < argc) {
      ++i;
      free_null = !std::strcmp(argv[i], "free_null");
      sync = !std::strcmp(argv[i], "sync");
    } else if (!std::strcmp(argv[i], "--wait-file") && i + 1 < argc)
      wait_file = argv[++i];
  }
  // Warm up: library initialization stays out of the timed loop.
  void* p = nullptr;
  for (int i = 0; i < 1000; ++i) free_null ? (void)cudaFree(nullptr) : (void)cudaMalloc(&p, 256);
  if (wait_file) {
    std::printf("ready %d\n", getpid());
    std::fflush(stdout);
    struct stat st;
    while (stat(wait_file, &st) != 0) usleep(1000);
  }
  std::atomic<int> start{0};
  std::vector<double> ns(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      while (!start.load()) {
      }
      void* q = nullptr;
      auto t0 = std::chrono::steady_clock::now();
      for (long i = 0; i < iters; ++i) {
        if (sync) {
          cudaStreamSynchronize(nullptr);
        } else if (free_null) {
          cudaFree(nullptr);
        } else {
          cudaMalloc(&q, 256);
        }
      }
      auto t1 = std::chrono::steady_clock::now();
      ns[static_cast<std::size_t>(t)] =
          std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(iters);
    });
  }
  start.store(1);
  for (auto& th : pool) th.join();
  double sum = 0;
  for (double v : ns) sum += v;
  std::printf("threads=%d iters=%ld calls=%ld ns_per_call=%.1f\n", threads, iters,
              static_cast<long>(threads) * iters + 1000, sum / threads);
  return 0;
}
