// A FAKE libcuda.so.1 for tests: no GPU, no driver. It exports driver entry points under
// the names and signatures of the CUDA driver API, so eacgm's cuda_driver catalog
// attaches to it and libeacgm_hook.so interposes on it like on the real library.
// Nothing here is a CUDA implementation.
//
// Memory: allocations succeed and hand out distinct fake addresses (never
// dereferenceable); a size over 1 TiB fails with CUDA_ERROR_OUT_OF_MEMORY; frees succeed.
// Devices: $EACGM_FAKE_CUDA_DEVICES (default 2) devices of 80 GiB, 79 GiB of it free.
// Contexts: cuDevicePrimaryCtxRetain hands out one context per device; cuCtxSetCurrent
// makes it the calling thread's; cuCtxGetDevice fails without one, as the driver does.
// Time: each launch queues $EACGM_FAKE_KERNEL_US microseconds (default 0) of pretend GPU
// work; synchronizing calls sleep until the queue is empty, so throttling is observable,
// or, with $EACGM_FAKE_SYNC_SPIN=1, spin on the CPU until then, as the real driver does
// while it waits for the GPU under its spin or default (auto) scheduling.
// Events: cuEventRecord stamps the time the pretend queue reaches it (on a stream made by
// cuStreamCreate with CU_STREAM_NON_BLOCKING, which nothing else uses: the time of the
// call); cuEventQuery is ready once that time has passed; cuEventElapsedTime is the
// difference. So a kernel timed with an event pair takes exactly $EACGM_FAKE_KERNEL_US.
// With $EACGM_FAKE_KERNEL_PER_BLOCK=1, a cuLaunchKernel's work is that times its gridDimX
// (one kernel launched with several shapes runs for different times). With
// $EACGM_FAKE_FIRST_LAUNCH_US, each function's first launch spins that long on the CPU
// (a real driver's lazy module loading).
// cuEventCreate spins $EACGM_FAKE_EVENT_CREATE_US microseconds (default 0) on the calling
// thread, as a real driver's event creation takes some; eacgm_fake_events_created(1) counts
// the events the calling thread created, eacgm_fake_events_created(0) all threads' (an
// export of the fake alone, for tests and benchmarks to see which thread made events).
// Names: cuFuncGetName answers the name cuModuleGetFunction was given.
// Streams: cuStreamQuery is done once the pretend queue has drained.
// Holds: cuMemHostRegister_v2 and cuMemHostGetDevicePointer_v2 succeed (the device address
// is the host's); after cuStreamWaitValue32_v2 on a thread, its next event is stamped when
// its next launch's work starts (the stream waited until the kernel was queued), and its
// event after that checks that the word reached the value (else a line at exit: a stream
// left waiting). With $EACGM_FAKE_NO_HOLDS=1 the three are refused. With
// $EACGM_FAKE_HELD_LAUNCH_US, a held launch spins that long on the launching thread first
// (a driver waiting for the GPU inside the launch).
// Captures: cuStreamIsCapturing reports the stream between cuStreamBeginCapture_v2 and
// cuStreamEndCapture as capturing.
// Lookup: cuGetProcAddress(_v2) answers from a static table by name, requested version
// and per-thread flag, as the driver does (never through dlsym, which a hook may wrap).
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;
typedef void* CUstream;
typedef int CUdevice;
typedef void* CUcontext;

enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kNotSupported = 801,
  kInvalidDevice = 101,
  kInvalidContext = 201,
  kNotFound = 500,
};

#define EXPORT __attribute__((visibility("default"), noinline))

// Fake address space: 2 MiB-aligned, increasing, never reused.
static uint64_t next_address = 0x7e0000000000ull;
static uint64_t frees_seen;
static uint64_t async_frees_seen;
static int initialized;
static __thread CUcontext current_context;
static uint64_t gpu_busy_until_ns;  // pretend GPU queue, shared by all threads

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int device_count(void) {
  const char* s = getenv("EACGM_FAKE_CUDA_DEVICES");
  int n = s ? atoi(s) : 2;
  return n < 0 ? 0 : (n > 16 ? 16 : n);
}

static CUresult fake_alloc(CUdeviceptr* dptr, size_t size) {
  if (dptr == NULL) return kInvalidValue;
  if (size > (1ull << 40)) return kOutOfMemory;
  uint64_t a = __atomic_fetch_add(
      &next_address, ((size + (2ull << 20) - 1) & ~((2ull << 20) - 1)) + (2ull << 20), __ATOMIC_RELAXED);
  *dptr = a;
  return kSuccess;
}

// Microseconds from the environment variable `name`, as ns, read once into `*cached`
// (-1 until read): a call must cost next to nothing.
static uint64_t env_us_as_ns(const char* name, int64_t* cached) {
  int64_t v = __atomic_load_n(cached, __ATOMIC_RELAXED);
  if (v < 0) {
    const char* s = getenv(name);
    v = s ? (int64_t)atoll(s) * 1000 : 0;
    if (v < 0) v = 0;
    __atomic_store_n(cached, v, __ATOMIC_RELAXED);
  }
  return (uint64_t)v;
}

static uint64_t kernel_ns(void) {
  static int64_t cached = -1;
  return env_us_as_ns("EACGM_FAKE_KERNEL_US", &cached);
}

// Whether the variable `name` is "1", read once into `cached` (-1: not yet).
static int env_is_1(const char* name, int* cached) {
  int v = __atomic_load_n(cached, __ATOMIC_RELAXED);
  if (v < 0) {
    const char* s = getenv(name);
    v = s != NULL && strcmp(s, "1") == 0;
    __atomic_store_n(cached, v, __ATOMIC_RELAXED);
  }
  return v;
}

static uint64_t per_block(void) {
  static int cached = -1;
  return (uint64_t)env_is_1("EACGM_FAKE_KERNEL_PER_BLOCK", &cached);
}

// A hold on this thread: 1 after cuStreamWaitValue32_v2, 2 once its start event is
// recorded (stamped by the next launch), 3 once launched (its next event checks the word).
static __thread int hold_state;
static __thread uint64_t* hold_start_ts;
static __thread const uint32_t* hold_word;
static __thread uint32_t hold_value;
static int holds_left_waiting;

static void stamp_held_start(uint64_t start) {
  if (hold_state != 2) return;
  __atomic_store_n(hold_start_ts, start, __ATOMIC_RELAXED);
  hold_state = 3;
}

static void spin_until(uint64_t until);
static CUresult fake_launch(unsigned blocks) {
  if (hold_state == 2) {
    static int64_t held_cached = -1;
    const uint64_t wait = env_us_as_ns("EACGM_FAKE_HELD_LAUNCH_US", &held_cached);
    if (wait > 0) spin_until(now_ns() + wait);
  }
  uint64_t work = kernel_ns() * (per_block() && blocks > 0 ? blocks : 1);
  uint64_t now = now_ns();
  if (work == 0) {
    stamp_held_start(now);
    return kSuccess;
  }
  uint64_t seen = __atomic_load_n(&gpu_busy_until_ns, __ATOMIC_RELAXED);
  uint64_t next;
  do {
    next = (seen > now ? seen : now) + work;
  } while (
      !__atomic_compare_exchange_n(&gpu_busy_until_ns, &seen, next, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  stamp_held_start(next - work);
  return kSuccess;
}

static int sync_spins(void) {
  static int cached = -1;
  return env_is_1("EACGM_FAKE_SYNC_SPIN", &cached);
}

static CUresult fake_sync(void) {
  uint64_t until = __atomic_load_n(&gpu_busy_until_ns, __ATOMIC_RELAXED);
  uint64_t now = now_ns();
  if (until > now && sync_spins()) {
    while (now_ns() < until) {
    }
  } else if (until > now) {
    struct timespec ts = {(time_t)((until - now) / 1000000000ull), (long)((until - now) % 1000000000ull)};
    nanosleep(&ts, NULL);
  }
  return kSuccess;
}

EXPORT CUresult cuInit(unsigned flags) {
  initialized = 1 + (int)flags;
  return kSuccess;
}
EXPORT CUresult cuDriverGetVersion(int* v) {
  if (v == NULL) return kInvalidValue;
  *v = 13000;
  return kSuccess;
}
EXPORT CUresult cuDeviceGetCount(int* n) {
  if (n == NULL) return kInvalidValue;
  *n = device_count();
  return kSuccess;
}
EXPORT CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (d == NULL) return kInvalidValue;
  if (ordinal < 0 || ordinal >= device_count()) return kInvalidDevice;
  *d = ordinal;
  return kSuccess;
}
EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice d) {
  if (bytes == NULL) return kInvalidValue;
  if (d < 0 || d >= device_count()) return kInvalidDevice;
  *bytes = 80ull << 30;
  return kSuccess;
}
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice d) {
  if (ctx == NULL) return kInvalidValue;
  if (d < 0 || d >= device_count()) return kInvalidDevice;
  *ctx = (CUcontext)(uintptr_t)(0x1000 + d);
  return kSuccess;
}
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { return d < 0 ? kInvalidDevice : kSuccess; }
EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  current_context = ctx;
  return kSuccess;
}
EXPORT CUresult cuCtxGetCurrent(CUcontext* ctx) {
  if (ctx == NULL) return kInvalidValue;
  *ctx = current_context;
  return kSuccess;
}
EXPORT CUresult cuCtxGetDevice(CUdevice* d) {
  if (d == NULL) return kInvalidValue;
  if (current_context == NULL) return kInvalidContext;
  *d = (CUdevice)((uintptr_t)current_context - 0x1000);
  return kSuccess;
}
EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  if (free_bytes == NULL || total == NULL) return kInvalidValue;
  if (current_context == NULL) return kInvalidContext;
  *total = 80ull << 30;
  *free_bytes = 79ull << 30;
  return kSuccess;
}

// Allocation paths.
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t size) { return fake_alloc(dptr, size); }
EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pitch, size_t width, size_t height,
                                   unsigned element) {
  if (pitch == NULL || element == 0) return kInvalidValue;
  *pitch = (width + 511) & ~(size_t)511;
  return fake_alloc(dptr, *pitch * height);
}
EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t size, unsigned flags) {
  (void)flags;
  CUresult r = fake_alloc(dptr, size);
  if (r == kSuccess) *dptr += 0x200;
  return r;
}
EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t size, CUstream stream) {
  (void)stream;
  CUresult r = fake_alloc(dptr, size);
  if (r == kSuccess) *dptr += 0x100;  // not 2 MiB aligned: told apart from cuMemAlloc_v2's
  return r;
}
EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t size, CUstream stream) {
  return cuMemAllocAsync(dptr, size, stream);
}
EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t size, void* pool, CUstream stream) {
  if (pool == NULL) return kInvalidValue;
  return cuMemAllocAsync(dptr, size, stream);
}
EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t size, void* pool, CUstream stream) {
  return cuMemAllocFromPoolAsync(dptr, size, pool, stream);
}
EXPORT CUresult cuMemAllocHost_v2(void** pp, size_t size) {
  if (pp == NULL) return kInvalidValue;
  CUdeviceptr d = 0;
  CUresult r = fake_alloc(&d, size);
  if (r == kSuccess) *pp = (void*)(uintptr_t)(d | 0x8000000000000000ull);
  return r;
}
EXPORT CUresult cuMemHostAlloc(void** pp, size_t size, unsigned flags) {
  (void)flags;
  return cuMemAllocHost_v2(pp, size);
}
EXPORT CUresult cuMemFreeHost(void* p) { return p == NULL ? kInvalidValue : kSuccess; }
EXPORT CUresult cuMemFree_v2(CUdeviceptr ptr) {
  frees_seen += ptr != 0;
  return kSuccess;
}
EXPORT CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream stream) {
  async_frees_seen += ptr != 0 && stream != NULL;
  return kSuccess;
}
EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr ptr, CUstream stream) { return cuMemFreeAsync(ptr, stream); }
EXPORT CUresult cuMemPoolTrimTo(void* pool, size_t keep) {
  (void)keep;
  return pool == NULL ? kInvalidValue : kSuccess;
}
// Virtual memory management: a handle stands for physical memory; map/unmap succeed.
EXPORT CUresult cuMemCreate(uint64_t* handle, size_t size, const void* prop, unsigned long long flags) {
  (void)flags;
  if (handle == NULL || prop == NULL) return kInvalidValue;
  CUdeviceptr d = 0;
  CUresult r = fake_alloc(&d, size);
  if (r == kSuccess) *handle = d >> 21;
  return r;
}
EXPORT CUresult cuMemRelease(uint64_t handle) { return handle == 0 ? kInvalidValue : kSuccess; }
EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, uint64_t handle,
                         unsigned long long flags) {
  (void)size, (void)offset, (void)flags;
  return ptr == 0 || handle == 0 ? kInvalidValue : kSuccess;
}
EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  (void)size;
  return ptr == 0 ? kInvalidValue : kSuccess;
}
// Arrays: an opaque handle each.
EXPORT CUresult cuArrayCreate_v2(void** array, const void* desc) {
  if (array == NULL || desc == NULL) return kInvalidValue;
  CUdeviceptr d = 0;
  CUresult r = fake_alloc(&d, 1);
  if (r == kSuccess) *array = (void*)(uintptr_t)d;
  return r;
}
EXPORT CUresult cuArray3DCreate_v2(void** array, const void* desc) { return cuArrayCreate_v2(array, desc); }
EXPORT CUresult cuArrayDestroy(void* array) { return array == NULL ? kInvalidValue : kSuccess; }

static void load_on_first_launch(void* f);

// Launch paths.
EXPORT CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, CUstream s, void** params, void** extra) {
  (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)s, (void)params, (void)extra;
  if (f == NULL) return kInvalidValue;
  load_on_first_launch(f);
  return fake_launch(gx);
}
EXPORT CUresult cuLaunchKernel_ptsz(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                    unsigned bz, unsigned shared, CUstream s, void** params, void** extra) {
  return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
}
EXPORT CUresult cuLaunchKernelEx(const void* config, void* f, void** params, void** extra) {
  (void)params, (void)extra;
  return config == NULL || f == NULL ? kInvalidValue : fake_launch(1);
}
EXPORT CUresult cuLaunchKernelEx_ptsz(const void* config, void* f, void** params, void** extra) {
  return cuLaunchKernelEx(config, f, params, extra);
}
EXPORT CUresult cuLaunchCooperativeKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                          unsigned by, unsigned bz, unsigned shared, CUstream s,
                                          void** params) {
  return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, params, NULL);
}
EXPORT CUresult cuLaunchCooperativeKernel_ptsz(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                               unsigned by, unsigned bz, unsigned shared, CUstream s,
                                               void** params) {
  return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, params, NULL);
}
EXPORT CUresult cuGraphLaunch(void* exec, CUstream s) {
  (void)s;
  return exec == NULL ? kInvalidValue : fake_launch(1);
}
EXPORT CUresult cuGraphLaunch_ptsz(void* exec, CUstream s) { return cuGraphLaunch(exec, s); }

// Synchronizing calls: wait for the pretend GPU queue.
EXPORT CUresult cuCtxSynchronize(void) { return fake_sync(); }
EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx) {
  (void)ctx;
  return fake_sync();
}
EXPORT CUresult cuStreamSynchronize(CUstream s) {
  (void)s;
  return fake_sync();
}
EXPORT CUresult cuStreamSynchronize_ptsz(CUstream s) { return cuStreamSynchronize(s); }
// Done (success) once the pretend queue has drained, else CUDA_ERROR_NOT_READY.
EXPORT CUresult cuStreamQuery(CUstream s) {
  (void)s;
  return now_ns() >= __atomic_load_n(&gpu_busy_until_ns, __ATOMIC_RELAXED) ? kSuccess : 600;
}
EXPORT CUresult cuStreamQuery_ptsz(CUstream s) { return cuStreamQuery(s); }
// Events are slots of a table; a handle outside it is someone else's (a test passing a
// made-up handle), synchronized as the whole queue.
typedef struct {
  uint64_t ts;
  int recorded;
  int used;
} FakeEvent;
enum { kMaxEvents = 8192 };
static FakeEvent events[kMaxEvents];
static uint64_t next_event;
static const uint64_t kEventBase = 0xe7000000ull;
static FakeEvent* fake_event(void* e) {
  uint64_t h = (uint64_t)(uintptr_t)e;
  if (h < kEventBase || h >= kEventBase + kMaxEvents * 16ull || (h - kEventBase) % 16 != 0) return NULL;
  FakeEvent* ev = &events[(h - kEventBase) / 16];
  return ev->used ? ev : NULL;
}
enum { kMaxOwnStreams = 64 };
static uint64_t own_streams[kMaxOwnStreams];
static int own_stream_count;
static uint64_t next_stream = 0x57000000ull;
static int is_idle_stream(CUstream s) {
  for (int i = 0; i < __atomic_load_n(&own_stream_count, __ATOMIC_ACQUIRE); ++i)
    if (own_streams[i] == (uint64_t)(uintptr_t)s) return 1;
  return 0;
}
EXPORT CUresult cuStreamCreate(CUstream* s, unsigned flags) {
  if (s == NULL) return kInvalidValue;
  uint64_t h = __atomic_add_fetch(&next_stream, 0x40, __ATOMIC_RELAXED);
  if ((flags & 1u) != 0) {  // CU_STREAM_NON_BLOCKING: idle, its events complete at once
    int i = __atomic_fetch_add(&own_stream_count, 0, __ATOMIC_RELAXED);
    if (i < kMaxOwnStreams) {
      own_streams[i] = h;
      __atomic_store_n(&own_stream_count, i + 1, __ATOMIC_RELEASE);
    }
  }
  *s = (CUstream)(uintptr_t)h;
  return kSuccess;
}
static __thread int events_created_here;
static int events_created;
static void spin_until(uint64_t until) {
  while (now_ns() < until) {
  }
}
static uint64_t event_create_ns(void) {
  static int64_t cached = -1;
  return env_us_as_ns("EACGM_FAKE_EVENT_CREATE_US", &cached);
}
EXPORT int eacgm_fake_events_created(int here) {
  return here ? events_created_here : __atomic_load_n(&events_created, __ATOMIC_RELAXED);
}
EXPORT CUresult cuEventCreate(void** e, unsigned flags) {
  (void)flags;
  if (e == NULL) return kInvalidValue;
  const uint64_t cost = event_create_ns();
  if (cost > 0) spin_until(now_ns() + cost);
  ++events_created_here;
  __atomic_fetch_add(&events_created, 1, __ATOMIC_RELAXED);
  uint64_t i = __atomic_fetch_add(&next_event, 1, __ATOMIC_RELAXED);
  if (i >= kMaxEvents) return kOutOfMemory;
  events[i].used = 1;
  *e = (void*)(uintptr_t)(kEventBase + i * 16);
  return kSuccess;
}
EXPORT CUresult cuEventDestroy_v2(void* e) {
  FakeEvent* ev = fake_event(e);
  if (ev == NULL) return kInvalidValue;
  ev->used = 0;
  return kSuccess;
}
static int no_holds(void) {
  static int cached = -1;
  return env_is_1("EACGM_FAKE_NO_HOLDS", &cached);
}
static void report_waiting_streams(void) {
  int n = __atomic_load_n(&holds_left_waiting, __ATOMIC_RELAXED);
  if (n > 0) fprintf(stderr, "fake libcuda: %d stream waits never released\n", n);
}
EXPORT CUresult cuMemHostRegister_v2(void* p, size_t bytes, unsigned flags) {
  (void)flags;
  return no_holds() ? kNotSupported : p == NULL || bytes == 0 ? kInvalidValue : kSuccess;
}
EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* d, void* p, unsigned flags) {
  (void)flags;
  if (no_holds()) return kNotSupported;
  if (d == NULL || p == NULL) return kInvalidValue;
  *d = (CUdeviceptr)(uintptr_t)p;
  return kSuccess;
}
EXPORT CUresult cuStreamWaitValue32_v2(CUstream s, CUdeviceptr addr, uint32_t value, unsigned flags) {
  (void)s;
  if (no_holds()) return kNotSupported;
  if (addr == 0 || flags != 0) return kInvalidValue;  // the hook waits with CU_STREAM_WAIT_VALUE_GEQ
  static int registered;
  if (!__atomic_exchange_n(&registered, 1, __ATOMIC_RELAXED)) atexit(report_waiting_streams);
  hold_state = 1;
  hold_word = (const uint32_t*)(uintptr_t)addr;
  hold_value = value;
  return kSuccess;
}
EXPORT CUresult cuEventRecord(void* e, CUstream s) {
  FakeEvent* ev = fake_event(e);
  if (ev == NULL) return kInvalidValue;
  if (hold_state >= 2) {  // the event after a held launch (or a failed one)
    if ((int32_t)(__atomic_load_n(hold_word, __ATOMIC_ACQUIRE) - hold_value) < 0)
      __atomic_fetch_add(&holds_left_waiting, 1, __ATOMIC_RELAXED);
    hold_state = 0;
  }
  uint64_t now = now_ns();
  uint64_t busy = __atomic_load_n(&gpu_busy_until_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&ev->ts, is_idle_stream(s) || busy < now ? now : busy, __ATOMIC_RELAXED);
  __atomic_store_n(&ev->recorded, 1, __ATOMIC_RELEASE);
  if (hold_state == 1) {
    hold_start_ts = &ev->ts;
    hold_state = 2;
  }
  return kSuccess;
}
EXPORT CUresult cuEventRecord_ptsz(void* e, CUstream s) { return cuEventRecord(e, s); }
EXPORT CUresult cuEventQuery(void* e) {
  FakeEvent* ev = fake_event(e);
  if (ev == NULL) return kInvalidValue;
  if (!__atomic_load_n(&ev->recorded, __ATOMIC_ACQUIRE)) return kSuccess;
  return now_ns() >= __atomic_load_n(&ev->ts, __ATOMIC_RELAXED) ? kSuccess : 600;  // CUDA_ERROR_NOT_READY
}
EXPORT CUresult cuEventElapsedTime(float* ms, void* start, void* end) {
  FakeEvent* a = fake_event(start);
  FakeEvent* b = fake_event(end);
  if (ms == NULL || a == NULL || b == NULL || !a->recorded || !b->recorded) return kInvalidValue;
  if (cuEventQuery(start) != kSuccess || cuEventQuery(end) != kSuccess) return 600;
  *ms = (float)(((double)(int64_t)(b->ts - a->ts)) / 1e6);
  return kSuccess;
}
EXPORT CUresult cuEventElapsedTime_v2(float* ms, void* start, void* end) {
  return cuEventElapsedTime(ms, start, end);
}
EXPORT CUresult cuEventSynchronize(void* e) {
  if (e == NULL) return kInvalidValue;
  FakeEvent* ev = fake_event(e);
  if (ev == NULL) return fake_sync();
  uint64_t until = __atomic_load_n(&ev->ts, __ATOMIC_RELAXED);
  uint64_t now = now_ns();
  if (until > now) {
    struct timespec ts = {(time_t)((until - now) / 1000000000ull), (long)((until - now) % 1000000000ull)};
    nanosleep(&ts, NULL);
  }
  return kSuccess;
}
EXPORT CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  (void)dst, (void)src, (void)n;
  return fake_sync();
}
EXPORT CUresult cuMemcpyDtoH_v2_ptds(void* dst, CUdeviceptr src, size_t n) {
  return cuMemcpyDtoH_v2(dst, src, n);
}
static CUstream capturing_stream;  // between cuStreamBeginCapture_v2 and cuStreamEndCapture
EXPORT CUresult cuStreamIsCapturing(CUstream s, int* status) {
  if (status == NULL) return kInvalidValue;
  // CU_STREAM_CAPTURE_STATUS_ACTIVE or _NONE
  *status = s != NULL && s == __atomic_load_n(&capturing_stream, __ATOMIC_ACQUIRE) ? 1 : 0;
  return kSuccess;
}
EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream s, int* status) { return cuStreamIsCapturing(s, status); }
EXPORT CUresult cuGetExportTable(const void** table, const void* id) {
  (void)table, (void)id;
  return kNotSupported;
}

// Names, memsets, copies and CUDA graphs (the fidelity integration tests; launches,
// cuMemcpyDtoH_v2 and cuGraphLaunch are above). Handles are distinct fake values; every
// call succeeds; nothing runs. Each function has its own body so that no two share an
// address (a uprobe per entry point).
typedef void* CUfunction;
typedef void* CUmodule;
typedef void* CUgraph;
typedef void* CUgraphExec;
typedef void* CUgraphNode;

static uint64_t next_handle = 0x5e0000;
static uint64_t work_seen;

static void* fake_handle(void) {
  next_handle += 0x40;
  return (void*)next_handle;
}

enum { kMaxFunctions = 256 };
static struct {
  void* handle;
  char name[256];
  int launched;
} functions[kMaxFunctions];
static int function_count;

// With $EACGM_FAKE_FIRST_LAUNCH_US, each function's first launch spins that long on the
// launching thread, as a real driver's lazy module loading does (milliseconds per module).
static void load_on_first_launch(void* f) {
  static int64_t cached = -1;
  int64_t us = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (us < 0) {
    const char* s = getenv("EACGM_FAKE_FIRST_LAUNCH_US");
    us = s ? (int64_t)atoll(s) : 0;
    if (us < 0) us = 0;
    __atomic_store_n(&cached, us, __ATOMIC_RELAXED);
  }
  if (us == 0) return;
  for (int i = 0; i < function_count; ++i) {
    if (functions[i].handle != f) continue;
    if (__atomic_exchange_n(&functions[i].launched, 1, __ATOMIC_RELAXED)) return;
    const uint64_t until = now_ns() + (uint64_t)us * 1000;
    while (now_ns() < until) {
    }
    return;
  }
}

EXPORT CUresult cuModuleGetFunction(CUfunction* f, CUmodule mod, const char* name) {
  (void)mod;
  if (f == NULL || name == NULL) return kInvalidValue;
  *f = fake_handle();
  if (function_count < kMaxFunctions) {
    functions[function_count].handle = *f;
    strncpy(functions[function_count].name, name, sizeof functions[0].name - 1);
    ++function_count;
  }
  return kSuccess;
}

EXPORT CUresult cuFuncGetName(const char** name, CUfunction f) {
  if (name == NULL) return kInvalidValue;
  for (int i = 0; i < function_count; ++i) {
    if (functions[i].handle == f) {
      *name = functions[i].name;
      return kSuccess;
    }
  }
  return kInvalidValue;
}

// cuLaunchKernel(f, gridX, gridY, gridZ, blockX, blockY, blockZ, shared, stream, params, extra)
EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t n, CUstream stream) {
  work_seen += dst + value + n + 1 + (uint64_t)(uintptr_t)stream;
  return kSuccess;
}

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n) {
  work_seen += dst + value + n + 2;
  return kSuccess;
}

EXPORT CUresult cuMemsetD2D16Async(CUdeviceptr dst, size_t pitch, unsigned short value, size_t width,
                                   size_t height, CUstream stream) {
  work_seen += dst + pitch + value + width + height + 3 + (uint64_t)(uintptr_t)stream;
  return kSuccess;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, CUstream stream) {
  work_seen += dst + (uint64_t)(uintptr_t)src + n + 4 + (uint64_t)(uintptr_t)stream;
  return kSuccess;
}

EXPORT CUresult cuStreamBeginCapture_v2(CUstream stream, int mode) {
  work_seen += (uint64_t)(uintptr_t)stream + (unsigned)mode + 6;
  if (stream == NULL) return kInvalidValue;  // the legacy stream cannot capture
  __atomic_store_n(&capturing_stream, stream, __ATOMIC_RELEASE);
  return kSuccess;
}

EXPORT CUresult cuStreamEndCapture(CUstream stream, CUgraph* graph) {
  if (graph == NULL) return kInvalidValue;
  work_seen += (uint64_t)(uintptr_t)stream + 7;
  __atomic_store_n(&capturing_stream, NULL, __ATOMIC_RELEASE);
  *graph = fake_handle();
  return kSuccess;
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec* exec, CUgraph graph, unsigned long long flags) {
  if (exec == NULL || graph == NULL) return kInvalidValue;
  work_seen += flags + 8;
  *exec = fake_handle();
  return kSuccess;
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec) {
  work_seen += (uint64_t)(uintptr_t)exec + 10;
  return kSuccess;
}

EXPORT CUresult cuGraphDestroy(CUgraph graph) {
  work_seen += (uint64_t)(uintptr_t)graph + 11;
  return kSuccess;
}

// cuGetProcAddress: name + version + per-thread flag -> entry point, as the driver's
// own table does (CUDA 12+ runtimes get every function this way).
EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, uint64_t flags, int* status);
EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, uint64_t flags);

typedef void (*any_fn)(void);
struct ProcEntry {
  const char* name;
  int version;
  int per_thread;
  any_fn fn;
};
#define E(n, v, p, f) \
  { n, v, p, (any_fn)(f) }
static const struct ProcEntry kProcs[] = {
    E("cuInit", 2000, 0, cuInit),
    E("cuDriverGetVersion", 2020, 0, cuDriverGetVersion),
    E("cuDeviceGetCount", 2000, 0, cuDeviceGetCount),
    E("cuDeviceGet", 2000, 0, cuDeviceGet),
    E("cuDeviceTotalMem", 3020, 0, cuDeviceTotalMem_v2),
    E("cuDevicePrimaryCtxRetain", 7000, 0, cuDevicePrimaryCtxRetain),
    E("cuDevicePrimaryCtxRelease", 11000, 0, cuDevicePrimaryCtxRelease_v2),
    E("cuCtxSetCurrent", 4000, 0, cuCtxSetCurrent),
    E("cuCtxGetCurrent", 4000, 0, cuCtxGetCurrent),
    E("cuCtxGetDevice", 2000, 0, cuCtxGetDevice),
    E("cuMemGetInfo", 3020, 0, cuMemGetInfo_v2),
    E("cuMemAlloc", 3020, 0, cuMemAlloc_v2),
    E("cuMemAllocPitch", 3020, 0, cuMemAllocPitch_v2),
    E("cuMemAllocManaged", 6000, 0, cuMemAllocManaged),
    E("cuMemAllocAsync", 11020, 0, cuMemAllocAsync),
    E("cuMemAllocAsync", 11020, 1, cuMemAllocAsync_ptsz),
    E("cuMemAllocFromPoolAsync", 11020, 0, cuMemAllocFromPoolAsync),
    E("cuMemAllocFromPoolAsync", 11020, 1, cuMemAllocFromPoolAsync_ptsz),
    E("cuMemAllocHost", 3020, 0, cuMemAllocHost_v2),
    E("cuMemHostAlloc", 2020, 0, cuMemHostAlloc),
    E("cuMemFreeHost", 2000, 0, cuMemFreeHost),
    E("cuMemFree", 3020, 0, cuMemFree_v2),
    E("cuMemFreeAsync", 11020, 0, cuMemFreeAsync),
    E("cuMemFreeAsync", 11020, 1, cuMemFreeAsync_ptsz),
    E("cuMemPoolTrimTo", 11020, 0, cuMemPoolTrimTo),
    E("cuMemCreate", 10020, 0, cuMemCreate),
    E("cuMemRelease", 10020, 0, cuMemRelease),
    E("cuMemMap", 10020, 0, cuMemMap),
    E("cuMemUnmap", 10020, 0, cuMemUnmap),
    E("cuArrayCreate", 3020, 0, cuArrayCreate_v2),
    E("cuArray3DCreate", 3020, 0, cuArray3DCreate_v2),
    E("cuArrayDestroy", 2000, 0, cuArrayDestroy),
    E("cuLaunchKernel", 4000, 0, cuLaunchKernel),
    E("cuLaunchKernel", 7000, 1, cuLaunchKernel_ptsz),
    E("cuLaunchKernelEx", 11060, 0, cuLaunchKernelEx),
    E("cuLaunchKernelEx", 11060, 1, cuLaunchKernelEx_ptsz),
    E("cuLaunchCooperativeKernel", 9000, 0, cuLaunchCooperativeKernel),
    E("cuLaunchCooperativeKernel", 9000, 1, cuLaunchCooperativeKernel_ptsz),
    E("cuGraphLaunch", 10000, 0, cuGraphLaunch),
    E("cuGraphLaunch", 10000, 1, cuGraphLaunch_ptsz),
    E("cuCtxSynchronize", 2000, 0, cuCtxSynchronize),
    E("cuCtxSynchronize", 13000, 0, cuCtxSynchronize_v2),
    E("cuStreamSynchronize", 2000, 0, cuStreamSynchronize),
    E("cuStreamSynchronize", 7000, 1, cuStreamSynchronize_ptsz),
    E("cuEventSynchronize", 2000, 0, cuEventSynchronize),
    E("cuMemcpyDtoH", 3020, 0, cuMemcpyDtoH_v2),
    E("cuMemcpyDtoH", 7000, 1, cuMemcpyDtoH_v2_ptds),
    E("cuStreamIsCapturing", 10000, 0, cuStreamIsCapturing),
    E("cuStreamIsCapturing", 10000, 1, cuStreamIsCapturing_ptsz),
    E("cuGetExportTable", 3000, 0, cuGetExportTable),
    E("cuStreamCreate", 2000, 0, cuStreamCreate),
    E("cuEventCreate", 2000, 0, cuEventCreate),
    E("cuEventDestroy", 4000, 0, cuEventDestroy_v2),
    E("cuEventRecord", 2000, 0, cuEventRecord),
    E("cuEventRecord", 7000, 1, cuEventRecord_ptsz),
    E("cuEventQuery", 2000, 0, cuEventQuery),
    E("cuStreamQuery", 2000, 0, cuStreamQuery),
    E("cuStreamQuery", 7000, 1, cuStreamQuery_ptsz),
    E("cuEventElapsedTime", 2000, 0, cuEventElapsedTime),
    E("cuEventElapsedTime", 12080, 0, cuEventElapsedTime_v2),
    E("cuModuleGetFunction", 2000, 0, cuModuleGetFunction),
    E("cuFuncGetName", 12030, 0, cuFuncGetName),
    E("cuStreamBeginCapture", 10010, 0, cuStreamBeginCapture_v2),
    E("cuStreamEndCapture", 10000, 0, cuStreamEndCapture),
    E("cuGetProcAddress", 11030, 0, cuGetProcAddress),
    E("cuGetProcAddress", 12000, 0, cuGetProcAddress_v2),
};
#undef E

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, uint64_t flags, int* status) {
  if (symbol == NULL || pfn == NULL) return kInvalidValue;
  *pfn = NULL;
  int want_pt = (flags & 2) != 0;  // CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
  const struct ProcEntry* best = NULL;
  int found_name = 0;
  for (size_t i = 0; i < sizeof kProcs / sizeof kProcs[0]; ++i) {
    const struct ProcEntry* e = &kProcs[i];
    if (strcmp(e->name, symbol) != 0) continue;
    found_name = 1;
    if (e->version > version) continue;
    if (e->per_thread && !want_pt) continue;
    if (best == NULL || e->per_thread > best->per_thread ||
        (e->per_thread == best->per_thread && e->version > best->version))
      best = e;
  }
  if (best == NULL) {
    if (status) *status = found_name ? 2 : 1;  // VERSION_NOT_SUFFICIENT : SYMBOL_NOT_FOUND
    return kNotFound;
  }
  *pfn = (void*)best->fn;
  if (status) *status = 0;
  return kSuccess;
}

CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, uint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
