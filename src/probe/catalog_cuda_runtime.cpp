// The CUDA runtime catalog (libcudart): launches, memory, copies, streams, events,
// synchronization, and kernel registration (for kernel names).
// Argument locations follow the x86-64 System V ABI; a dim3 (12 bytes) travels in
// two registers: x|y in the first, z in the second.
#include "probe/catalog.h"
#include "probe/catalog_args.h"

namespace eacgm::probe {
namespace {

using namespace catalog_args;
constexpr ArgFormat kHex = ArgFormat::kHex;

// A file that defines this function carries a CUDA runtime, linked statically into a
// program or library (nvcc's default, `-cudart static`) when it is not libcudart.so.
constexpr const char* kStaticRuntimeMarker = "cudaLaunchKernel";

// Every runtime API call except registration is `outer`: the driver calls it makes on
// the caller's behalf are then flagged nested and not counted twice.
ProbeSpec spec(const char* name, std::vector<ArgSpec> args, std::vector<DerivedArg> derived = {}) {
  ProbeSpec s = api_spec(name, "cuda", "libcudart.so*", std::move(args), std::move(derived));
  s.outer = true;
  s.also_where_defined = kStaticRuntimeMarker;
  return s;
}

// Adds `name` and, when libcudart exports one, its per-thread-stream variant.
void add(std::vector<ProbeSpec>& out, const char* name, const char* variant, const std::vector<ArgSpec>& args,
         const std::vector<DerivedArg>& derived = {}) {
  out.push_back(spec(name, args, derived));
  if (variant != nullptr) out.push_back(spec((std::string(name) + variant).c_str(), args, derived));
}

const std::vector<DerivedArg> kKernelFromFunc = {{"kernel", DerivedArg::Op::kKernelName, "func", ""}};
const std::vector<DerivedArg> kBytesFromCount = {{"bytes", DerivedArg::Op::kCopy, "count", ""}};
const std::vector<DerivedArg> kBytesFromArea = {{"bytes", DerivedArg::Op::kProduct, "width", "height"}};
const std::vector<DerivedArg> kBytesFromPitch = {{"bytes", DerivedArg::Op::kProduct, "pitch", "height"}};
// Copies: their bytes and the cudaMemcpyKind by name ("cudaMemcpyHostToDevice").
const std::vector<DerivedArg> kCopyFromCount = {
    {"bytes", DerivedArg::Op::kCopy, "count", ""},
    {"kind_name", DerivedArg::Op::kCudaMemcpyKindName, "kind", ""}};
const std::vector<DerivedArg> kCopyFromArea = {
    {"bytes", DerivedArg::Op::kProduct, "width", "height"},
    {"kind_name", DerivedArg::Op::kCudaMemcpyKindName, "kind", ""}};

// cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args,
//                  size_t sharedMem, cudaStream_t stream)
std::vector<ArgSpec> launch_args() {
  return {hex("func", 0), reg("grid", 1, ArgKind::kDim3), reg("block", 3, ArgKind::kDim3),
          stack("shared_mem", 0), stack("stream", 1, ArgKind::kRaw, kHex)};
}

// cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args);
// cudaLaunchConfig_t: dim3 gridDim @0, dim3 blockDim @12, size_t dynamicSmemBytes @24,
// cudaStream_t stream @32.
std::vector<ArgSpec> launch_ex_args() {
  return {hex("func", 1), field("grid", 0, 0, ArgKind::kDerefDim3),
          field("block", 0, 12, ArgKind::kDerefDim3), field("shared_mem", 0, 24, ArgKind::kDerefU64),
          field("stream", 0, 32, ArgKind::kDerefU64, kHex)};
}

// cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind[, stream])
std::vector<ArgSpec> memcpy_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("dst", 0), hex("src", 1), reg("count", 2), reg("kind", 3, ArgKind::kU32)};
  if (with_stream) a.push_back(hex("stream", 4));
  return a;
}

// cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
//              size_t height, cudaMemcpyKind kind[, cudaStream_t stream])
std::vector<ArgSpec> memcpy2d_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("dst", 0),
                            reg("dpitch", 1),
                            hex("src", 2),
                            reg("spitch", 3),
                            reg("width", 4),
                            reg("height", 5),
                            stack("kind", 0, ArgKind::kU32)};
  if (with_stream) a.push_back(stack("stream", 1, ArgKind::kRaw, kHex));
  return a;
}

// cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count
//                [, cudaStream_t stream])
std::vector<ArgSpec> memcpy_peer_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("dst", 0), reg("dst_device", 1, ArgKind::kU32, ArgFormat::kSigned),
                            hex("src", 2), reg("src_device", 3, ArgKind::kU32, ArgFormat::kSigned),
                            reg("count", 4)};
  if (with_stream) a.push_back(hex("stream", 5));
  return a;
}

// cudaMemset(void* devPtr, int value, size_t count[, cudaStream_t stream])
std::vector<ArgSpec> memset_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("ptr", 0), reg("value", 1, ArgKind::kU32, ArgFormat::kSigned),
                            reg("count", 2)};
  if (with_stream) a.push_back(hex("stream", 3));
  return a;
}

// cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height
//              [, cudaStream_t stream])
std::vector<ArgSpec> memset2d_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("ptr", 0), reg("pitch", 1),
                            reg("value", 2, ArgKind::kU32, ArgFormat::kSigned), reg("width", 3),
                            reg("height", 4)};
  if (with_stream) a.push_back(hex("stream", 5));
  return a;
}

// cudaMemcpy3D(const cudaMemcpy3DParms* p[, cudaStream_t]): extent.width @128 (bytes for
// linear memory, elements for arrays), height @136, depth @144, kind @152.
std::vector<ArgSpec> memcpy3d_args(bool with_stream) {
  std::vector<ArgSpec> a = {hex("params", 0), field("width", 0, 128, ArgKind::kDerefU64),
                            field("height", 0, 136, ArgKind::kDerefU64),
                            field("depth", 0, 144, ArgKind::kDerefU64),
                            field("kind", 0, 152, ArgKind::kDerefU32)};
  if (with_stream) a.push_back(hex("stream", 1));
  return a;
}
const std::vector<DerivedArg> kCopyFromVolume = {
    {"bytes", DerivedArg::Op::kProduct, "width", "height", "depth", 1},
    {"kind_name", DerivedArg::Op::kCudaMemcpyKindName, "kind", ""}};

// Marks the specs appended since `from` as GPU work.
void mark(std::vector<ProbeSpec>& s, std::size_t from, GpuWork work, const char* direction = "") {
  for (std::size_t i = from; i < s.size(); ++i) {
    s[i].work = work;
    s[i].direction = direction;
  }
}

// Graph building: stream capture, explicit nodes, instantiation, update, destruction
// (ingest/graph_capture.h expands each graph launch into its executable graph's work).
void add_graph_specs(std::vector<ProbeSpec>& s) {
  // cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode);
  // cudaStreamBeginCaptureToGraph(stream, cudaGraph_t graph, deps, edgeData, numDeps, mode)
  add(s, "cudaStreamBeginCapture", "_ptsz", {hex("stream", 0), reg("mode", 1, ArgKind::kU32)});
  add(s, "cudaStreamBeginCaptureToGraph", "_ptsz", {hex("stream", 0), hex("graph", 1)});
  // cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph): written by the call.
  add(s, "cudaStreamEndCapture", "_ptsz", {hex("stream", 0), out_ptr("graph", 1)});
  // cudaGraphInstantiate[WithFlags|WithParams](cudaGraphExec_t* pGraphExec, cudaGraph_t graph, ...)
  add(s, "cudaGraphInstantiate", nullptr, {out_ptr("graph_exec", 0), hex("graph", 1)});
  add(s, "cudaGraphInstantiateWithFlags", nullptr, {out_ptr("graph_exec", 0), hex("graph", 1)});
  add(s, "cudaGraphInstantiateWithParams", "_ptsz", {out_ptr("graph_exec", 0), hex("graph", 1)});
  // cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph, resultInfo*)
  add(s, "cudaGraphExecUpdate", nullptr, {hex("graph_exec", 0), hex("graph", 1)});
  add(s, "cudaGraphDestroy", nullptr, {hex("graph", 0)});
  add(s, "cudaGraphExecDestroy", nullptr, {hex("graph_exec", 0)});
  const std::size_t nodes = s.size();
  // cudaGraphAddKernelNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, deps, numDeps,
  // const cudaKernelNodeParams* p): func @0, gridDim @8, blockDim @20.
  add(s, "cudaGraphAddKernelNode", nullptr,
      {out_ptr("node", 0), hex("graph", 1), field("func", 4, 0, ArgKind::kDerefU64, kHex),
       field("grid", 4, 8, ArgKind::kDerefDim3), field("block", 4, 20, ArgKind::kDerefDim3)},
      kKernelFromFunc);
  // cudaGraphAddMemsetNode(..., const cudaMemsetParams* p): dst @0, elementSize @20,
  // width @24 (elements), height @32.
  add(s, "cudaGraphAddMemsetNode", nullptr,
      {out_ptr("node", 0), hex("graph", 1), field("ptr", 4, 0, ArgKind::kDerefU64, kHex),
       field("element_size", 4, 20, ArgKind::kDerefU32), field("width", 4, 24, ArgKind::kDerefU64),
       field("height", 4, 32, ArgKind::kDerefU64)},
      {{"bytes", DerivedArg::Op::kProduct, "width", "height", "element_size", 1}});
  // cudaGraphAddMemcpyNode(..., const cudaMemcpy3DParms* p): as cudaMemcpy3D.
  add(s, "cudaGraphAddMemcpyNode", nullptr,
      {out_ptr("node", 0), hex("graph", 1), field("width", 4, 128, ArgKind::kDerefU64),
       field("height", 4, 136, ArgKind::kDerefU64), field("depth", 4, 144, ArgKind::kDerefU64),
       field("kind", 4, 152, ArgKind::kDerefU32)},
      kCopyFromVolume);
  // cudaGraphAddMemcpyNode1D(cudaGraphNode_t*, cudaGraph_t, deps, numDeps, void* dst,
  // const void* src, size_t count, cudaMemcpyKind kind): count and kind on the stack.
  add(s, "cudaGraphAddMemcpyNode1D", nullptr,
      {out_ptr("node", 0), hex("graph", 1), hex("dst", 4), hex("src", 5), stack("count", 0),
       stack("kind", 1, ArgKind::kU32)},
      kCopyFromCount);
  mark(s, nodes, GpuWork::kGraphNode);
}

}  // namespace

Catalog cuda_runtime_catalog() {
  Catalog c{"cuda",
            "CUDA runtime API (libcudart): kernel launches, memory, copies, streams, events, "
            "synchronization",
            {}};
  auto& s = c.specs;
  add(s, "cudaLaunchKernel", "_ptsz", launch_args(), kKernelFromFunc);
  add(s, "cudaLaunchKernelExC", "_ptsz", launch_ex_args(), kKernelFromFunc);
  mark(s, 0, GpuWork::kKernel);
  // cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
  const std::size_t graph_launch = s.size();
  add(s, "cudaGraphLaunch", "_ptsz", {hex("graph_exec", 0), hex("stream", 1)});
  mark(s, graph_launch, GpuWork::kGraphLaunch);
  add_graph_specs(s);

  // cudaMalloc(void** devPtr, size_t size): the pointer is written by the call.
  add(s, "cudaMalloc", nullptr, {out_ptr("ptr", 0), reg("size", 1)});
  add(s, "cudaFree", nullptr, {hex("ptr", 0)});
  // cudaMallocAsync(void** devPtr, size_t size, cudaStream_t stream)
  add(s, "cudaMallocAsync", "_ptsz", {out_ptr("ptr", 0), reg("size", 1), hex("stream", 2)});
  add(s, "cudaFreeAsync", "_ptsz", {hex("ptr", 0), hex("stream", 1)});
  // cudaMallocManaged(void** devPtr, size_t size, unsigned flags)
  add(s, "cudaMallocManaged", nullptr,
      {out_ptr("ptr", 0), reg("size", 1), reg("flags", 2, ArgKind::kU32, kHex)});
  add(s, "cudaMallocHost", nullptr, {out_ptr("ptr", 0), reg("size", 1)});
  // cudaHostAlloc(void** pHost, size_t size, unsigned flags)
  add(s, "cudaHostAlloc", nullptr, {out_ptr("ptr", 0), reg("size", 1), reg("flags", 2, ArgKind::kU32, kHex)});
  add(s, "cudaFreeHost", nullptr, {hex("ptr", 0)});
  // cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height): the
  // pointer and the row pitch are written by the call; the allocation is pitch * height.
  add(s, "cudaMallocPitch", nullptr,
      {out_ptr("ptr", 0), out_size("pitch", 1), reg("width", 2), reg("height", 3)}, kBytesFromPitch);
  // cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream)
  add(s, "cudaMallocFromPoolAsync", "_ptsz",
      {out_ptr("ptr", 0), reg("size", 1), hex("pool", 2), hex("stream", 3)});

  // Copies: the direction is the call's `kind` (cudaMemcpyKind).
  std::size_t from = s.size();
  add(s, "cudaMemcpy", "_ptds", memcpy_args(false), kCopyFromCount);
  add(s, "cudaMemcpyAsync", "_ptsz", memcpy_args(true), kCopyFromCount);
  add(s, "cudaMemcpy2D", "_ptds", memcpy2d_args(false), kCopyFromArea);
  add(s, "cudaMemcpy2DAsync", "_ptsz", memcpy2d_args(true), kCopyFromArea);
  add(s, "cudaMemcpy3D", "_ptds", memcpy3d_args(false), kCopyFromVolume);
  add(s, "cudaMemcpy3DAsync", "_ptsz", memcpy3d_args(true), kCopyFromVolume);
  mark(s, from, GpuWork::kCopy);
  from = s.size();
  add(s, "cudaMemcpyPeer", nullptr, memcpy_peer_args(false), kBytesFromCount);
  add(s, "cudaMemcpyPeerAsync", nullptr, memcpy_peer_args(true), kBytesFromCount);
  mark(s, from, GpuWork::kCopy, "peer");
  from = s.size();
  add(s, "cudaMemset", "_ptds", memset_args(false), kBytesFromCount);
  add(s, "cudaMemsetAsync", "_ptsz", memset_args(true), kBytesFromCount);
  add(s, "cudaMemset2D", "_ptds", memset2d_args(false), kBytesFromArea);
  add(s, "cudaMemset2DAsync", "_ptsz", memset2d_args(true), kBytesFromArea);
  mark(s, from, GpuWork::kMemset);

  // Stream creation writes the new handle through the first argument.
  add(s, "cudaStreamCreate", nullptr, {out_ptr("stream", 0)});
  add(s, "cudaStreamCreateWithFlags", nullptr, {out_ptr("stream", 0), reg("flags", 1, ArgKind::kU32, kHex)});
  add(s, "cudaStreamCreateWithPriority", nullptr,
      {out_ptr("stream", 0), reg("flags", 1, ArgKind::kU32, kHex),
       reg("priority", 2, ArgKind::kU32, ArgFormat::kSigned)});
  add(s, "cudaStreamDestroy", nullptr, {hex("stream", 0)});
  add(s, "cudaStreamSynchronize", "_ptsz", {hex("stream", 0)});
  // cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags)
  add(s, "cudaStreamWaitEvent", "_ptsz",
      {hex("stream", 0), hex("event", 1), reg("flags", 2, ArgKind::kU32, kHex)});
  add(s, "cudaEventRecord", "_ptsz", {hex("event", 0), hex("stream", 1)});
  add(s, "cudaEventSynchronize", nullptr, {hex("event", 0)});
  add(s, "cudaEventQuery", nullptr, {hex("event", 0)});
  add(s, "cudaDeviceSynchronize", nullptr, {});
  add(s, "cudaSetDevice", nullptr, {reg("device", 0, ArgKind::kU32, ArgFormat::kSigned)});

  // __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
  //                        const char* deviceName, ...): runs in the program's static
  // constructors, once per kernel; maps the host stub (cudaLaunchKernel's func) to the
  // mangled kernel name. The name sits in the program's .rodata, which at entry is often
  // not paged in yet (BPF cannot fault it in); by exit libcudart has read it.
  std::vector<ArgSpec> registration_args = {hex("host_fun", 1)};
  for (auto& a : long_string("device_fun", "device_fun_rest", 2, true)) registration_args.push_back(a);
  ProbeSpec registration = spec("__cudaRegisterFunction", registration_args);
  registration.ret = ReturnKind::kNone;  // void
  registration.outer = false;
  s.push_back(std::move(registration));
  return c;
}

}  // namespace eacgm::probe
