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

// Every runtime API call except registration is `outer`: the driver calls it makes on
// the caller's behalf are then flagged nested and not counted twice.
ProbeSpec spec(const char* name, std::vector<ArgSpec> args, std::vector<DerivedArg> derived = {}) {
  ProbeSpec s = api_spec(name, "cuda", "libcudart.so*", std::move(args), std::move(derived));
  s.outer = true;
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

}  // namespace

Catalog cuda_runtime_catalog() {
  Catalog c{"cuda",
            "CUDA runtime API (libcudart): kernel launches, memory, copies, streams, events, "
            "synchronization",
            {}};
  auto& s = c.specs;
  add(s, "cudaLaunchKernel", "_ptsz", launch_args(), kKernelFromFunc);
  add(s, "cudaLaunchKernelExC", "_ptsz", launch_ex_args(), kKernelFromFunc);
  // cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
  add(s, "cudaGraphLaunch", "_ptsz", {hex("graph_exec", 0), hex("stream", 1)});

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

  add(s, "cudaMemcpy", "_ptds", memcpy_args(false), kCopyFromCount);
  add(s, "cudaMemcpyAsync", "_ptsz", memcpy_args(true), kCopyFromCount);
  add(s, "cudaMemcpy2D", "_ptds", memcpy2d_args(false), kCopyFromArea);
  add(s, "cudaMemcpy2DAsync", "_ptsz", memcpy2d_args(true), kCopyFromArea);
  add(s, "cudaMemcpyPeer", nullptr, memcpy_peer_args(false), kBytesFromCount);
  add(s, "cudaMemcpyPeerAsync", nullptr, memcpy_peer_args(true), kBytesFromCount);
  add(s, "cudaMemset", "_ptds", memset_args(false), kBytesFromCount);
  add(s, "cudaMemsetAsync", "_ptsz", memset_args(true), kBytesFromCount);
  add(s, "cudaMemset2D", "_ptds", memset2d_args(false), kBytesFromArea);
  add(s, "cudaMemset2DAsync", "_ptsz", memset2d_args(true), kBytesFromArea);

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
  ArgSpec device_fun = reg("device_fun", 2, ArgKind::kString);
  device_fun.at_exit = true;
  ProbeSpec registration = spec("__cudaRegisterFunction", {hex("host_fun", 1), device_fun});
  registration.ret = ReturnKind::kNone;  // void
  registration.outer = false;
  s.push_back(std::move(registration));
  return c;
}

}  // namespace eacgm::probe
