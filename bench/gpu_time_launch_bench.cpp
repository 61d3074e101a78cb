// What a timed launch costs the launching thread through libeacgm_hook.so with GPU time on,
// against the FAKE libcuda (tests/fakes/fake_libcuda), by the hook's own count: a
// training-loop-shaped run (steps of KERNELS functions launched LAUNCHES times each on one
// stream, EACGM_FAKE_KERNEL_US of pretend GPU work a launch, 2 by default, HOST_US of host
// work spun before each launch, 0 by default, as a framework's and a real driver's launch
// take, and a cuCtxSynchronize at each step's end) for SECONDS, then the ring's counters: launches,
// launches timed, the launching thread's time spent timing (`timing_cost_ns`, what the
// budget planner weighs) and that per timed launch; and the events cuEventCreate made on the
// launching thread and on others (the fake counts them). $EACGM_FAKE_EVENT_CREATE_US makes
// each cuEventCreate spin that long, as a real driver's takes time; $EACGM_GPU_TIME_BUDGET
// sets the hook's budget (0.2% of the time by default).
//
// Usage: eacgm_bench_gpu_time_launch [SECONDS [KERNELS [LAUNCHES [HOST_US]]]]
//        (run from anywhere; the paths of the fake and of the hook are built in)
#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../tests/programs/own_gpu_time_ring.h"
#include "core/gpu_time_ring.h"

namespace {

using Launch = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                       void**, void**);

void* must(void* p, const char* what) {
  if (p == nullptr) {
    std::fprintf(stderr, "eacgm_bench_gpu_time_launch: %s: %s\n", what, dlerror());
    std::exit(1);
  }
  return p;
}

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

int number(const char* arg, const char* what, int least) {
  char* end = nullptr;
  const long v = std::strtol(arg, &end, 10);
  if (end == arg || *end != '\0' || v < least || v > 1'000'000) {
    std::fprintf(stderr, "eacgm_bench_gpu_time_launch: %s must be an integer from %d to 1000000, not %s\n",
                 what, least, arg);
    std::exit(2);
  }
  return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 5) {
    std::fprintf(stderr, "usage: eacgm_bench_gpu_time_launch [SECONDS [KERNELS [LAUNCHES [HOST_US]]]]\n");
    return 2;
  }
  const int seconds = argc > 1 ? number(argv[1], "SECONDS", 1) : 5;
  const int kernels = argc > 2 ? number(argv[2], "KERNELS", 1) : 24;
  const int launches = argc > 3 ? number(argv[3], "LAUNCHES", 1) : 8;
  const int host_us = argc > 4 ? number(argv[4], "HOST_US", 0) : 0;
  setenv("EACGM_FAKE_KERNEL_US", "2", 0);
  setenv("EACGM_GPU_TIME", "1", 1);
  unsetenv("EACGM_SCHED_SOCKET");
  unsetenv("EACGM_SCHED_ADDR");
  void* cuda = must(dlopen(EACGM_FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL), EACGM_FAKE_LIBCUDA);
  void* hook = must(dlopen(EACGM_HOOK_LIB, RTLD_NOW | RTLD_LOCAL), EACGM_HOOK_LIB);
  auto launch = reinterpret_cast<Launch>(must(dlsym(hook, "cuLaunchKernel"), "hook cuLaunchKernel"));
  auto sync = reinterpret_cast<int (*)()>(must(dlsym(hook, "cuCtxSynchronize"), "hook cuCtxSynchronize"));
  auto retain =
      reinterpret_cast<int (*)(void**, int)>(must(dlsym(cuda, "cuDevicePrimaryCtxRetain"), "retain"));
  auto set_current = reinterpret_cast<int (*)(void*)>(must(dlsym(cuda, "cuCtxSetCurrent"), "set current"));
  auto get_function = reinterpret_cast<int (*)(void**, void*, const char*)>(
      must(dlsym(cuda, "cuModuleGetFunction"), "cuModuleGetFunction"));
  auto created = reinterpret_cast<int (*)(int)>(
      must(dlsym(cuda, "eacgm_fake_events_created"), "eacgm_fake_events_created"));
  void* ctx = nullptr;
  std::vector<void*> functions(static_cast<std::size_t>(kernels));
  bool ok = retain(&ctx, 0) == 0 && set_current(ctx) == 0;
  for (int k = 0; ok && k < kernels; ++k) {
    const std::string name = "step_kernel_" + std::to_string(k);
    ok = get_function(&functions[static_cast<std::size_t>(k)], nullptr, name.c_str()) == 0;
  }
  if (!ok) {
    std::fprintf(stderr, "eacgm_bench_gpu_time_launch: the fake libcuda's set-up failed\n");
    return 1;
  }

  const std::uint64_t end = now_ns() + static_cast<std::uint64_t>(seconds) * 1'000'000'000ull;
  std::uint64_t steps = 0;
  int failed = 0;
  while (now_ns() < end) {
    for (int k = 0; k < kernels; ++k) {
      for (int i = 0; i < launches; ++i) {
        if (host_us > 0) {
          const std::uint64_t until = now_ns() + static_cast<std::uint64_t>(host_us) * 1000;
          while (now_ns() < until) {
          }
        }
        failed += launch(functions[static_cast<std::size_t>(k)], 1, 1, 1, 32, 1, 1, 0,
                         reinterpret_cast<void*>(0x5000), nullptr, nullptr) != 0;
      }
    }
    failed += sync() != 0;
    ++steps;
  }
  const int created_here = created(1);
  // The timing thread reads the last pairs back and writes the counters (every 100 ms).
  timespec settle{0, 300'000'000};
  nanosleep(&settle, nullptr);

  const auto* h = eacgm::test::own_gpu_time_ring("eacgm_bench_gpu_time_launch");
  if (h == nullptr) return 1;
  const std::uint64_t timed = h->sampled.load(std::memory_order_relaxed);
  const std::uint64_t cost = h->timing_cost_ns.load(std::memory_order_relaxed);
  const char* budget = std::getenv("EACGM_GPU_TIME_BUDGET");
  const char* create_us = std::getenv("EACGM_FAKE_EVENT_CREATE_US");
  std::printf(
      "%d s, %llu steps of %d x %d launches, %d us host work a launch, budget %s%%, "
      "cuEventCreate %s us, %d failed\n",
      seconds, static_cast<unsigned long long>(steps), kernels, launches, host_us,
      budget != nullptr ? budget : "0.2", create_us != nullptr ? create_us : "0", failed);
  std::printf("launches %llu, timed %llu (1 in %u at the end), errors %u\n",
              static_cast<unsigned long long>(h->launches.load(std::memory_order_relaxed)),
              static_cast<unsigned long long>(timed), h->sample_every.load(std::memory_order_relaxed),
              h->errors.load(std::memory_order_relaxed));
  std::printf("timing cost %.3f ms, %.2f us per timed launch\n", static_cast<double>(cost) / 1e6,
              timed > 0 ? static_cast<double>(cost) / 1e3 / static_cast<double>(timed) : 0.0);
  std::printf("events created: %d on the launching thread, %d on others\n", created_here,
              created(0) - created_here);
  return failed == 0 ? 0 : 1;
}
