// Names beside numbers: failed calls' result codes (`ret_name`, " = 35 (name)") and the
// copy direction (`kind_name`).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "export/event_format.h"
#include "formatted_call.h"

namespace eacgm::exporting {
namespace {

using nlohmann::json;

using test::set_arg;
using test::to_json;
using test::to_text;
CallEvent call(const std::string& fn, std::int64_t ret = 0) { return test::call_of(fn, ret); }

TEST(EventFormatNames, FailedCallsNameTheirResultCode) {
  auto rt = call("cudaMalloc", 35);
  auto j = to_json(rt);
  EXPECT_EQ(j["ret"], 35);
  EXPECT_EQ(j["ret_name"], "cudaErrorInsufficientDriver");
  EXPECT_NE(to_text(rt).find(" = 35 (cudaErrorInsufficientDriver)  1.00 us"), std::string::npos)
      << to_text(rt);

  auto drv = call("cuMemAlloc_v2", 2);
  EXPECT_EQ(to_json(drv)["ret_name"], "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_NE(to_text(drv).find(" = 2 (CUDA_ERROR_OUT_OF_MEMORY)"), std::string::npos) << to_text(drv);

  auto nccl = call("ncclAllReduce", 5);
  EXPECT_EQ(to_json(nccl)["ret_name"], "ncclInvalidUsage");

  // Success and codes the table lacks stay numbers only.
  auto ok = call("cudaMalloc", 0);
  EXPECT_FALSE(to_json(ok).contains("ret_name"));
  EXPECT_EQ(to_text(ok).find('('), to_text(ok).find("cudaMalloc(") + std::string("cudaMalloc").size());
  EXPECT_EQ(to_text(ok).find(" = 0 ("), std::string::npos);
  auto odd = call("cudaMalloc", 123456);
  EXPECT_FALSE(to_json(odd).contains("ret_name"));
  EXPECT_EQ(to_json(odd)["ret"], 123456);
}

TEST(EventFormatNames, CopyKindIsNamed) {
  auto e = call("cudaMemcpy");
  set_arg(e, "count", 4096);
  set_arg(e, "kind", 1);
  auto j = to_json(e);
  EXPECT_EQ(j["args"]["kind"], 1);
  EXPECT_EQ(j["args"]["kind_name"], "cudaMemcpyHostToDevice");
  EXPECT_NE(to_text(e).find("kind=1, bytes=4096, kind_name=cudaMemcpyHostToDevice"), std::string::npos)
      << to_text(e);

  auto async2d = call("cudaMemcpy2DAsync");
  set_arg(async2d, "kind", 2);
  EXPECT_EQ(to_json(async2d)["args"]["kind_name"], "cudaMemcpyDeviceToHost");

  set_arg(e, "kind", 9);  // not a cudaMemcpyKind: no name rather than a wrong one
  EXPECT_FALSE(to_json(e)["args"].contains("kind_name"));
  e.fault_mask = 1u << 3;
  EXPECT_FALSE(to_json(e)["args"].contains("kind_name"));
}

}  // namespace
}  // namespace eacgm::exporting
