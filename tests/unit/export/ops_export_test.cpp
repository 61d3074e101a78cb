// The `ops` object of `eacgm run --json`: kernels launched per PyTorch op.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/anomaly_detector.h"
#include "analysis/op_kernels.h"
#include "export/api_json.h"

namespace eacgm::exporting {
namespace {

TEST(OpsJson, OneObjectPerOpWithItsKernels) {
  analysis::OpKernelSummary ops;
  ops.ops.push_back({"aten::linear", 3, {{"gemm", 2}, {"bias", 1}}});
  ops.attributed = 3;
  ops.unattributed = 4;
  ops.untracked = 1;
  EXPECT_EQ(ops_json(ops), json::parse(R"({"ops":[{"op":"aten::linear","launches":3,
      "kernels":[{"kernel":"gemm","launches":2},{"kernel":"bias","launches":1}]}],
      "attributed":3,"unattributed":4,"untracked":1})"));
  analysis::AnalysisSnapshot snap;
  snap.edit<analysis::OpKernelSummary>() = ops;
  snap.parts.put<analysis::AnomalySummary>(std::make_shared<const analysis::AnomalySummary>());
  EXPECT_EQ(json::parse(run_report_json(snap, ApiOptions{}))["ops"], ops_json(ops));
}

}  // namespace
}  // namespace eacgm::exporting
