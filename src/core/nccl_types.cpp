// Tables of NCCL datatypes and reduction ops, and the communicator id hash.
#include "core/nccl_types.h"

#include <array>

namespace eacgm {
namespace {

struct DtypeInfo {
  std::string_view name;
  std::uint32_t size;
};

// Indexed by ncclDataType_t: ncclInt8 = 0 ... ncclFloat8e5m2 = 11 (nccl.h 2.19+).
constexpr std::array<DtypeInfo, 12> kDtypes = {{
    {"int8", 1},
    {"uint8", 1},
    {"int32", 4},
    {"uint32", 4},
    {"int64", 8},
    {"uint64", 8},
    {"float16", 2},
    {"float32", 4},
    {"float64", 8},
    {"bfloat16", 2},
    {"float8e4m3", 1},
    {"float8e5m2", 1},
}};

// Indexed by ncclRedOp_t: ncclSum = 0 ... ncclAvg = 4; ncclNumOps = 5.
constexpr std::array<std::string_view, 5> kOps = {"sum", "prod", "max", "min", "avg"};
// ncclMaxRedOp: the ops NCCL creates at run time lie in [ncclNumOps, ncclMaxRedOp).
constexpr std::uint64_t kMaxRedOp = 0x7fffffff;

}  // namespace

std::optional<std::uint32_t> nccl_dtype_size(std::uint64_t datatype) {
  if (datatype >= kDtypes.size()) return std::nullopt;
  return kDtypes[datatype].size;
}

std::string_view nccl_dtype_name(std::uint64_t datatype) {
  return datatype < kDtypes.size() ? kDtypes[datatype].name : std::string_view();
}

std::string_view nccl_red_op_name(std::uint64_t op) {
  if (op < kOps.size()) return kOps[op];
  if (op < kMaxRedOp) return "premul_sum";
  return {};
}

std::uint64_t nccl_comm_id(std::uint64_t unique_id_word0, std::uint64_t unique_id_word1) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis
  for (std::uint64_t word : {unique_id_word0, unique_id_word1}) {
    for (int i = 0; i < 8; ++i) {
      h ^= (word >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;  // FNV-1a 64 prime
    }
  }
  return h == 0 ? 1 : h;
}

}  // namespace eacgm
