// The pre/post hooks named in hooked_functions.def. Each policy has a State that carries
// what pre learned to post; pre may refuse the call (its error is returned and the
// driver is not called); post sees every result, failures included, to undo a
// reservation. Overloads pick the arguments each signature has. A memory policy's
// `memory` reads, after the call, what the agent's ledger keeps of it (memory_calls.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>

#include "govern/hook/cuda_types.h"
#include "govern/hook/gpu_timer.h"
#include "govern/hook/hook_runtime.h"
#include "govern/hook/memory_calls.h"
#include "govern/hook/memory_hooks.h"
#include "govern/hook/quota_gate.h"

namespace eacgm::govern::hook {

struct Passthrough {
  struct State {};
  template <typename... A>
  static CUresult pre(State&, A...) {
    return CUDA_SUCCESS;
  }
  template <typename... A>
  static void post(State&, CUresult, A...) {}
};

// cuMemAlloc_v2, cuMemAllocManaged, cuMemAllocAsync(_ptsz), cuMemAllocFromPoolAsync(_ptsz):
// device memory on the current context's device.
struct DeviceAlloc {
  using State = Reservation;
  template <typename... Rest>
  static CUresult pre(State& s, CUdeviceptr* dptr, size_t bytes, Rest...) {
    if (dptr == nullptr) return CUDA_SUCCESS;  // the driver reports the bad argument
    return reserve_on_current_device(s, bytes);
  }
  template <typename... Rest>
  static void post(State& s, CUresult r, CUdeviceptr* dptr, size_t bytes, Rest...) {
    settle(s, r, runtime().device_allocs, dptr != nullptr ? *dptr : 0, bytes);
  }
  template <typename... Rest>
  static MemoryArgs memory(CUresult r, CUdeviceptr* dptr, size_t bytes, Rest...) {
    return {r == CUDA_SUCCESS && dptr != nullptr ? *dptr : 0, bytes, 0};
  }
};

// cuMemAllocPitch_v2: reserves the widest pitch the driver may choose (rows rounded up
// to 512 bytes), then settles on the pitch it chose.
struct PitchAlloc {
  using State = Reservation;
  static CUresult pre(State& s, CUdeviceptr* dptr, size_t* pitch, size_t width, size_t height, unsigned) {
    if (dptr == nullptr || pitch == nullptr) return CUDA_SUCCESS;
    return reserve_on_current_device(s, ((static_cast<std::uint64_t>(width) + 511) & ~511ull) * height);
  }
  static void post(State& s, CUresult r, CUdeviceptr* dptr, size_t* pitch, size_t, size_t height, unsigned) {
    std::uint64_t actual =
        (r == CUDA_SUCCESS && pitch != nullptr) ? static_cast<std::uint64_t>(*pitch) * height : 0;
    settle(s, r, runtime().device_allocs, dptr != nullptr ? *dptr : 0, actual);
  }
  static MemoryArgs memory(CUresult r, CUdeviceptr* dptr, size_t* pitch, size_t, size_t height, unsigned) {
    if (r != CUDA_SUCCESS || dptr == nullptr || pitch == nullptr) return {0, 0, height};
    return {*dptr, *pitch, height};
  }
};

// cuMemFree_v2, cuMemFreeAsync(_ptsz). A stream-ordered free is counted when it is
// issued: no later allocation can be served from that memory before the stream reaches
// the free, and the pool keeps it only as cached memory of ours.
struct DeviceFree {
  using State = PendingFree;
  template <typename... Rest>
  static CUresult pre(State& s, CUdeviceptr dptr, Rest...) {
    begin_free(s, runtime().device_allocs, dptr);
    return CUDA_SUCCESS;
  }
  template <typename... Rest>
  static void post(State& s, CUresult r, CUdeviceptr, Rest...) {
    end_free(s, r, runtime().device_allocs);
  }
  template <typename... Rest>
  static MemoryArgs memory(CUresult, CUdeviceptr dptr, Rest...) {
    return {dptr, 0, 0};
  }
};

// cuMemCreate: physical memory on the device its properties name (not the current
// context's: VMM allocations may be made for any device).
struct PhysicalAlloc {
  using State = Reservation;
  static CUresult pre(State& s, CUmemGenericAllocationHandle* handle, size_t bytes,
                      const CUmemAllocationProp* prop, unsigned long long) {
    if (handle == nullptr || prop == nullptr || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
      return CUDA_SUCCESS;  // host memory, or an argument the driver will refuse
    return reserve_on_device(s, prop->location.id, bytes);
  }
  static void post(State& s, CUresult r, CUmemGenericAllocationHandle* handle, size_t bytes,
                   const CUmemAllocationProp*, unsigned long long) {
    settle(s, r, runtime().physical_allocs, handle != nullptr ? *handle : 0, bytes);
  }
  static MemoryArgs memory(CUresult r, CUmemGenericAllocationHandle* handle, size_t bytes,
                           const CUmemAllocationProp*, unsigned long long) {
    return {r == CUDA_SUCCESS && handle != nullptr ? *handle : 0, bytes, 0};
  }
};

struct PhysicalFree {
  using State = PendingFree;
  static CUresult pre(State& s, CUmemGenericAllocationHandle handle) {
    begin_free(s, runtime().physical_allocs, handle);
    return CUDA_SUCCESS;
  }
  static void post(State& s, CUresult r, CUmemGenericAllocationHandle) {
    end_free(s, r, runtime().physical_allocs);
  }
  static MemoryArgs memory(CUresult, CUmemGenericAllocationHandle handle) { return {handle, 0, 0}; }
};

struct ArrayAlloc {
  using State = Reservation;
  template <typename Desc>
  static CUresult pre(State& s, CUarray* array, const Desc* desc) {
    if (array == nullptr || desc == nullptr) return CUDA_SUCCESS;
    return reserve_on_current_device(s, array_bytes(desc));
  }
  template <typename Desc>
  static void post(State& s, CUresult r, CUarray* array, const Desc* desc) {
    settle(s, r, runtime().arrays, array != nullptr ? reinterpret_cast<std::uintptr_t>(*array) : 0,
           array_bytes(desc));
  }
};

struct ArrayFree {
  using State = PendingFree;
  static CUresult pre(State& s, CUarray array) {
    begin_free(s, runtime().arrays, reinterpret_cast<std::uintptr_t>(array));
    return CUDA_SUCCESS;
  }
  static void post(State& s, CUresult r, CUarray) { end_free(s, r, runtime().arrays); }
};

struct HostAlloc {
  struct State {};
  template <typename... Rest>
  static CUresult pre(State&, void**, size_t, Rest...) {
    return CUDA_SUCCESS;
  }
  template <typename... Rest>
  static void post(State&, CUresult r, void** pp, size_t bytes, Rest...) {
    host_allocated(r, pp != nullptr ? *pp : nullptr, bytes);
  }
  template <typename... Rest>
  static MemoryArgs memory(CUresult r, void** pp, size_t bytes, Rest...) {
    return {r == CUDA_SUCCESS && pp != nullptr ? reinterpret_cast<std::uintptr_t>(*pp) : 0, bytes, 0};
  }
};

struct HostFree {
  using State = PendingFree;
  static CUresult pre(State& s, void* p) {
    begin_host_free(s, p);
    return CUDA_SUCCESS;
  }
  static void post(State& s, CUresult r, void*) { end_host_free(s, r); }
  static MemoryArgs memory(CUresult, void* p) { return {reinterpret_cast<std::uintptr_t>(p), 0, 0}; }
};

struct MemInfo {
  struct State {};
  static CUresult pre(State&, size_t*, size_t*) { return CUDA_SUCCESS; }
  static void post(State&, CUresult r, size_t* free_bytes, size_t* total) {
    if (r == CUDA_SUCCESS && free_bytes != nullptr && total != nullptr) limit_mem_info(free_bytes, total);
  }
};

struct TotalMem {
  struct State {};
  static CUresult pre(State&, size_t*, CUdevice) { return CUDA_SUCCESS; }
  static void post(State&, CUresult r, size_t* bytes, CUdevice device) {
    if (r == CUDA_SUCCESS && bytes != nullptr) limit_total_mem(bytes, device);
  }
};

// Launches: the quota gate first (a relaxed load when no scheduler is configured), then
// GPU timing (another when it is off). PerThread: the _ptsz variants, whose stream 0 is
// the calling thread's default stream.
template <bool PerThread>
struct LaunchOn {
  using State = TimedLaunch;
  template <typename... A>
  static CUresult pre(State& s, A... a) {
    (void)runtime();  // the first call may be a launch: the quota gate is set up with the runtime
    CUresult r = launch_gate(stream_of(a...));
    if (r == CUDA_SUCCESS) {
      gpu_time_before(s, key_of(a...), stream_of(a...), PerThread, is_graph(a...));
      if (__builtin_expect(s.start != nullptr, 0)) s.shaped = shape_of(s.shape, a...);
    }
    return r;
  }
  template <typename... A>
  static void post(State& s, CUresult r, A...) {
    gpu_time_after(s, r);
  }

 private:
  // cuLaunchKernel(_ptsz) and cuLaunchCooperativeKernel(_ptsz): the 9th argument.
  template <typename... Rest>
  static CUstream stream_of(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            CUstream s, Rest...) {
    return s;
  }
  static CUstream stream_of(const CUlaunchConfig* config, CUfunction, void**, void**) {
    return config != nullptr ? config->hStream : nullptr;
  }
  static CUstream stream_of(CUgraphExec, CUstream s) { return s; }
  template <typename... Rest>
  static std::uintptr_t key_of(CUfunction f, Rest...) {
    return reinterpret_cast<std::uintptr_t>(f);
  }
  static std::uintptr_t key_of(const CUlaunchConfig* config, CUfunction f, void**, void**) {
    return config != nullptr ? reinterpret_cast<std::uintptr_t>(f) : 0;
  }
  static std::uintptr_t key_of(CUgraphExec exec, CUstream) { return reinterpret_cast<std::uintptr_t>(exec); }
  // The launch's grid, block and dynamic shared memory (none for a graph).
  template <typename... Rest>
  static bool shape_of(gpu_time::LaunchShape& out, CUfunction, unsigned gx, unsigned gy, unsigned gz,
                       unsigned bx, unsigned by, unsigned bz, unsigned shared, Rest...) {
    out = gpu_time::LaunchShape{{gx, gy, gz}, {bx, by, bz}, shared, 0};
    return true;
  }
  static bool shape_of(gpu_time::LaunchShape& out, const CUlaunchConfig* c, CUfunction, void**, void**) {
    if (c == nullptr) return false;
    out = gpu_time::LaunchShape{{c->gridDimX, c->gridDimY, c->gridDimZ},
                                {c->blockDimX, c->blockDimY, c->blockDimZ},
                                c->sharedMemBytes,
                                0};
    return true;
  }
  static bool shape_of(gpu_time::LaunchShape&, CUgraphExec, CUstream) { return false; }
  template <typename... A>
  static bool is_graph(A...) {
    return false;
  }
  static bool is_graph(CUgraphExec, CUstream) { return true; }
};
using Launch = LaunchOn<false>;
using LaunchPerThread = LaunchOn<true>;

// Stream captures: GPU timing pauses while one is underway (a capture in global mode
// forbids event calls from other threads).
struct CaptureBegin {
  struct State {};
  template <typename... A>
  static CUresult pre(State&, A...) {
    gpu_time_capture_begin();
    return CUDA_SUCCESS;
  }
  template <typename... A>
  static void post(State&, CUresult r, A...) {
    if (r != CUDA_SUCCESS) gpu_time_capture_end(true);  // no capture began
  }
};

struct CaptureEnd : Passthrough {
  template <typename... A>
  static void post(State&, CUresult r, A...) {
    // These end the capture, valid or not; other errors (not capturing, a bad stream,
    // the wrong thread) leave it as it was.
    gpu_time_capture_end(r == CUDA_SUCCESS || r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED ||
                         r == CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
  }
};

// A context going away (destroyed, or the primary one released or reset): GPU timing
// forgets its events first.
struct ContextGone : Passthrough {
  template <typename... A>
  static CUresult pre(State&, A...) {
    gpu_time_context_gone();
    return CUDA_SUCCESS;
  }
};

struct SyncPoint : Passthrough {
  template <typename... A>
  static void post(State&, CUresult r, A...) {
    if (r == CUDA_SUCCESS) sync_point();
  }
};

// Copies and memsets: nothing to govern. The wrapper counts each call with its bytes
// (call_tally.h) for a process on its own copy of the driver.
struct Counted : Passthrough {
  template <typename... A>
  static CUresult pre(State&, A...) {
    (void)runtime();  // the first hooked call may be a copy: the counts start with the runtime
    return CUDA_SUCCESS;
  }
};

// 1D copies: the byte count is argument I.
template <std::size_t I>
struct CopyBytes : Counted {
  template <typename... A>
  static std::uint64_t bytes(A... a) {
    return static_cast<std::uint64_t>(std::get<I>(std::tuple<A...>(a...)));
  }
};

// 2D and 3D copies: the extent in their parameter struct.
struct CopyShape : Counted {
  template <typename... Rest>
  static std::uint64_t bytes(const CUDA_MEMCPY2D* c, Rest...) {
    return c != nullptr ? std::uint64_t{c->WidthInBytes} * c->Height : 0;
  }
  template <typename... Rest>
  static std::uint64_t bytes(const CUDA_MEMCPY3D* c, Rest...) {
    return c != nullptr ? std::uint64_t{c->WidthInBytes} * c->Height * c->Depth : 0;
  }
  template <typename... Rest>
  static std::uint64_t bytes(const CUDA_MEMCPY3D_PEER* c, Rest...) {
    return c != nullptr ? std::uint64_t{c->WidthInBytes} * c->Height * c->Depth : 0;
  }
};

// cuMemsetD8/16/32(_v2, Async): `count` elements of `Size` bytes.
template <std::uint64_t Size>
struct MemsetBytes : Counted {
  template <typename V, typename... Rest>
  static std::uint64_t bytes(CUdeviceptr, V, size_t count, Rest...) {
    return std::uint64_t{count} * Size;
  }
};

// cuMemsetD2D8/16/32(_v2, Async): `width` elements of `Size` bytes in each of `height` rows.
template <std::uint64_t Size>
struct Memset2DBytes : Counted {
  template <typename V, typename... Rest>
  static std::uint64_t bytes(CUdeviceptr, size_t, V, size_t width, size_t height, Rest...) {
    return std::uint64_t{width} * height * Size;
  }
};

// cuMemcpyDtoH_v2(_ptds): a synchronizing copy, counted with its bytes.
struct SyncCopy : SyncPoint {
  static std::uint64_t bytes(void*, CUdeviceptr, size_t bytes) { return bytes; }
};

struct NvmlMemInfo {
  struct State {};
  template <typename M>
  static nvmlReturn_t pre(State&, nvmlDevice_t, M*) {
    return kNvmlSuccess;
  }
  template <typename M>
  static void post(State&, nvmlReturn_t r, nvmlDevice_t dev, M* mem) {
    if (r == kNvmlSuccess && mem != nullptr) limit_nvml_memory(dev, &mem->total, &mem->free, &mem->used);
  }
};

}  // namespace eacgm::govern::hook
