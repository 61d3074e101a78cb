// Result-code and enum names: the codes users meet most, per domain, and numbers the
// tables lack.
#include "core/result_names.h"

#include <gtest/gtest.h>

namespace eacgm {
namespace {

TEST(ResultNames, CudaRuntimeCodes) {
  EXPECT_EQ(result_code_name(ResultCodes::kCudaRuntime, 0), "cudaSuccess");
  EXPECT_EQ(result_code_name(ResultCodes::kCudaRuntime, 2), "cudaErrorMemoryAllocation");
  EXPECT_EQ(result_code_name(ResultCodes::kCudaRuntime, 35), "cudaErrorInsufficientDriver");
  EXPECT_EQ(result_code_name(ResultCodes::kCudaRuntime, 100), "cudaErrorNoDevice");
  EXPECT_EQ(result_code_name(ResultCodes::kCudaRuntime, 999), "cudaErrorUnknown");
  EXPECT_EQ(result_code_name(ResultCodes::kCudaRuntime, 123456), "");
  EXPECT_EQ(result_code_name(ResultCodes::kCudaRuntime, -1), "");
}

TEST(ResultNames, CudaDriverCodes) {
  EXPECT_EQ(result_code_name(ResultCodes::kCudaDriver, 0), "CUDA_SUCCESS");
  EXPECT_EQ(result_code_name(ResultCodes::kCudaDriver, 2), "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(result_code_name(ResultCodes::kCudaDriver, 3), "CUDA_ERROR_NOT_INITIALIZED");
  EXPECT_EQ(result_code_name(ResultCodes::kCudaDriver, 100), "CUDA_ERROR_NO_DEVICE");
  EXPECT_EQ(result_code_name(ResultCodes::kCudaDriver, 999), "CUDA_ERROR_UNKNOWN");
  EXPECT_EQ(result_code_name(ResultCodes::kCudaDriver, 35), "");  // runtime-only code
}

TEST(ResultNames, NcclCodes) {
  EXPECT_EQ(result_code_name(ResultCodes::kNccl, 0), "ncclSuccess");
  EXPECT_EQ(result_code_name(ResultCodes::kNccl, 1), "ncclUnhandledCudaError");
  EXPECT_EQ(result_code_name(ResultCodes::kNccl, 7), "ncclInProgress");
  EXPECT_EQ(result_code_name(ResultCodes::kNccl, 8), "");
  EXPECT_EQ(result_code_name(ResultCodes::kNccl, -3), "");
}

TEST(ResultNames, TableFollowsTheDomain) {
  EXPECT_EQ(result_codes_of_domain("cuda"), ResultCodes::kCudaRuntime);
  EXPECT_EQ(result_codes_of_domain("cuda_driver"), ResultCodes::kCudaDriver);
  EXPECT_EQ(result_codes_of_domain("nccl"), ResultCodes::kNccl);
  EXPECT_EQ(result_codes_of_domain("torch"), ResultCodes::kNone);
  EXPECT_EQ(result_code_name("cuda", 35), "cudaErrorInsufficientDriver");
  EXPECT_EQ(result_code_name("cuda_driver", 2), "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(result_code_name("python", 1), "");
  EXPECT_EQ(result_code_name(ResultCodes::kNone, 0), "");
}

TEST(ResultNames, MemcpyKinds) {
  EXPECT_EQ(cuda_memcpy_kind_name(0), "cudaMemcpyHostToHost");
  EXPECT_EQ(cuda_memcpy_kind_name(1), "cudaMemcpyHostToDevice");
  EXPECT_EQ(cuda_memcpy_kind_name(2), "cudaMemcpyDeviceToHost");
  EXPECT_EQ(cuda_memcpy_kind_name(3), "cudaMemcpyDeviceToDevice");
  EXPECT_EQ(cuda_memcpy_kind_name(4), "cudaMemcpyDefault");
  EXPECT_EQ(cuda_memcpy_kind_name(5), "");
}

}  // namespace
}  // namespace eacgm
