// Names of the result codes and enum arguments the built-in catalogs capture as
// numbers: cudaError_t (libcudart), CUresult (libcuda), ncclResult_t (libnccl) and
// cudaMemcpyKind. Used by the event formats (`"ret_name"`, `kind_name`) and the `run`
// summary's errors-by-code lines.
#pragma once

#include <cstdint>
#include <string_view>

namespace eacgm {

// Which result-code table a function's int32 return value reads in.
enum class ResultCodes : std::uint8_t {
  kNone,         // not a known result type: shown as a number only
  kCudaRuntime,  // cudaError_t: "cudaErrorInsufficientDriver"
  kCudaDriver,   // CUresult: "CUDA_ERROR_OUT_OF_MEMORY"
  kNccl,         // ncclResult_t: "ncclInvalidArgument"
};

// The table of a probe domain: "cuda" (the runtime catalog), "cuda_driver", "nccl";
// kNone for other domains (torch, python, user-defined ones).
ResultCodes result_codes_of_domain(std::string_view domain);

// The code's enumerator name ("cudaSuccess" for 0), or "" for a code the table lacks.
std::string_view result_code_name(ResultCodes codes, std::int64_t code);
std::string_view result_code_name(std::string_view domain, std::int64_t code);

// "cudaMemcpyHostToDevice" for 1, ...; "" for a value CUDA does not define.
std::string_view cuda_memcpy_kind_name(std::uint64_t kind);

}  // namespace eacgm
