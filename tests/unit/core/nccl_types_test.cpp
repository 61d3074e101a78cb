// NCCL datatype sizes and names, reduction op names and the communicator id hash.
#include "core/nccl_types.h"

#include <gtest/gtest.h>

namespace eacgm {
namespace {

// ncclDataType_t values from nccl.h (NCCL 2.28), with their element sizes.
struct Dtype {
  std::uint64_t value;
  std::uint32_t size;
  const char* name;
};
constexpr Dtype kAll[] = {
    {0, 1, "int8"},    {1, 1, "uint8"},    {2, 4, "int32"},       {3, 4, "uint32"},
    {4, 8, "int64"},   {5, 8, "uint64"},   {6, 2, "float16"},     {7, 4, "float32"},
    {8, 8, "float64"}, {9, 2, "bfloat16"}, {10, 1, "float8e4m3"}, {11, 1, "float8e5m2"},
};

TEST(NcclTypes, EveryDatatypeHasItsSizeAndName) {
  for (const auto& d : kAll) {
    ASSERT_TRUE(nccl_dtype_size(d.value).has_value()) << d.name;
    EXPECT_EQ(*nccl_dtype_size(d.value), d.size) << d.name;
    EXPECT_EQ(nccl_dtype_name(d.value), d.name);
  }
}

TEST(NcclTypes, UnknownDatatypeHasNoSize) {
  EXPECT_FALSE(nccl_dtype_size(12).has_value());  // ncclNumTypes
  EXPECT_FALSE(nccl_dtype_size(0xffffffffu).has_value());
  EXPECT_EQ(nccl_dtype_name(12), "");
}

TEST(NcclTypes, ReductionOpNames) {
  EXPECT_EQ(nccl_red_op_name(0), "sum");
  EXPECT_EQ(nccl_red_op_name(1), "prod");
  EXPECT_EQ(nccl_red_op_name(2), "max");
  EXPECT_EQ(nccl_red_op_name(3), "min");
  EXPECT_EQ(nccl_red_op_name(4), "avg");
  EXPECT_EQ(nccl_red_op_name(5), "premul_sum");  // created by ncclRedOpCreatePreMulSum
  EXPECT_EQ(nccl_red_op_name(0x7fffffff), "");   // ncclMaxRedOp itself is not an op
}

TEST(NcclTypes, CommIdIsStableNonZeroAndDependsOnBothWords) {
  std::uint64_t a = nccl_comm_id(0xe5e68eb1c826b01dull, 0x20200c0e5c10002ull);
  EXPECT_EQ(a, nccl_comm_id(0xe5e68eb1c826b01dull, 0x20200c0e5c10002ull));
  EXPECT_NE(a, nccl_comm_id(0xe5e68eb1c826b01dull, 0x20200c0e5c10003ull));
  EXPECT_NE(a, nccl_comm_id(0xe5e68eb1c826b01cull, 0x20200c0e5c10002ull));
  EXPECT_NE(nccl_comm_id(0, 0), 0u);
  // FNV-1a 64 of sixteen zero bytes: pins the hash so ids stay comparable across versions.
  EXPECT_EQ(nccl_comm_id(0, 0), 0x88201fb960ff6465ull);
}

}  // namespace
}  // namespace eacgm
