// A FAKE libcuda.so.1 for the memory ledger's integration test: no GPU, no driver. It
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
