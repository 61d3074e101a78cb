// The CUDA driver catalog (libcuda): launches, memory, copies, virtual memory
// management, synchronization, and the module/library lookups that name kernels.
// Argument locations follow the x86-64 System V ABI; every function returns CUresult.
#include "probe/catalog.h"
#include "probe/catalog_args.h"

namespace eacgm::probe {
namespace {

using namespace catalog_args;
constexpr ArgFormat kHex = ArgFormat::kHex;

ProbeSpec spec(const std::string& name, std::vector<ArgSpec> args, std::vector<DerivedArg> derived = {}) {
  return api_spec(name, "cuda_driver", "libcuda.so*", std::move(args), std::move(derived));  // CUresult
}

// Adds `name` and, when given, its per-thread-stream (_ptsz/_ptds) variant.
void add(std::vector<ProbeSpec>& out, const std::string& name, const char* variant,
         const std::vector<ArgSpec>& args, const std::vector<DerivedArg>& derived = {}) {
  out.push_back(spec(name, args, derived));
  if (variant != nullptr) out.push_back(spec(name + variant, args, derived));
}

const std::vector<DerivedArg> kKernelFromF = {{"kernel", DerivedArg::Op::kKernelName, "f", ""}};
const std::vector<DerivedArg> kBytesFromCount = {{"bytes", DerivedArg::Op::kCopy, "count", ""}};
const std::vector<DerivedArg> kBytesFromShorts = {{"bytes", DerivedArg::Op::kTimes2, "count", ""}};
const std::vector<DerivedArg> kBytesFromWords = {{"bytes", DerivedArg::Op::kTimes4, "count", ""}};
const std::vector<DerivedArg> kBytesFromPitch = {{"bytes", DerivedArg::Op::kProduct, "pitch", "height"}};

// cuLaunchKernel(CUfunction f, unsigned gridDimX, gridDimY, gridDimZ, blockDimX,
//                blockDimY, blockDimZ, unsigned sharedMemBytes, CUstream hStream,
//                void** kernelParams, void** extra): blockDimX/Y sit in r8/r9 and
// blockDimZ in stack slot 0, which dim3_split follows.
std::vector<ArgSpec> launch_args() {
  return {hex("f", 0), reg("grid", 1, ArgKind::kDim3Split), reg("block", 4, ArgKind::kDim3Split),
          stack("shared_mem", 1, ArgKind::kU32), stack("stream", 2, ArgKind::kRaw, kHex)};
}

// cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra);
// CUlaunchConfig: gridDimX..Z @0..8, blockDimX..Z @12..20, sharedMemBytes @24,
// CUstream hStream @32.
std::vector<ArgSpec> launch_ex_args() {
  return {hex("f", 1), field("grid", 0, 0, ArgKind::kDerefDim3), field("block", 0, 12, ArgKind::kDerefDim3),
          field("shared_mem", 0, 24, ArgKind::kDerefU32), field("stream", 0, 32, ArgKind::kDerefU64, kHex)};
}

// cuMemcpy*(dst, src, size_t ByteCount[, CUstream hStream])
std::vector<ArgSpec> memcpy_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("dst", 0), hex("src", 1), reg("count", 2)};
  if (with_stream) a.push_back(hex("stream", 3));
  return a;
}

// cuMemcpyPeer(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx,
//              size_t ByteCount[, CUstream hStream])
std::vector<ArgSpec> memcpy_peer_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("dst", 0), hex("dst_ctx", 1), hex("src", 2), hex("src_ctx", 3),
                            reg("count", 4)};
  if (with_stream) a.push_back(hex("stream", 5));
  return a;
}

// cuMemsetD8/D16/D32_v2(CUdeviceptr dst, unsigned char/short/int value, size_t N
//                      [, CUstream hStream]): N elements of 1, 2 or 4 bytes.
std::vector<ArgSpec> memset_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("dst", 0), reg("value", 1, ArgKind::kU32, kHex), reg("count", 2)};
  if (with_stream) a.push_back(hex("stream", 3));
  return a;
}

}  // namespace

Catalog cuda_driver_catalog() {
  Catalog c{"cuda_driver",
            "CUDA driver API (libcuda): kernel launches, memory, copies, virtual memory, "
            "synchronization; calls the runtime makes are marked nested",
            {}};
  auto& s = c.specs;
  add(s, "cuLaunchKernel", "_ptsz", launch_args(), kKernelFromF);
  add(s, "cuLaunchKernelEx", "_ptsz", launch_ex_args(), kKernelFromF);
  add(s, "cuLaunchCooperativeKernel", "_ptsz", launch_args(), kKernelFromF);
  // cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
  add(s, "cuGraphLaunch", "_ptsz", {hex("graph_exec", 0), hex("stream", 1)});

  // cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize): the pointer is written by the call.
  add(s, "cuMemAlloc_v2", nullptr, {out_ptr("ptr", 0), reg("size", 1)});
  add(s, "cuMemAllocAsync", "_ptsz", {out_ptr("ptr", 0), reg("size", 1), hex("stream", 2)});
  add(s, "cuMemFree_v2", nullptr, {hex("ptr", 0)});
  add(s, "cuMemFreeAsync", "_ptsz", {hex("ptr", 0), hex("stream", 1)});
  // cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
  add(s, "cuMemAllocFromPoolAsync", "_ptsz",
      {out_ptr("ptr", 0), reg("size", 1), hex("pool", 2), hex("stream", 3)});
  // cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height,
  //                    unsigned ElementSizeBytes): pointer and pitch written by the call.
  add(s, "cuMemAllocPitch_v2", nullptr,
      {out_ptr("ptr", 0), out_size("pitch", 1), reg("width", 2), reg("height", 3),
       reg("element_size", 4, ArgKind::kU32)},
      kBytesFromPitch);
  // cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned flags)
  add(s, "cuMemAllocManaged", nullptr,
      {out_ptr("ptr", 0), reg("size", 1), reg("flags", 2, ArgKind::kU32, kHex)});
  // cuMemAllocHost_v2(void** pp, size_t bytesize), cuMemHostAlloc(void** pp, size_t bytesize,
  // unsigned Flags), cuMemFreeHost(void* p): page-locked host memory.
  add(s, "cuMemAllocHost_v2", nullptr, {out_ptr("ptr", 0), reg("size", 1)});
  add(s, "cuMemHostAlloc", nullptr,
      {out_ptr("ptr", 0), reg("size", 1), reg("flags", 2, ArgKind::kU32, kHex)});
  add(s, "cuMemFreeHost", nullptr, {hex("ptr", 0)});

  for (const char* name : {"cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemcpyDtoD_v2"}) {
    add(s, name, "_ptds", memcpy_args(false), kBytesFromCount);
  }
  for (const char* name : {"cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoDAsync_v2"}) {
    add(s, name, "_ptsz", memcpy_args(true), kBytesFromCount);
  }
  add(s, "cuMemcpy", "_ptds", memcpy_args(false), kBytesFromCount);
  add(s, "cuMemcpyAsync", "_ptsz", memcpy_args(true), kBytesFromCount);
  add(s, "cuMemcpyPeer", "_ptds", memcpy_peer_args(false), kBytesFromCount);
  add(s, "cuMemcpyPeerAsync", "_ptsz", memcpy_peer_args(true), kBytesFromCount);
  add(s, "cuMemsetD8_v2", "_ptds", memset_args(false), kBytesFromCount);
  add(s, "cuMemsetD8Async", "_ptsz", memset_args(true), kBytesFromCount);
  add(s, "cuMemsetD16_v2", "_ptds", memset_args(false), kBytesFromShorts);
  add(s, "cuMemsetD16Async", "_ptsz", memset_args(true), kBytesFromShorts);
  add(s, "cuMemsetD32_v2", "_ptds", memset_args(false), kBytesFromWords);
  add(s, "cuMemsetD32Async", "_ptsz", memset_args(true), kBytesFromWords);

  // Virtual memory management: cuMemCreate(CUmemGenericAllocationHandle* handle,
  // size_t size, const CUmemAllocationProp* prop, unsigned long long flags),
  // cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, handle, flags),
  // cuMemUnmap(CUdeviceptr ptr, size_t size), cuMemRelease(handle).
  add(s, "cuMemCreate", nullptr, {out_ptr("handle", 0), reg("size", 1)});
  add(s, "cuMemMap", nullptr, {hex("ptr", 0), reg("size", 1), reg("offset", 2), hex("handle", 3)});
  add(s, "cuMemUnmap", nullptr, {hex("ptr", 0), reg("size", 1)});
  add(s, "cuMemRelease", nullptr, {hex("handle", 0)});

  add(s, "cuStreamSynchronize", "_ptsz", {hex("stream", 0)});
  add(s, "cuCtxSynchronize", nullptr, {});

  // Kernel naming: the handles these write map to the kernel names they were asked for.
  // cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name)
  add(s, "cuModuleGetFunction", nullptr,
      {out_ptr("func", 0), hex("module", 1), reg("name", 2, ArgKind::kString)});
  // cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name)
  add(s, "cuLibraryGetKernel", nullptr,
      {out_ptr("kernel_handle", 0), hex("library", 1), reg("name", 2, ArgKind::kString)});
  // cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel)
  add(s, "cuKernelGetFunction", nullptr, {out_ptr("func", 0), hex("kernel_handle", 1)});
  return c;
}

}  // namespace eacgm::probe
