// Test program for libeacgm_hook.so against the FAKE libcuda (tests/fakes/fake_libcuda):
// gets the driver functions by one route, runs one scenario and prints "key=value"
// lines for the test to check. Run with LD_PRELOAD=libeacgm_hook.so.
//
// Usage: govern_calls ROUTE SCENARIO [LIBCUDA_PATH] [LIBNVML_PATH]
//   ROUTE: linked (built as govern_calls_linked), dlsym, procaddr (cuGetProcAddress_v2),
//          procaddr_pt (its per-thread flag), procaddr_v1 (cuGetProcAddress, CUDA 11.3 ABI)
//   SCENARIO: limits, view, nvml, fork, threads, launches, no_context
#include <cuda.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#undef cuGetProcAddress

namespace {

constexpr size_t kMiB = 1ull << 20;
std::atomic<long> g_signals{0};

struct Api {
  CUresult (*init)(unsigned);
  CUresult (*retain)(CUcontext*, CUdevice);
  CUresult (*set_current)(CUcontext);
  CUresult (*alloc)(CUdeviceptr*, size_t);
  CUresult (*pitch)(CUdeviceptr*, size_t*, size_t, size_t, unsigned);
  CUresult (*managed)(CUdeviceptr*, size_t, unsigned);
  CUresult (*alloc_async)(CUdeviceptr*, size_t, CUstream);
  CUresult (*pool_alloc)(CUdeviceptr*, size_t, CUmemoryPool, CUstream);
  CUresult (*free)(CUdeviceptr);
  CUresult (*free_async)(CUdeviceptr, CUstream);
  CUresult (*create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long);
  CUresult (*release)(CUmemGenericAllocationHandle);
  CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
  CUresult (*array_create)(CUarray*, const CUDA_ARRAY_DESCRIPTOR*);
  CUresult (*array3d_create)(CUarray*, const CUDA_ARRAY3D_DESCRIPTOR*);
  CUresult (*array_destroy)(CUarray);
  CUresult (*host_alloc)(void**, size_t, unsigned);
  CUresult (*free_host)(void*);
  CUresult (*mem_info)(size_t*, size_t*);
  CUresult (*total_mem)(size_t*, CUdevice);
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     CUstream, void**, void**);
  CUresult (*launch_ex)(const CUlaunchConfig*, CUfunction, void**, void**);
  CUresult (*launch_coop)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                          CUstream, void**);
  CUresult (*graph_launch)(CUgraphExec, CUstream);
  CUresult (*ctx_sync)();
};

struct Named {
  const char* base;    // for cuGetProcAddress
  const char* symbol;  // for dlsym
  void** slot;
};

Api api;

std::vector<Named> names() {
  return {
      {"cuInit", "cuInit", reinterpret_cast<void**>(&api.init)},
      {"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain", reinterpret_cast<void**>(&api.retain)},
      {"cuCtxSetCurrent", "cuCtxSetCurrent", reinterpret_cast<void**>(&api.set_current)},
      {"cuMemAlloc", "cuMemAlloc_v2", reinterpret_cast<void**>(&api.alloc)},
      {"cuMemAllocPitch", "cuMemAllocPitch_v2", reinterpret_cast<void**>(&api.pitch)},
      {"cuMemAllocManaged", "cuMemAllocManaged", reinterpret_cast<void**>(&api.managed)},
      {"cuMemAllocAsync", "cuMemAllocAsync", reinterpret_cast<void**>(&api.alloc_async)},
      {"cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync", reinterpret_cast<void**>(&api.pool_alloc)},
      {"cuMemFree", "cuMemFree_v2", reinterpret_cast<void**>(&api.free)},
      {"cuMemFreeAsync", "cuMemFreeAsync", reinterpret_cast<void**>(&api.free_async)},
      {"cuMemCreate", "cuMemCreate", reinterpret_cast<void**>(&api.create)},
      {"cuMemRelease", "cuMemRelease", reinterpret_cast<void**>(&api.release)},
      {"cuMemMap", "cuMemMap", reinterpret_cast<void**>(&api.map)},
      {"cuArrayCreate", "cuArrayCreate_v2", reinterpret_cast<void**>(&api.array_create)},
      {"cuArray3DCreate", "cuArray3DCreate_v2", reinterpret_cast<void**>(&api.array3d_create)},
      {"cuArrayDestroy", "cuArrayDestroy", reinterpret_cast<void**>(&api.array_destroy)},
      {"cuMemHostAlloc", "cuMemHostAlloc", reinterpret_cast<void**>(&api.host_alloc)},
      {"cuMemFreeHost", "cuMemFreeHost", reinterpret_cast<void**>(&api.free_host)},
      {"cuMemGetInfo", "cuMemGetInfo_v2", reinterpret_cast<void**>(&api.mem_info)},
      {"cuDeviceTotalMem", "cuDeviceTotalMem_v2", reinterpret_cast<void**>(&api.total_mem)},
      {"cuLaunchKernel", "cuLaunchKernel", reinterpret_cast<void**>(&api.launch)},
      {"cuLaunchKernelEx", "cuLaunchKernelEx", reinterpret_cast<void**>(&api.launch_ex)},
      {"cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel", reinterpret_cast<void**>(&api.launch_coop)},
      {"cuGraphLaunch", "cuGraphLaunch", reinterpret_cast<void**>(&api.graph_launch)},
      {"cuCtxSynchronize", "cuCtxSynchronize", reinterpret_cast<void**>(&api.ctx_sync)},
  };
}

// Which library a function pointer lives in: "hook" when libeacgm_hook.so wraps it.
const char* owner(void* fn) {
  Dl_info info{};
  if (fn == nullptr || dladdr(fn, &info) == 0 || info.dli_fname == nullptr) return "none";
  return std::strstr(info.dli_fname, "libeacgm_hook") != nullptr ? "hook" : "driver";
}

#ifdef GOVERN_LINKED
bool load_linked() {
  api.init = &cuInit;
  api.retain = &cuDevicePrimaryCtxRetain;
  api.set_current = &cuCtxSetCurrent;
  api.alloc = &cuMemAlloc_v2;
  api.pitch = &cuMemAllocPitch_v2;
  api.managed = &cuMemAllocManaged;
  api.alloc_async = &cuMemAllocAsync;
  api.pool_alloc = &cuMemAllocFromPoolAsync;
  api.free = &cuMemFree_v2;
  api.free_async = &cuMemFreeAsync;
  api.create = &cuMemCreate;
  api.release = &cuMemRelease;
  api.map = &cuMemMap;
  api.array_create = &cuArrayCreate_v2;
  api.array3d_create = &cuArray3DCreate_v2;
  api.array_destroy = &cuArrayDestroy;
  api.host_alloc = &cuMemHostAlloc;
  api.free_host = &cuMemFreeHost;
  api.mem_info = &cuMemGetInfo_v2;
  api.total_mem = &cuDeviceTotalMem_v2;
  api.launch = &cuLaunchKernel;
  api.launch_ex = &cuLaunchKernelEx;
  api.launch_coop = &cuLaunchCooperativeKernel;
  api.graph_launch = &cuGraphLaunch;
  api.ctx_sync = &cuCtxSynchronize;
  return true;
}
#endif

bool load(const std::string& route, const char* libcuda) {
#ifdef GOVERN_LINKED
  if (route == "linked") return load_linked();
#endif
  void* lib = dlopen(libcuda, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen %s: %s\n", libcuda, dlerror());
    return false;
  }
  if (route == "dlsym") {
    for (const Named& n : names()) *n.slot = dlsym(lib, n.symbol);
  } else if (route == "procaddr" || route == "procaddr_pt") {
    using Fn = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
    auto gpa = reinterpret_cast<Fn>(dlsym(lib, "cuGetProcAddress_v2"));
    if (gpa == nullptr) return false;
    std::printf("owner_cuGetProcAddress_v2=%s\n", owner(reinterpret_cast<void*>(gpa)));
    cuuint64_t flags = route == "procaddr_pt" ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
    // The runtime's first question: cuGetProcAddress itself, through itself.
    void* self = nullptr;
    CUdriverProcAddressQueryResult status{};
    gpa("cuGetProcAddress", &self, 13000, 0, &status);
    std::printf("owner_self_lookup=%s\n", owner(self));
    for (const Named& n : names()) {
      if (gpa(n.base, n.slot, 13000, flags, &status) != CUDA_SUCCESS) *n.slot = nullptr;
    }
    // A per-thread request of a function with a _ptsz variant returns that variant.
    void* async_fn = nullptr;
    gpa("cuMemAllocAsync", &async_fn, 13000, flags, &status);
    Dl_info info{};
    dladdr(async_fn, &info);
    std::printf("variant_cuMemAllocAsync=%s\n", info.dli_sname != nullptr ? info.dli_sname : "?");
    void* launch_fn = nullptr;
    gpa("cuLaunchKernel", &launch_fn, 13000, flags, &status);
    dladdr(launch_fn, &info);
    std::printf("variant_cuLaunchKernel=%s\n", info.dli_sname != nullptr ? info.dli_sname : "?");
    // cuCtxSynchronize changed its ABI in CUDA 13: each version gets its own variant.
    void* sync12 = nullptr;
    void* sync13 = nullptr;
    gpa("cuCtxSynchronize", &sync12, 12080, 0, &status);
    gpa("cuCtxSynchronize", &sync13, 13000, 0, &status);
    dladdr(sync12, &info);
    std::printf("variant_cuCtxSynchronize_12080=%s\n", info.dli_sname != nullptr ? info.dli_sname : "?");
    dladdr(sync13, &info);
    std::printf("variant_cuCtxSynchronize_13000=%s\n", info.dli_sname != nullptr ? info.dli_sname : "?");
  } else if (route == "procaddr_v1") {
    using Fn = CUresult (*)(const char*, void**, int, cuuint64_t);
    auto gpa = reinterpret_cast<Fn>(dlsym(lib, "cuGetProcAddress"));
    if (gpa == nullptr) return false;
    for (const Named& n : names()) {
      if (gpa(n.base, n.slot, 12000, 0) != CUDA_SUCCESS) *n.slot = nullptr;
    }
  } else {
    std::fprintf(stderr, "unknown route %s\n", route.c_str());
    return false;
  }
  for (const Named& n : names()) {
    if (*n.slot == nullptr) {
      std::fprintf(stderr, "route %s: no %s\n", route.c_str(), n.symbol);
      return false;
    }
  }
  return true;
}

void use_device(int d) {
  CUcontext ctx = nullptr;
  api.retain(&ctx, d);
  api.set_current(ctx);
}

void print_owners() {
  std::printf("owner_cuInit=%s\n", owner(reinterpret_cast<void*>(api.init)));
  for (const Named& n : names()) {
    if (std::strncmp(n.symbol, "cuMem", 5) == 0 || std::strncmp(n.symbol, "cuArray", 7) == 0 ||
        std::strncmp(n.symbol, "cuLaunch", 8) == 0 || std::strcmp(n.symbol, "cuGraphLaunch") == 0 ||
        std::strcmp(n.symbol, "cuDeviceTotalMem_v2") == 0)
      std::printf("owner_%s=%s\n", n.symbol, owner(*n.slot));
  }
}

// One allocation path: a 48 MiB allocation, then 32 MiB (over a 64 MiB limit), a free
// of the first, and the 32 MiB again.
struct Path {
  const char* name;
  CUresult (*allocate)(size_t bytes, unsigned long long* handle);
  CUresult (*release)(unsigned long long handle);
};

CUstream kStream = reinterpret_cast<CUstream>(0x5000);
CUmemoryPool kPool = reinterpret_cast<CUmemoryPool>(0x6000);

const Path kPaths[] = {
    {"alloc", [](size_t n, unsigned long long* h) { return api.alloc(h, n); },
     [](unsigned long long h) { return api.free(h); }},
    {"pitch",
     [](size_t n, unsigned long long* h) {
       size_t pitch = 0;
       return api.pitch(h, &pitch, 4096, n / 4096, 4);
     },
     [](unsigned long long h) { return api.free(h); }},
    {"managed", [](size_t n, unsigned long long* h) { return api.managed(h, n, CU_MEM_ATTACH_GLOBAL); },
     [](unsigned long long h) { return api.free(h); }},
    {"async", [](size_t n, unsigned long long* h) { return api.alloc_async(h, n, kStream); },
     [](unsigned long long h) { return api.free_async(h, kStream); }},
    {"pool", [](size_t n, unsigned long long* h) { return api.pool_alloc(h, n, kPool, kStream); },
     [](unsigned long long h) { return api.free_async(h, kStream); }},
    {"create",
     [](size_t n, unsigned long long* h) {
       CUmemAllocationProp prop{};
       prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
       prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
       prop.location.id = 0;
       CUresult r = api.create(h, n, &prop, 0);
       if (r == CUDA_SUCCESS) api.map(0x7f0000000000ull, n, 0, *h, 0);
       return r;
     },
     [](unsigned long long h) { return api.release(h); }},
    {"array",
     [](size_t n, unsigned long long* h) {
       CUDA_ARRAY_DESCRIPTOR d{};
       d.Width = 4096;
       d.Height = n / 4096 / 4;
       d.Format = CU_AD_FORMAT_FLOAT;
       d.NumChannels = 1;
       CUarray a = nullptr;
       CUresult r = api.array_create(&a, &d);
       *h = reinterpret_cast<unsigned long long>(a);
       return r;
     },
     [](unsigned long long h) { return api.array_destroy(reinterpret_cast<CUarray>(h)); }},
    {"array3d",
     [](size_t n, unsigned long long* h) {
       CUDA_ARRAY3D_DESCRIPTOR d{};
       d.Width = 1024;
       d.Height = 1024;
       d.Depth = n / (1024 * 1024 * 2);
       d.Format = CU_AD_FORMAT_HALF;
       d.NumChannels = 1;
       CUarray a = nullptr;
       CUresult r = api.array3d_create(&a, &d);
       *h = reinterpret_cast<unsigned long long>(a);
       return r;
     },
     [](unsigned long long h) { return api.array_destroy(reinterpret_cast<CUarray>(h)); }},
};

int scenario_limits() {
  use_device(0);
  print_owners();
  for (const Path& p : kPaths) {
    unsigned long long a = 0, b = 0, c = 0;
    CUresult first = p.allocate(48 * kMiB, &a);
    CUresult over = p.allocate(32 * kMiB, &b);
    CUresult freed = p.release(a);
    CUresult after = p.allocate(32 * kMiB, &c);
    if (after == CUDA_SUCCESS) p.release(c);
    if (over == CUDA_SUCCESS) p.release(b);
    std::printf("path_%s=%d,%d,%d,%d\n", p.name, first, over, freed, after);
  }
  // Pinned host memory is not GPU memory: 128 MiB of it under a 64 MiB GPU limit.
  void* host = nullptr;
  std::printf("host_alloc=%d\n", api.host_alloc(&host, 128 * kMiB, 0));
  std::printf("host_free=%d\n", api.free_host(host));
  return 0;
}

// The free/total view, per device, never wrapping.
int scenario_view() {
  use_device(0);
  size_t free_b = 0, total = 0, dev_total = 0;
  unsigned long long a = 0, b = 0;
  api.alloc(&a, 16 * kMiB);
  api.mem_info(&free_b, &total);
  std::printf("dev0_after16_free_mib=%zu total_mib=%zu\n", free_b / kMiB, total / kMiB);
  api.alloc(&b, 48 * kMiB);
  api.mem_info(&free_b, &total);
  std::printf("dev0_full_free=%zu\n", free_b);
  unsigned long long c = 0;
  std::printf("dev0_over=%d\n", api.alloc(&c, 1));
  api.total_mem(&dev_total, 0);
  std::printf("dev0_total_mem_mib=%zu\n", dev_total / kMiB);
  api.total_mem(&dev_total, 1);
  std::printf("dev1_total_mem_mib=%zu\n", dev_total / kMiB);
  // Device 1 keeps its own account: full device 0 does not limit it.
  use_device(1);
  api.mem_info(&free_b, &total);
  std::printf("dev1_free_mib=%zu total_mib=%zu\n", free_b / kMiB, total / kMiB);
  unsigned long long d = 0;
  std::printf("dev1_alloc=%d\n", api.alloc(&d, 60 * kMiB));
  // cuMemCreate names its device: physical memory for device 0 from device 1's context.
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  CUmemGenericAllocationHandle h = 0;
  std::printf("create_for_dev0_from_dev1=%d\n", api.create(&h, 1 * kMiB, &prop, 0));
  prop.location.id = 1;
  std::printf("create_for_dev1=%d\n", api.create(&h, 1 * kMiB, &prop, 0));
  return 0;
}

int scenario_nvml(const char* libnvml) {
  use_device(0);
  unsigned long long a = 0;
  api.alloc(&a, 24 * kMiB);
  void* lib = dlopen(libnvml, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return 1;
  struct Mem {
    unsigned long long total, free, used;
  };
  struct MemV2 {
    unsigned version;
    unsigned long long total, reserved, free, used;
  };
  auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
  auto handle = reinterpret_cast<int (*)(unsigned, void**)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  auto info = reinterpret_cast<int (*)(void*, Mem*)>(dlsym(lib, "nvmlDeviceGetMemoryInfo"));
  auto info2 = reinterpret_cast<int (*)(void*, MemV2*)>(dlsym(lib, "nvmlDeviceGetMemoryInfo_v2"));
  if (!init || !handle || !info || !info2) return 1;
  std::printf("owner_nvml=%s\n", owner(reinterpret_cast<void*>(info)));
  init();
  void* dev = nullptr;
  handle(0, &dev);
  Mem m{};
  int r = info(dev, &m);
  std::printf("nvml=%d total_mib=%llu used_mib=%llu free_mib=%llu\n", r, m.total / kMiB, m.used / kMiB,
              m.free / kMiB);
  MemV2 m2{};
  m2.version = sizeof(MemV2) | (2u << 24);
  r = info2(dev, &m2);
  std::printf("nvml_v2=%d total_mib=%llu used_mib=%llu free_mib=%llu\n", r, m2.total / kMiB, m2.used / kMiB,
              m2.free / kMiB);
  return 0;
}

// Fork without exec: the child starts with no usage of its own; the parent keeps its own.
int scenario_fork() {
  use_device(0);
  unsigned long long a = 0;
  std::printf("parent_first=%d\n", api.alloc(&a, 48 * kMiB));
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    use_device(0);
    unsigned long long b = 0;
    std::printf("child_alloc=%d\n", api.alloc(&b, 48 * kMiB));
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  unsigned long long c = 0;
  std::printf("parent_over=%d\n", api.alloc(&c, 32 * kMiB));
  std::printf("child_status=%d\n", status);
  return 0;
}

// Threads: 8 threads race for 16 MiB blocks under 64 MiB: exactly 4 can hold one at once;
// after many alloc/free rounds nothing is left counted.
int scenario_threads() {
  use_device(0);
  std::atomic<int> held{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  std::vector<unsigned long long> ptrs(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      use_device(0);
      ready.fetch_add(1);
      while (ready.load() < 8) std::this_thread::yield();
      if (api.alloc(&ptrs[t], 16 * kMiB) == CUDA_SUCCESS) held.fetch_add(1);
    });
  }
  for (auto& th : threads) th.join();
  std::printf("held_at_once=%d\n", held.load());
  for (auto p : ptrs) {
    if (p != 0) api.free(p);
  }
  threads.clear();
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      use_device(0);
      for (int i = 0; i < 2000; ++i) {
        unsigned long long p = 0;
        if (api.alloc(&p, 4 * kMiB) == CUDA_SUCCESS)
          api.free(p);
        else
          failures.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  unsigned long long all = 0;
  std::printf("rounds_failed=%d\n", failures.load());
  std::printf("whole_limit_after=%d\n", api.alloc(&all, 64 * kMiB));
  return 0;
}

int scenario_launches() {
  use_device(0);
  print_owners();
  auto f = reinterpret_cast<CUfunction>(0x1234);
  CUlaunchConfig config{};
  config.hStream = kStream;
  std::printf("launch=%d\n", api.launch(f, 1, 1, 1, 1, 1, 1, 0, kStream, nullptr, nullptr));
  std::printf("launch_ex=%d\n", api.launch_ex(&config, f, nullptr, nullptr));
  std::printf("launch_coop=%d\n", api.launch_coop(f, 1, 1, 1, 1, 1, 1, 0, kStream, nullptr));
  std::printf("graph_launch=%d\n", api.graph_launch(reinterpret_cast<CUgraphExec>(0x99), kStream));
  std::printf("sync=%d\n", api.ctx_sync());
  return 0;
}

// A thread without a current context: not accounted (the real driver would refuse the
// call; the fake lets it through), and no crash on a missing device index.
int scenario_no_context() {
  unsigned long long a = 0, b = 0;
  std::printf("no_ctx_first=%d\n", api.alloc(&a, 48 * kMiB));
  std::printf("no_ctx_second=%d\n", api.alloc(&b, 48 * kMiB));
  size_t free_b = 0, total = 0;
  std::printf("no_ctx_info=%d\n", api.mem_info(&free_b, &total));
  return 0;
}

// Keeps the (pretend) GPU busy: kernels of $EACGM_FAKE_KERNEL_US each, a synchronize
// every 8 launches, for $GOVERN_BUSY_SECONDS seconds (default 3). Prints how many
// launches went through and the first error, if any.
int scenario_busy() {
  use_device(0);
  const char* s = std::getenv("GOVERN_BUSY_SECONDS");
  double seconds = s != nullptr ? std::atof(s) : 3.0;
  auto f = reinterpret_cast<CUfunction>(0x1234);
  auto start = std::chrono::steady_clock::now();
  long launches = 0;
  int first_error = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    CUresult r = api.launch(f, 1, 1, 1, 1, 1, 1, 0, kStream, nullptr, nullptr);
    if (r != CUDA_SUCCESS) {
      if (first_error == 0) first_error = r;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    if (++launches % 8 == 0) api.ctx_sync();
  }
  api.ctx_sync();
  std::printf("launches=%ld first_error=%d\n", launches, first_error);
  return 0;
}

// Allocates $GOVERN_HOLD_MIB MiB, prints the result and $GOVERN_READY_FILE's creation,
// then keeps it for $GOVERN_HOLD_SECONDS seconds (another process of the tenant runs
// meanwhile) and exits without freeing.
int scenario_hold() {
  use_device(0);
  const char* mib = std::getenv("GOVERN_HOLD_MIB");
  const char* secs = std::getenv("GOVERN_HOLD_SECONDS");
  unsigned long long p = 0;
  CUresult r = api.alloc(&p, static_cast<size_t>(mib != nullptr ? std::atol(mib) : 48) * kMiB);
  std::printf("hold_alloc=%d\n", r);
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::duration<double>(secs != nullptr ? std::atof(secs) : 0.0));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: govern_calls ROUTE SCENARIO [LIBCUDA_PATH] [LIBNVML_PATH]\n");
    return 2;
  }
  // $GOVERN_SIGNAL_US: a SIGALRM every that many microseconds (no SA_RESTART), so the
  // hook's waits are interrupted again and again.
  if (const char* us = std::getenv("GOVERN_SIGNAL_US")) {
    struct sigaction sa {};
    sa.sa_handler = [](int) { g_signals.fetch_add(1, std::memory_order_relaxed); };
    sigaction(SIGALRM, &sa, nullptr);
    itimerval t{};
    t.it_interval.tv_usec = std::atol(us);
    t.it_value.tv_usec = std::atol(us);
    setitimer(ITIMER_REAL, &t, nullptr);
  }
  std::string route = argv[1];
  std::string scenario = argv[2];
  if (!load(route, argc > 3 ? argv[3] : "libcuda.so.1")) return 1;
  api.init(0);
  int rc = 2;
  if (scenario == "limits") rc = scenario_limits();
  if (scenario == "view") rc = scenario_view();
  if (scenario == "nvml") rc = scenario_nvml(argc > 4 ? argv[4] : "libnvidia-ml.so.1");
  if (scenario == "fork") rc = scenario_fork();
  if (scenario == "threads") rc = scenario_threads();
  if (scenario == "launches") rc = scenario_launches();
  if (scenario == "no_context") rc = scenario_no_context();
  if (scenario == "busy") rc = scenario_busy();
  if (scenario == "hold") rc = scenario_hold();
  if (std::getenv("GOVERN_SIGNAL_US") != nullptr) std::printf("signals=%ld\n", g_signals.load());
  std::fflush(stdout);
  return rc;
}
