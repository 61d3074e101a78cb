// What libeacgm_hook.so adds to a launch and to an allocation, against the FAKE libcuda
// (tests/fakes/fake_libcuda): each benchmark calls the fake directly and then through the
// hook's wrapper (the hook is dlopen'ed, not preloaded, so both are reachable in one
// process). Without a scheduler the launch wrapper costs a table load and one relaxed
// atomic load; an allocation a device query, a compare-and-swap on the ledger and an
// insert into the live-allocation table. `Counted` is a second copy of the hook loaded
// with GPU time on (EACGM_GPU_TIME=1) and its timing paused (the ring's `paused` word):
// each launch is also counted exactly per kernel, which is what the hook's counts cost a
// process whose uprobes are left off.
//
// Usage: eacgm_bench_hook --benchmark_repetitions=10 --benchmark_report_aggregates_only
//        (run from anywhere; the paths of the fake and of the hook are built in)
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/gpu_time_ring.h"

namespace {

using Launch = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                       void**, void**);
using Alloc = int (*)(std::uint64_t*, std::size_t);
using Free = int (*)(std::uint64_t);

struct Api {
  Launch launch = nullptr;
  Alloc alloc = nullptr;
  Free free = nullptr;
};

Api g_direct, g_hooked, g_counted;

void* must(void* p, const char* what) {
  if (p == nullptr) {
    std::fprintf(stderr, "eacgm_bench_hook: %s: %s\n", what, dlerror());
    std::exit(1);
  }
  return p;
}

void setup() {
  // A limit far above what the benchmark holds: every allocation is accounted.
  setenv("EACGM_MEMORY_LIMIT", "1TiB", 1);
  unsetenv("EACGM_SCHED_SOCKET");
  unsetenv("EACGM_SCHED_ADDR");
  void* cuda = must(dlopen(EACGM_FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL), EACGM_FAKE_LIBCUDA);
  void* hook = must(dlopen(EACGM_HOOK_LIB, RTLD_NOW | RTLD_LOCAL), EACGM_HOOK_LIB);
  g_direct.launch = reinterpret_cast<Launch>(must(dlsym(cuda, "cuLaunchKernel"), "cuLaunchKernel"));
  g_direct.alloc = reinterpret_cast<Alloc>(must(dlsym(cuda, "cuMemAlloc_v2"), "cuMemAlloc_v2"));
  g_direct.free = reinterpret_cast<Free>(must(dlsym(cuda, "cuMemFree_v2"), "cuMemFree_v2"));
  g_hooked.launch = reinterpret_cast<Launch>(must(dlsym(hook, "cuLaunchKernel"), "hook cuLaunchKernel"));
  g_hooked.alloc = reinterpret_cast<Alloc>(must(dlsym(hook, "cuMemAlloc_v2"), "hook cuMemAlloc_v2"));
  g_hooked.free = reinterpret_cast<Free>(must(dlsym(hook, "cuMemFree_v2"), "hook cuMemFree_v2"));
  // A current context, so allocations are charged to device 0.
  auto retain =
      reinterpret_cast<int (*)(void**, int)>(must(dlsym(cuda, "cuDevicePrimaryCtxRetain"), "retain"));
  auto set_current = reinterpret_cast<int (*)(void*)>(must(dlsym(cuda, "cuCtxSetCurrent"), "set current"));
  void* ctx = nullptr;
  retain(&ctx, 0);
  set_current(ctx);

  // The hook reads its environment at its first call: the first copy runs with GPU time
  // off (the governance environment alone would turn it on).
  setenv("EACGM_GPU_TIME", "0", 1);
  auto f = reinterpret_cast<void*>(0x1234);
  g_hooked.launch(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);

  // The counting copy: a file of its own, so the loader maps it apart from the first.
  const std::string copy = "/tmp/eacgm-bench-hook-counted." + std::to_string(getpid()) + ".so";
  std::filesystem::copy_file(EACGM_HOOK_LIB, copy, std::filesystem::copy_options::overwrite_existing);
  void* counted = must(dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL), copy.c_str());
  std::filesystem::remove(copy);
  g_counted.launch =
      reinterpret_cast<Launch>(must(dlsym(counted, "cuLaunchKernel"), "counted cuLaunchKernel"));
  setenv("EACGM_GPU_TIME", "1", 1);
  g_counted.launch(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);
  unsetenv("EACGM_GPU_TIME");
  const std::string ring = "/dev/shm/" + std::string(eacgm::gpu_time::kShmPrefix) + std::to_string(getpid());
  const int fd = open(ring.c_str(), O_RDWR | O_CLOEXEC);
  void* base = fd < 0
                   ? MAP_FAILED
                   : mmap(nullptr, eacgm::gpu_time::kHeaderBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (fd >= 0) close(fd);
  if (base == MAP_FAILED) {
    std::fprintf(stderr, "eacgm_bench_hook: the counting copy made no ring at %s\n", ring.c_str());
    std::exit(1);
  }
  static_cast<eacgm::gpu_time::Header*>(base)->paused.store(1, std::memory_order_relaxed);
}

void launch(benchmark::State& state, const Api& api) {
  auto f = reinterpret_cast<void*>(0x1234);
  for (auto _ : state)
    benchmark::DoNotOptimize(api.launch(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr));
}

// One allocation and its free per iteration.
void alloc_free(benchmark::State& state, const Api& api) {
  std::uint64_t p = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(api.alloc(&p, 1 << 20));
    benchmark::DoNotOptimize(api.free(p));
  }
}

void BM_LaunchDirect(benchmark::State& s) { launch(s, g_direct); }
void BM_LaunchHooked(benchmark::State& s) { launch(s, g_hooked); }
void BM_LaunchCounted(benchmark::State& s) { launch(s, g_counted); }
void BM_AllocFreeDirect(benchmark::State& s) { alloc_free(s, g_direct); }
void BM_AllocFreeHooked(benchmark::State& s) { alloc_free(s, g_hooked); }
BENCHMARK(BM_LaunchDirect);
BENCHMARK(BM_LaunchHooked);
BENCHMARK(BM_LaunchCounted);
BENCHMARK(BM_AllocFreeDirect);
BENCHMARK(BM_AllocFreeHooked);

}  // namespace

int main(int argc, char** argv) {
  setup();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
