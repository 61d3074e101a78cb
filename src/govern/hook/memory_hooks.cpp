// Memory accounting against the per-device limits: reservations, frees and the view
// that cuMemGetInfo, cuDeviceTotalMem and NVML report.
#include "govern/hook/memory_hooks.h"

#include <algorithm>

#include "govern/hook/hook_runtime.h"
#include "govern/hook/quota_gate.h"
#include "govern/hook/real_functions.h"

namespace eacgm::govern::hook {

CUresult reserve_on_device(Reservation& r, int device, std::uint64_t bytes) {
  HookRuntime& rt = runtime();
  if (!DeviceLedger::valid(device)) return CUDA_SUCCESS;
  if (!rt.ledger.try_reserve(device, bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
  // The tenant's account at the scheduler (all its processes share it), if any.
  if (!scheduler_reserve(device, bytes)) {
    rt.ledger.release(device, bytes);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  r.device = device;
  r.bytes = bytes;
  return CUDA_SUCCESS;
}

CUresult reserve_on_current_device(Reservation& r, std::uint64_t bytes) {
  int device = -1;
  if (real_current_device(&device) != CUDA_SUCCESS) return CUDA_SUCCESS;
  return reserve_on_device(r, device, bytes);
}

void settle(Reservation& r, CUresult result, AllocationTable& table, std::uint64_t key,
            std::uint64_t actual_bytes) {
  if (r.device < 0) return;
  HookRuntime& rt = runtime();
  if (result != CUDA_SUCCESS) {
    rt.ledger.release(r.device, r.bytes);
    scheduler_release(r.device, r.bytes);
    return;
  }
  if (actual_bytes > r.bytes) {
    rt.ledger.add(r.device, actual_bytes - r.bytes);
    scheduler_add(r.device, actual_bytes - r.bytes);
  } else if (actual_bytes < r.bytes) {
    rt.ledger.release(r.device, r.bytes - actual_bytes);
    scheduler_release(r.device, r.bytes - actual_bytes);
  }
  table.insert(key, Allocation{actual_bytes, r.device});
}

void begin_free(PendingFree& f, AllocationTable& table, std::uint64_t key) {
  f.key = key;
  f.known = key != 0 && table.take(key, &f.allocation);
}

void end_free(PendingFree& f, CUresult result, AllocationTable& table) {
  if (!f.known) return;
  if (result != CUDA_SUCCESS) {
    table.insert(f.key, f.allocation);
    return;
  }
  runtime().ledger.release(f.allocation.device, f.allocation.bytes);
  scheduler_release(f.allocation.device, f.allocation.bytes);
}

void host_allocated(CUresult result, void* p, std::uint64_t bytes) {
  if (result != CUDA_SUCCESS || p == nullptr) return;
  HookRuntime& rt = runtime();
  rt.host_allocs.insert(reinterpret_cast<std::uintptr_t>(p), Allocation{bytes, -1});
  rt.host_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

void begin_host_free(PendingFree& f, void* p) {
  begin_free(f, runtime().host_allocs, reinterpret_cast<std::uintptr_t>(p));
}

void end_host_free(PendingFree& f, CUresult result) {
  if (!f.known) return;
  HookRuntime& rt = runtime();
  if (result != CUDA_SUCCESS) {
    rt.host_allocs.insert(f.key, f.allocation);
    return;
  }
  std::uint64_t cur = rt.host_bytes.load(std::memory_order_relaxed);
  while (
      !rt.host_bytes.compare_exchange_weak(cur, cur >= f.allocation.bytes ? cur - f.allocation.bytes : 0)) {
  }
}

namespace {

std::uint64_t format_bytes(CUarray_format f) {
  switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
      return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
      return 2;
    default:
      return 4;  // 32-bit formats; compressed and video formats are counted generously
  }
}

std::uint64_t product(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? ~0ull : out;
}

}  // namespace

std::uint64_t array_bytes(const CUDA_ARRAY_DESCRIPTOR* d) {
  if (d == nullptr) return 0;
  return product(product(product(d->Width, std::max<std::size_t>(d->Height, 1)), d->NumChannels),
                 format_bytes(d->Format));
}

std::uint64_t array_bytes(const CUDA_ARRAY3D_DESCRIPTOR* d) {
  if (d == nullptr) return 0;
  std::uint64_t cells =
      product(product(d->Width, std::max<std::size_t>(d->Height, 1)), std::max<std::size_t>(d->Depth, 1));
  return product(product(cells, d->NumChannels), format_bytes(d->Format));
}

void limit_mem_info(size_t* free_bytes, size_t* total) {
  int device = -1;
  if (real_current_device(&device) != CUDA_SUCCESS || !DeviceLedger::valid(device)) return;
  HookRuntime& rt = runtime();
  std::uint64_t limit = effective_limit(device, rt.ledger.limit(device));
  MemoryView v = limited_view(limit, effective_used(device, rt.ledger.used(device)), *free_bytes, *total);
  *free_bytes = v.free;
  *total = v.total;
}

void limit_total_mem(size_t* bytes, CUdevice device) {
  if (!DeviceLedger::valid(device)) return;
  HookRuntime& rt = runtime();
  std::uint64_t limit = effective_limit(device, rt.ledger.limit(device));
  if (limit != kNoLimit) *bytes = std::min<std::uint64_t>(*bytes, limit);
}

void limit_nvml_memory(nvmlDevice_t nvml_device, unsigned long long* total, unsigned long long* free_bytes,
                       unsigned long long* used) {
  int device = cuda_ordinal_of(nvml_device);
  if (!DeviceLedger::valid(device)) return;
  HookRuntime& rt = runtime();
  std::uint64_t limit = effective_limit(device, rt.ledger.limit(device));
  if (limit == kNoLimit) return;
  std::uint64_t in_use = effective_used(device, rt.ledger.used(device));
  MemoryView v = limited_view(limit, in_use, *free_bytes, *total);
  *total = v.total;
  *free_bytes = v.free;
  *used = std::min<std::uint64_t>(in_use, v.total);
}

}  // namespace eacgm::govern::hook
