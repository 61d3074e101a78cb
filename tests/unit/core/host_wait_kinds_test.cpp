// The host-wait classification: which probed functions are waits, of what kind, whatever
// their per-thread-stream or `_v2` suffix; calls that only enqueue work are not waits.
#include "core/host_wait_kinds.h"

#include <gtest/gtest.h>

namespace eacgm {
namespace {

std::string kind(std::string_view function) {
  auto k = wait_kind_of_function(function);
  return k ? std::string(host_wait_kind_name(*k)) : std::string("none");
}

TEST(HostWaitKinds, SynchronizationsByLayer) {
  EXPECT_EQ(kind("cudaStreamSynchronize"), "stream_sync");
  EXPECT_EQ(kind("cudaStreamSynchronize_ptsz"), "stream_sync");
  EXPECT_EQ(kind("cuStreamSynchronize"), "stream_sync");
  EXPECT_EQ(kind("cuStreamSynchronize_ptsz"), "stream_sync");
  EXPECT_EQ(kind("cudaEventSynchronize"), "event_sync");
  EXPECT_EQ(kind("cuEventSynchronize"), "event_sync");
  EXPECT_EQ(kind("cudaDeviceSynchronize"), "device_sync");
  EXPECT_EQ(kind("cuCtxSynchronize"), "device_sync");
  EXPECT_EQ(kind("cuCtxSynchronize_v2"), "device_sync");
}

TEST(HostWaitKinds, SynchronousCopiesButNotAsyncOrDeviceToDeviceOnes) {
  for (const char* f : {"cudaMemcpy", "cudaMemcpy_ptds", "cudaMemcpy2D", "cudaMemcpy3D_ptds", "cuMemcpy",
                        "cuMemcpy_ptds", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2_ptds", "cuMemcpyAtoH_v2",
                        "cuMemcpyHtoA_v2", "cuMemcpy2D_v2", "cuMemcpy2DUnaligned_v2_ptds", "cuMemcpy3D_v2"}) {
    EXPECT_EQ(kind(f), "blocking_copy") << f;
  }
  for (const char* f :
       {"cudaMemcpyAsync", "cudaMemcpyAsync_ptsz", "cudaMemcpy2DAsync", "cuMemcpyAsync",
        "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoD_v2", "cuMemcpyDtoA_v2", "cuMemcpyAtoD_v2", "cuMemcpyAtoA_v2",
        "cudaMemcpyPeer", "cuMemcpyPeer", "cuMemcpy3DPeer", "cudaMemset", "cuMemsetD8_v2"}) {
    EXPECT_EQ(kind(f), "none") << f;
  }
}

TEST(HostWaitKinds, EnqueueingCallsAreNotWaits) {
  for (const char* f : {"cudaLaunchKernel", "cuLaunchKernel", "cudaStreamWaitEvent", "cudaEventRecord",
                        "cudaEventQuery", "cudaMalloc", "cudaFree", "ncclAllReduce", "ncclGroupEnd",
                        "ncclCommDestroy", "", "cudaStreamSynchronizeX", "xcudaMemcpy"}) {
    EXPECT_EQ(kind(f), "none") << f;
  }
}

TEST(HostWaitKinds, NcclCallsThatWaitForTheOtherRanks) {
  for (const char* f : {"ncclCommInitRank", "ncclCommInitRankConfig", "ncclCommInitRankScalable",
                        "ncclCommSplit", "ncclCommFinalize"}) {
    EXPECT_EQ(kind(f), "nccl") << f;
  }
}

TEST(HostWaitKinds, KindNamesRoundTrip) {
  for (std::size_t i = 0; i < kHostWaitKinds; ++i) {
    const auto k = static_cast<HostWaitKind>(i);
    EXPECT_EQ(parse_host_wait_kind(host_wait_kind_name(k)), k);
  }
  EXPECT_EQ(parse_host_wait_kind("nap"), std::nullopt);
}

}  // namespace
}  // namespace eacgm
