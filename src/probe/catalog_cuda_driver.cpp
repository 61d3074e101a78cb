// The CUDA driver catalog (libcuda): launches, memory, copies, virtual memory
// management, synchronization, and the module/library lookups that name kernels.
// Argument locations follow the x86-64 System V ABI; every function returns CUresult.
#include <fmt/format.h>

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

// Array copies: cuMemcpyHtoA_v2 / cuMemcpyDtoA_v2(CUarray dstArray, size_t dstOffset,
// src, size_t ByteCount[, CUstream]) and cuMemcpyAtoH_v2 / cuMemcpyAtoD_v2(dst,
// CUarray srcArray, size_t srcOffset, size_t ByteCount[, CUstream]).
std::vector<ArgSpec> to_array_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("dst", 0), reg("dst_offset", 1), hex("src", 2), reg("count", 3)};
  if (with_stream) a.push_back(hex("stream", 4));
  return a;
}
std::vector<ArgSpec> from_array_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("dst", 0), hex("src", 1), reg("src_offset", 2), reg("count", 3)};
  if (with_stream) a.push_back(hex("stream", 4));
  return a;
}

// cuMemcpyAtoA_v2(CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset,
//                 size_t ByteCount)
std::vector<ArgSpec> memcpy_atoa_args() {
  return {hex("dst", 0), reg("dst_offset", 1), hex("src", 2), reg("src_offset", 3), reg("count", 4)};
}

// cuMemcpyPeer(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx,
//              size_t ByteCount[, CUstream hStream])
std::vector<ArgSpec> memcpy_peer_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("dst", 0), hex("dst_ctx", 1), hex("src", 2), hex("src_ctx", 3),
                            reg("count", 4)};
  if (with_stream) a.push_back(hex("stream", 5));
  return a;
}

// cuMemcpy2D_v2(const CUDA_MEMCPY2D* p[, CUstream]): srcMemoryType @16, dstMemoryType @72,
// WidthInBytes @112, Height @120. cuMemcpy3D_v2(const CUDA_MEMCPY3D* p[, CUstream]) and
// cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER* p[, CUstream]): srcMemoryType @32,
// dstMemoryType @120, WidthInBytes @176, Height @184, Depth @192 (offsetof against
// CUDA 13's cuda.h). The memory types (CUmemorytype: 1 host, 2 device, 3 array,
// 4 unified) give the direction.
std::vector<ArgSpec> memcpy2d_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("params", 0), field("src_type", 0, 16, ArgKind::kDerefU32),
                            field("dst_type", 0, 72, ArgKind::kDerefU32),
                            field("width", 0, 112, ArgKind::kDerefU64),
                            field("height", 0, 120, ArgKind::kDerefU64)};
  if (with_stream) a.push_back(hex("stream", 1));
  return a;
}
std::vector<ArgSpec> memcpy3d_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("params", 0),
                            field("src_type", 0, 32, ArgKind::kDerefU32),
                            field("dst_type", 0, 120, ArgKind::kDerefU32),
                            field("width", 0, 176, ArgKind::kDerefU64),
                            field("height", 0, 184, ArgKind::kDerefU64),
                            field("depth", 0, 192, ArgKind::kDerefU64)};
  if (with_stream) a.push_back(hex("stream", 1));
  return a;
}

// cuMemsetD8/D16/D32_v2(CUdeviceptr dst, unsigned char/short/int value, size_t N
//                      [, CUstream hStream]): N elements of 1, 2 or 4 bytes.
std::vector<ArgSpec> memset_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("dst", 0), reg("value", 1, ArgKind::kU32, kHex), reg("count", 2)};
  if (with_stream) a.push_back(hex("stream", 3));
  return a;
}

// cuMemsetD2D8/16/32_v2(CUdeviceptr dst, size_t dstPitch, value, size_t Width, size_t Height
//                      [, CUstream hStream]): Width counts elements of 1, 2 or 4 bytes.
std::vector<ArgSpec> memset2d_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("dst", 0), reg("pitch", 1), reg("value", 2, ArgKind::kU32, kHex),
                            reg("width", 3), reg("height", 4)};
  if (with_stream) a.push_back(hex("stream", 5));
  return a;
}

std::vector<DerivedArg> area_bytes(std::uint32_t element_size) {
  return {{"bytes", DerivedArg::Op::kProduct, "width", "height", "", element_size}};
}
const std::vector<DerivedArg> kVolumeBytes = {
    {"bytes", DerivedArg::Op::kProduct, "width", "height", "depth", 1}};

// Marks the specs add() appended since `from` as GPU work.
void mark(std::vector<ProbeSpec>& s, std::size_t from, GpuWork work, const char* direction = "") {
  for (std::size_t i = from; i < s.size(); ++i) {
    s[i].work = work;
    s[i].direction = direction;
  }
}

// Graph building: stream capture, explicit nodes, instantiation, update, destruction
// (ingest/graph_capture.h expands each graph launch into its executable graph's work).
void add_graph_specs(std::vector<ProbeSpec>& s) {
  // cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode);
  // cuStreamBeginCaptureToGraph(CUstream, CUgraph, deps, edgeData, numDeps, mode)
  add(s, "cuStreamBeginCapture_v2", "_ptsz", {hex("stream", 0), reg("mode", 1, ArgKind::kU32)});
  add(s, "cuStreamBeginCaptureToGraph", "_ptsz", {hex("stream", 0), hex("graph", 1)});
  // cuStreamEndCapture(CUstream hStream, CUgraph* phGraph): the graph is written by the call.
  add(s, "cuStreamEndCapture", "_ptsz", {hex("stream", 0), out_ptr("graph", 1)});
  // cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph, unsigned long long
  // flags); cuGraphInstantiateWithParams(CUgraphExec*, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS*);
  // cuGraphInstantiate_v2(CUgraphExec*, CUgraph, CUgraphNode*, char*, size_t).
  add(s, "cuGraphInstantiateWithFlags", nullptr, {out_ptr("graph_exec", 0), hex("graph", 1)});
  add(s, "cuGraphInstantiateWithParams", "_ptsz", {out_ptr("graph_exec", 0), hex("graph", 1)});
  add(s, "cuGraphInstantiate_v2", nullptr, {out_ptr("graph_exec", 0), hex("graph", 1)});
  // cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo*)
  add(s, "cuGraphExecUpdate_v2", nullptr, {hex("graph_exec", 0), hex("graph", 1)});
  add(s, "cuGraphDestroy", nullptr, {hex("graph", 0)});
  add(s, "cuGraphExecDestroy", nullptr, {hex("graph_exec", 0)});
  // cuGraphAddKernelNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* deps,
  // size_t numDeps, const CUDA_KERNEL_NODE_PARAMS* p): func @0, gridDimX..Z @8, blockDimX..Z
  // @20, CUkernel kern @56 (used when func is null).
  add(s, "cuGraphAddKernelNode_v2", nullptr,
      {out_ptr("node", 0), hex("graph", 1), field("f", 4, 0, ArgKind::kDerefU64, kHex),
       field("grid", 4, 8, ArgKind::kDerefDim3), field("block", 4, 20, ArgKind::kDerefDim3),
       field("kernel_handle", 4, 56, ArgKind::kDerefU64, kHex)},
      kKernelFromF);
  // cuGraphAddMemsetNode(CUgraphNode*, CUgraph, deps, numDeps, const CUDA_MEMSET_NODE_PARAMS* p,
  // CUcontext): dst @0, elementSize @20, width @24 (elements), height @32.
  add(s, "cuGraphAddMemsetNode", nullptr,
      {out_ptr("node", 0), hex("graph", 1), field("dst", 4, 0, ArgKind::kDerefU64, kHex),
       field("element_size", 4, 20, ArgKind::kDerefU32), field("width", 4, 24, ArgKind::kDerefU64),
       field("height", 4, 32, ArgKind::kDerefU64)},
      {{"bytes", DerivedArg::Op::kProduct, "width", "height", "element_size", 1}});
  // cuGraphAddMemcpyNode(CUgraphNode*, CUgraph, deps, numDeps, const CUDA_MEMCPY3D* p, CUcontext)
  add(s, "cuGraphAddMemcpyNode", nullptr,
      {out_ptr("node", 0), hex("graph", 1), field("src_type", 4, 32, ArgKind::kDerefU32),
       field("dst_type", 4, 120, ArgKind::kDerefU32), field("width", 4, 176, ArgKind::kDerefU64),
       field("height", 4, 184, ArgKind::kDerefU64), field("depth", 4, 192, ArgKind::kDerefU64)},
      kVolumeBytes);
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
  mark(s, 0, GpuWork::kKernel);
  // cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
  std::size_t graph_launch = s.size();
  add(s, "cuGraphLaunch", "_ptsz", {hex("graph_exec", 0), hex("stream", 1)});
  mark(s, graph_launch, GpuWork::kGraphLaunch);
  add_graph_specs(s);

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

  // Copies. Only the entry points cuda.h compiles calls to (`_v2`, and their `_ptds` /
  // `_ptsz` forms under per-thread default streams): the unversioned legacy symbols are
  // older ABIs of the same functions, and probing both could count one copy twice.
  for (const char* dir : {"HtoD", "DtoH", "DtoD"}) {
    std::size_t from = s.size();
    add(s, fmt::format("cuMemcpy{}_v2", dir), "_ptds", memcpy_args(false), kBytesFromCount);
    add(s, fmt::format("cuMemcpy{}Async_v2", dir), "_ptsz", memcpy_args(true), kBytesFromCount);
    mark(s, from, GpuWork::kCopy, dir);
  }
  std::size_t from = s.size();
  add(s, "cuMemcpyHtoA_v2", "_ptds", to_array_args(false), kBytesFromCount);
  add(s, "cuMemcpyHtoAAsync_v2", "_ptsz", to_array_args(true), kBytesFromCount);
  mark(s, from, GpuWork::kCopy, "HtoA");
  from = s.size();
  add(s, "cuMemcpyAtoH_v2", "_ptds", from_array_args(false), kBytesFromCount);
  add(s, "cuMemcpyAtoHAsync_v2", "_ptsz", from_array_args(true), kBytesFromCount);
  mark(s, from, GpuWork::kCopy, "AtoH");
  from = s.size();
  add(s, "cuMemcpyDtoA_v2", "_ptds", to_array_args(false), kBytesFromCount);
  mark(s, from, GpuWork::kCopy, "DtoA");
  from = s.size();
  add(s, "cuMemcpyAtoD_v2", "_ptds", from_array_args(false), kBytesFromCount);
  mark(s, from, GpuWork::kCopy, "AtoD");
  from = s.size();
  add(s, "cuMemcpyAtoA_v2", "_ptds", memcpy_atoa_args(), kBytesFromCount);
  mark(s, from, GpuWork::kCopy, "AtoA");
  from = s.size();
  // Unified addressing: the direction follows from the pointers, unknown here.
  add(s, "cuMemcpy", "_ptds", memcpy_args(false), kBytesFromCount);
  add(s, "cuMemcpyAsync", "_ptsz", memcpy_args(true), kBytesFromCount);
  mark(s, from, GpuWork::kCopy, "default");
  from = s.size();
  add(s, "cuMemcpyPeer", "_ptds", memcpy_peer_args(false), kBytesFromCount);
  add(s, "cuMemcpyPeerAsync", "_ptsz", memcpy_peer_args(true), kBytesFromCount);
  mark(s, from, GpuWork::kCopy, "peer");
  from = s.size();
  // Directions from the memory types in the parameter struct.
  add(s, "cuMemcpy2D_v2", "_ptds", memcpy2d_args(false), area_bytes(1));
  add(s, "cuMemcpy2DUnaligned_v2", "_ptds", memcpy2d_args(false), area_bytes(1));
  add(s, "cuMemcpy2DAsync_v2", "_ptsz", memcpy2d_args(true), area_bytes(1));
  add(s, "cuMemcpy3D_v2", "_ptds", memcpy3d_args(false), kVolumeBytes);
  add(s, "cuMemcpy3DAsync_v2", "_ptsz", memcpy3d_args(true), kVolumeBytes);
  mark(s, from, GpuWork::kCopy);
  from = s.size();
  add(s, "cuMemcpy3DPeer", "_ptds", memcpy3d_args(false), kVolumeBytes);
  add(s, "cuMemcpy3DPeerAsync", "_ptsz", memcpy3d_args(true), kVolumeBytes);
  mark(s, from, GpuWork::kCopy, "peer");

  // Memsets: every width, 1D and 2D, synchronous and stream-ordered.
  from = s.size();
  add(s, "cuMemsetD8_v2", "_ptds", memset_args(false), kBytesFromCount);
  add(s, "cuMemsetD8Async", "_ptsz", memset_args(true), kBytesFromCount);
  add(s, "cuMemsetD16_v2", "_ptds", memset_args(false), kBytesFromShorts);
  add(s, "cuMemsetD16Async", "_ptsz", memset_args(true), kBytesFromShorts);
  add(s, "cuMemsetD32_v2", "_ptds", memset_args(false), kBytesFromWords);
  add(s, "cuMemsetD32Async", "_ptsz", memset_args(true), kBytesFromWords);
  add(s, "cuMemsetD2D8_v2", "_ptds", memset2d_args(false), area_bytes(1));
  add(s, "cuMemsetD2D8Async", "_ptsz", memset2d_args(true), area_bytes(1));
  add(s, "cuMemsetD2D16_v2", "_ptds", memset2d_args(false), area_bytes(2));
  add(s, "cuMemsetD2D16Async", "_ptsz", memset2d_args(true), area_bytes(2));
  add(s, "cuMemsetD2D32_v2", "_ptds", memset2d_args(false), area_bytes(4));
  add(s, "cuMemsetD2D32Async", "_ptsz", memset2d_args(true), area_bytes(4));
  mark(s, from, GpuWork::kMemset);

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
  // CUDA 13's runtime reaches the context's synchronisation through the _v2 entry
  // (cuCtxSynchronize_v2(CUcontext ctx)); cudaDeviceSynchronize calls it.
  add(s, "cuCtxSynchronize_v2", nullptr, {hex("ctx", 0)});

  // Kernel naming: the handles these write map to the kernel names they were asked for.
  // cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name)
  // Names are read whole up to 190 bytes in the kernel (long_string): a name given in a
  // temporary buffer is gone, or overwritten by the allocator, once the call returns.
  std::vector<ArgSpec> lookup = {out_ptr("func", 0), hex("module", 1)};
  for (auto& a : long_string("name", "name_rest", 2, false)) lookup.push_back(a);
  add(s, "cuModuleGetFunction", nullptr, lookup);
  // cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name)
  lookup[0] = out_ptr("kernel_handle", 0);
  lookup[1] = hex("library", 1);
  add(s, "cuLibraryGetKernel", nullptr, lookup);
  // cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel)
  add(s, "cuKernelGetFunction", nullptr, {out_ptr("func", 0), hex("kernel_handle", 1)});
  return c;
}

}  // namespace eacgm::probe
