// What libeacgm_hook.so adds to a launch and to an allocation, against the FAKE libcuda
// (tests/fakes/fake_libcuda): each benchmark calls the fake directly and then through the
// hook's wrapper (the hook is dlopen'ed, not preloaded, so both are reachable in one
// process). Without a scheduler the launch wrapper costs a table load and one relaxed
// atomic load; an allocation a device query, a compare-and-swap on the ledger and an
// insert into the live-allocation table.
//
// Usage: eacgm_bench_hook --benchmark_repetitions=10 --benchmark_report_aggregates_only
//        (run from anywhere; the paths of the fake and of the hook are built in)
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

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

Api g_direct, g_hooked;

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
void BM_AllocFreeDirect(benchmark::State& s) { alloc_free(s, g_direct); }
void BM_AllocFreeHooked(benchmark::State& s) { alloc_free(s, g_hooked); }
BENCHMARK(BM_LaunchDirect);
BENCHMARK(BM_LaunchHooked);
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
