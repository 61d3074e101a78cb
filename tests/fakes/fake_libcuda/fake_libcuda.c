// A FAKE libcuda.so.1 for the memory ledger and graph integration tests: no GPU, no driver. It
// exports the few driver entry points the test program calls, under the names and
// signatures of the CUDA driver API, so eacgm's cuda_driver catalog attaches to it like
// to the real library. Allocations succeed and hand out distinct fake addresses (never
// dereferenceable); a size over 1 TiB fails with CUDA_ERROR_OUT_OF_MEMORY; frees
// succeed. Nothing here is a CUDA implementation.
#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;
typedef void* CUstream;

enum { kSuccess = 0, kOutOfMemory = 2, kInvalidValue = 1 };

// Fake address space: 2 MiB-aligned, increasing, never reused.
static uint64_t next_address = 0x7e0000000000ull;
static uint64_t frees_seen;
static uint64_t async_frees_seen;
static int initialized;

static CUresult fake_alloc(CUdeviceptr* dptr, size_t size) {
  if (dptr == NULL) return kInvalidValue;
  if (size > (1ull << 40)) return kOutOfMemory;
  *dptr = next_address;
  next_address += (size + (2ull << 20) - 1) & ~((2ull << 20) - 1);
  if (size == 0) next_address += 2ull << 20;
  return kSuccess;
}

__attribute__((visibility("default"), noinline)) CUresult cuInit(unsigned flags) {
  initialized = 1 + (int)flags;
  return kSuccess;
}

__attribute__((visibility("default"), noinline)) CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t size) {
  return fake_alloc(dptr, size);
}

__attribute__((visibility("default"), noinline)) CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t size,
                                                                          CUstream stream) {
  (void)stream;
  CUresult r = fake_alloc(dptr, size);
  if (r == kSuccess) *dptr += 0x100;  // not 2 MiB aligned: told apart from cuMemAlloc_v2's
  return r;
}

__attribute__((visibility("default"), noinline)) CUresult cuMemFree_v2(CUdeviceptr ptr) {
  frees_seen += ptr != 0;
  return kSuccess;
}

__attribute__((visibility("default"), noinline)) CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream stream) {
  async_frees_seen += ptr != 0 && stream != NULL;
  return kSuccess;
}

// Work, names and CUDA graphs (the graph and names integration test). Handles are
// distinct fake values; every call succeeds; nothing runs. Each function has its own
// body so that no two share an address (a uprobe per entry point).
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

__attribute__((visibility("default"), noinline)) CUresult cuModuleGetFunction(CUfunction* f, CUmodule mod,
                                                                              const char* name) {
  (void)mod;
  if (f == NULL || name == NULL) return kInvalidValue;
  *f = fake_handle();
  return kSuccess;
}

// cuLaunchKernel(f, gridX, gridY, gridZ, blockX, blockY, blockZ, shared, stream, params, extra)
__attribute__((visibility("default"), noinline)) CUresult cuLaunchKernel(
    CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
    unsigned shared, CUstream stream, void** params, void** extra) {
  (void)params;
  (void)extra;
  work_seen += (uint64_t)(uintptr_t)f + gx + gy + gz + bx + by + bz + shared + (uint64_t)(uintptr_t)stream;
  return f == NULL ? kInvalidValue : kSuccess;
}

__attribute__((visibility("default"), noinline)) CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value,
                                                                           size_t n, CUstream stream) {
  work_seen += dst + value + n + 1 + (uint64_t)(uintptr_t)stream;
  return kSuccess;
}

__attribute__((visibility("default"), noinline)) CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value,
                                                                        size_t n) {
  work_seen += dst + value + n + 2;
  return kSuccess;
}

__attribute__((visibility("default"), noinline)) CUresult cuMemsetD2D16Async(CUdeviceptr dst, size_t pitch,
                                                                             unsigned short value,
                                                                             size_t width, size_t height,
                                                                             CUstream stream) {
  work_seen += dst + pitch + value + width + height + 3 + (uint64_t)(uintptr_t)stream;
  return kSuccess;
}

__attribute__((visibility("default"), noinline)) CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst,
                                                                               const void* src, size_t n,
                                                                               CUstream stream) {
  work_seen += dst + (uint64_t)(uintptr_t)src + n + 4 + (uint64_t)(uintptr_t)stream;
  return kSuccess;
}

__attribute__((visibility("default"), noinline)) CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src,
                                                                          size_t n) {
  work_seen += (uint64_t)(uintptr_t)dst + src + n + 5;
  return kSuccess;
}

__attribute__((visibility("default"), noinline)) CUresult cuStreamBeginCapture_v2(CUstream stream, int mode) {
  work_seen += (uint64_t)(uintptr_t)stream + (unsigned)mode + 6;
  return stream == NULL ? kInvalidValue : kSuccess;  // the legacy stream cannot capture
}

__attribute__((visibility("default"), noinline)) CUresult cuStreamEndCapture(CUstream stream,
                                                                             CUgraph* graph) {
  if (graph == NULL) return kInvalidValue;
  work_seen += (uint64_t)(uintptr_t)stream + 7;
  *graph = fake_handle();
  return kSuccess;
}

__attribute__((visibility("default"), noinline)) CUresult cuGraphInstantiateWithFlags(
    CUgraphExec* exec, CUgraph graph, unsigned long long flags) {
  if (exec == NULL || graph == NULL) return kInvalidValue;
  work_seen += flags + 8;
  *exec = fake_handle();
  return kSuccess;
}

__attribute__((visibility("default"), noinline)) CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  work_seen += (uint64_t)(uintptr_t)exec + (uint64_t)(uintptr_t)stream + 9;
  return exec == NULL ? kInvalidValue : kSuccess;
}

__attribute__((visibility("default"), noinline)) CUresult cuGraphExecDestroy(CUgraphExec exec) {
  work_seen += (uint64_t)(uintptr_t)exec + 10;
  return kSuccess;
}

__attribute__((visibility("default"), noinline)) CUresult cuGraphDestroy(CUgraph graph) {
  work_seen += (uint64_t)(uintptr_t)graph + 11;
  return kSuccess;
}
