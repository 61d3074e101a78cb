// The host-wait classification table (core/host_wait_kinds.h).
#include "core/host_wait_kinds.h"

#include <array>
#include <utility>

namespace eacgm {
namespace {

using enum HostWaitKind;

// By base name (no `_ptsz`/`_ptds`, no `_v2`). Synchronous copies return once the copy is
// done, except device-to-device ones, which the CUDA documentation ("API synchronization
// behavior") says do no host-side synchronization: cuMemcpyDtoD, the array-to-device and
// device-to-array copies and the peer copies are left out. cudaMemcpy, cuMemcpy and the
// 2D/3D copies take their direction from arguments, not the name: all are counted. NCCL's
// collectives only enqueue work; what blocks until the other ranks arrive is setting a
// communicator up (init, split), and finalizing one waits for its outstanding operations.
constexpr std::array<std::pair<std::string_view, HostWaitKind>, 23> kTable = {{
    {"cudaStreamSynchronize", kStreamSync},
    {"cuStreamSynchronize", kStreamSync},
    {"cudaEventSynchronize", kEventSync},
    {"cuEventSynchronize", kEventSync},
    {"cudaDeviceSynchronize", kDeviceSync},
    {"cuCtxSynchronize", kDeviceSync},
    {"cuCtxSynchronize_v2", kDeviceSync},
    {"cudaMemcpy", kBlockingCopy},
    {"cudaMemcpy2D", kBlockingCopy},
    {"cudaMemcpy3D", kBlockingCopy},
    {"cuMemcpy", kBlockingCopy},
    {"cuMemcpyHtoD", kBlockingCopy},
    {"cuMemcpyDtoH", kBlockingCopy},
    {"cuMemcpyHtoA", kBlockingCopy},
    {"cuMemcpyAtoH", kBlockingCopy},
    {"cuMemcpy2D", kBlockingCopy},
    {"cuMemcpy2DUnaligned", kBlockingCopy},
    {"cuMemcpy3D", kBlockingCopy},
    {"ncclCommInitRank", kNccl},
    {"ncclCommInitRankConfig", kNccl},
    {"ncclCommInitRankScalable", kNccl},
    {"ncclCommSplit", kNccl},
    {"ncclCommFinalize", kNccl},
}};

std::string_view without_suffix(std::string_view name, std::string_view suffix) {
  return name.ends_with(suffix) ? name.substr(0, name.size() - suffix.size()) : name;
}

}  // namespace

std::span<const std::pair<std::string_view, HostWaitKind>> host_wait_functions() { return kTable; }

std::optional<HostWaitKind> wait_kind_of_function(std::string_view function) {
  std::string_view base = without_suffix(without_suffix(function, "_ptsz"), "_ptds");
  base = without_suffix(base, "_v2");
  for (const auto& [name, kind] : kTable) {
    if (name == base) return kind;
  }
  return std::nullopt;
}

}  // namespace eacgm
