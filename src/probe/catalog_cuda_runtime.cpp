// The CUDA runtime catalog (libcudart): launches, memory, copies, synchronization.
// Argument locations follow the x86-64 System V ABI; a dim3 (12 bytes) travels in
// two registers: x|y in the first, z in the second.
#include "probe/catalog.h"

namespace eacgm::probe {
namespace {

ArgSpec reg(const char* name, std::uint8_t index, ArgKind kind = ArgKind::kRaw,
            ArgFormat format = ArgFormat::kUnsigned) {
  return ArgSpec{name, ArgSource::kRegister, index, kind, format, false};
}
ArgSpec stack(const char* name, std::uint8_t slot, ArgKind kind = ArgKind::kRaw,
              ArgFormat format = ArgFormat::kUnsigned) {
  return ArgSpec{name, ArgSource::kStack, slot, kind, format, false};
}
ArgSpec out_ptr(const char* name, std::uint8_t index) {
  return ArgSpec{name, ArgSource::kRegister, index, ArgKind::kDerefU64, ArgFormat::kHex, true};
}
constexpr ArgFormat kHex = ArgFormat::kHex;

ProbeSpec spec(const char* name, std::vector<ArgSpec> args, std::vector<DerivedArg> derived = {}) {
  ProbeSpec s;
  s.name = name;
  s.domain = "cuda";
  s.library = "libcudart.so*";
  s.symbol = name;
  s.with_exit = true;
  s.ret = ReturnKind::kInt32;  // cudaError_t
  s.args = std::move(args);
  s.derived = std::move(derived);
  return s;
}

// cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args,
//                  size_t sharedMem, cudaStream_t stream)
std::vector<ArgSpec> launch_args() {
  return {reg("func", 0, ArgKind::kRaw, kHex), reg("grid", 1, ArgKind::kDim3),
          reg("block", 3, ArgKind::kDim3), stack("shared_mem", 0),
          stack("stream", 1, ArgKind::kRaw, kHex)};
}

// cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind[, stream])
std::vector<ArgSpec> memcpy_args(bool with_stream) {
  std::vector<ArgSpec> a = {reg("dst", 0, ArgKind::kRaw, kHex), reg("src", 1, ArgKind::kRaw, kHex),
                            reg("count", 2), reg("kind", 3, ArgKind::kU32)};
  if (with_stream) a.push_back(reg("stream", 4, ArgKind::kRaw, kHex));
  return a;
}

const std::vector<DerivedArg> kBytesFromCount = {{"bytes", DerivedArg::Op::kCopy, "count", ""}};

}  // namespace

Catalog cuda_runtime_catalog() {
  Catalog c{"cuda", "CUDA runtime API (libcudart): kernel launches, memory, copies, synchronization", {}};
  auto& s = c.specs;
  s.push_back(spec("cudaLaunchKernel", launch_args()));
  s.push_back(spec("cudaLaunchKernel_ptsz", launch_args()));
  // cudaMalloc(void** devPtr, size_t size): the pointer is written by the call.
  s.push_back(spec("cudaMalloc", {out_ptr("ptr", 0), reg("size", 1)}));
  s.push_back(spec("cudaFree", {reg("ptr", 0, ArgKind::kRaw, kHex)}));
  s.push_back(spec("cudaMemcpy", memcpy_args(false), kBytesFromCount));
  s.push_back(spec("cudaMemcpy_ptds", memcpy_args(false), kBytesFromCount));
  s.push_back(spec("cudaMemcpyAsync", memcpy_args(true), kBytesFromCount));
  s.push_back(spec("cudaMemcpyAsync_ptsz", memcpy_args(true), kBytesFromCount));
  s.push_back(spec("cudaStreamSynchronize", {reg("stream", 0, ArgKind::kRaw, kHex)}));
  s.push_back(spec("cudaStreamSynchronize_ptsz", {reg("stream", 0, ArgKind::kRaw, kHex)}));
  s.push_back(spec("cudaDeviceSynchronize", {}));
  return c;
}

}  // namespace eacgm::probe
