// Test program for the hook's pool of CUDA events, against the FAKE libcuda named on the
// command line (which counts the events cuEventCreate made, per thread). Run with
// LD_PRELOAD=libeacgm_hook.so and EACGM_GPU_TIME=1. On device 0's primary context, an NCCL
// kernel (the hook times every launch of one) is launched once; then, once the hook's
// timing thread has made events of its own (at most 3 s), 24 times more on the same
// stream, all queued on the pretend GPU together ($EACGM_FAKE_KERNEL_US each, so their
// event pairs are all pending at once). Prints the events the launching thread made for
// the first launch and for the 24 after it, and the launches the hook timed (its ring's
// counter), after waiting for the timing thread to read them back. At exit it releases the
// primary context from a handler registered before its first launch, which therefore runs
// after the hook's own (the hook must not wait for its stopped timing thread then).
//
// Usage: gpu_time_events LIBCUDA_PATH
#include <dlfcn.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/gpu_time_ring.h"
#include "own_gpu_time_ring.h"

namespace {

using Launch = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                       void**, void**);

void* must(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (p == nullptr) {
    std::fprintf(stderr, "gpu_time_events: %s not found\n", name);
    std::exit(2);
  }
  return p;
}

int (*g_release)(int) = nullptr;

void release_at_exit() {
  if (g_release(0) != 0) std::fprintf(stderr, "gpu_time_events: cuDevicePrimaryCtxRelease failed\n");
}

void sleep_ms(long ms) {
  timespec t{ms / 1000, (ms % 1000) * 1'000'000};
  nanosleep(&t, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gpu_time_events LIBCUDA_PATH\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "gpu_time_events: %s\n", dlerror());
    return 2;
  }
  auto init = reinterpret_cast<int (*)(unsigned)>(must(lib, "cuInit"));
  auto retain = reinterpret_cast<int (*)(void**, int)>(must(lib, "cuDevicePrimaryCtxRetain"));
  auto set_current = reinterpret_cast<int (*)(void*)>(must(lib, "cuCtxSetCurrent"));
  auto get_function = reinterpret_cast<int (*)(void**, void*, const char*)>(must(lib, "cuModuleGetFunction"));
  auto launch = reinterpret_cast<Launch>(must(lib, "cuLaunchKernel"));
  auto sync = reinterpret_cast<int (*)()>(must(lib, "cuCtxSynchronize"));
  auto created = reinterpret_cast<int (*)(int)>(must(lib, "eacgm_fake_events_created"));
  g_release = reinterpret_cast<int (*)(int)>(must(lib, "cuDevicePrimaryCtxRelease_v2"));
  std::atexit(release_at_exit);
  void* ctx = nullptr;
  void* nccl = nullptr;
  if (init(0) != 0 || retain(&ctx, 0) != 0 || set_current(ctx) != 0 ||
      get_function(&nccl, nullptr, "ncclDevKernel_AllReduce_Sum_f32_RING_LL") != 0) {
    std::fprintf(stderr, "gpu_time_events: set-up failed\n");
    return 1;
  }
  auto* stream = reinterpret_cast<void*>(0x6000);
  int failed = launch(nccl, 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr) != 0;
  const int first = created(1);
  for (int waited = 0; created(0) - created(1) < 32 && waited < 3000; waited += 10) sleep_ms(10);
  sleep_ms(100);
  for (int i = 0; i < 24; ++i) failed += launch(nccl, 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr) != 0;
  const int later = created(1) - first;
  failed += sync() != 0;
  sleep_ms(300);

  const auto* ring = eacgm::test::own_gpu_time_ring("gpu_time_events");
  if (ring == nullptr) return 1;
  const auto timed = ring->sampled.load(std::memory_order_relaxed);
  std::printf("first=%d later=%d timed=%llu failed=%d\n", first, later,
              static_cast<unsigned long long>(timed), failed);
  return failed == 0 ? 0 : 1;
}
