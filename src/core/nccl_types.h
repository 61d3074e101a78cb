// NCCL's enum values (nccl.h, stable across NCCL 2.x) turned into sizes and names, so
// events can report bytes moved and readable datatype/op names without NCCL headers.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace eacgm {

// Bytes per element of an ncclDataType_t, or nullopt for a value NCCL does not define
// (so no `bytes` is reported rather than a wrong one).
std::optional<std::uint32_t> nccl_dtype_size(std::uint64_t datatype);

// "int8", "float32", "bfloat16", "float8e4m3", ...; "" for an unknown value.
std::string_view nccl_dtype_name(std::uint64_t datatype);

// "sum", "prod", "max", "min", "avg"; "premul_sum" for the ops ncclRedOpCreatePreMulSum
// creates at run time (values from ncclNumOps up); "" otherwise.
std::string_view nccl_red_op_name(std::uint64_t op);

// A communicator's identity across processes and nodes: every rank of a communicator
// is created from the same ncclUniqueId, so a hash of its first 16 bytes (bootstrap
// magic and root address) names the communicator. FNV-1a 64 over the two words as
// little-endian bytes; never 0 (0 means "unknown").
std::uint64_t nccl_comm_id(std::uint64_t unique_id_word0, std::uint64_t unique_id_word1);

}  // namespace eacgm
