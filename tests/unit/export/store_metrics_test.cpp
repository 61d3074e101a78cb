// The history store's families: the clock gauges are absent until the store has
// measured the node's clock, then carry the offset and its bound in seconds.
#include "export/store_metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace eacgm::exporting {
namespace {

std::string render(const history::StoreStats& stats) {
  ExpositionWriter out(ExpositionFormat::kPrometheusText);
  append_store_metrics(out, stats);
  return out.finish();
}

TEST(StoreMetrics, ClockGaugesAreAbsentUntilMeasured) {
  history::StoreStats s;
  const std::string text = render(s);
  EXPECT_NE(text.find("eacgm_store_up 1\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("eacgm_store_clock_"), std::string::npos) << text;
}

TEST(StoreMetrics, ClockGaugesCarryTheOffsetAndItsBound) {
  history::StoreStats s;
  s.clock_offset_seconds = -0.0025;
  s.clock_uncertainty_seconds = 0.00012;
  const std::string text = render(s);
  EXPECT_NE(text.find("# TYPE eacgm_store_clock_offset_seconds gauge\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\neacgm_store_clock_offset_seconds -0.0025\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE eacgm_store_clock_uncertainty_seconds gauge\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\neacgm_store_clock_uncertainty_seconds 0.00012\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace eacgm::exporting
