// The `run` summary's probe-overhead lines: each process's share of its CPU time, the
// duty cycle when it ran, the measured slowdown, and no share for a process whose CPU
// time was never read.
#include "export/overhead_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace eacgm::exporting {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

OverheadReport report() {
  OverheadReport r;
  r.costs.measured = true;
  r.costs.entry_ns = 600;
  r.budget = 0.01;
  ProcessOverhead p;
  p.pid = 42;
  p.total_estimated_ns = 20e6;
  p.total_cpu_ns = 1000e6;
  r.processes.push_back(p);
  return r;
}

TEST(OverheadReportText, SharesOfCpuTime) {
  const std::string text = render_overhead(report());
  EXPECT_THAT(text, HasSubstr("pid 42"));
  EXPECT_THAT(text, HasSubstr("2.00% of its CPU time in probes (20.0 ms of 1000.0 ms)"));
  EXPECT_THAT(text, Not(HasSubstr("duty cycle")));
  EXPECT_THAT(text, Not(HasSubstr("measured")));
}

TEST(OverheadReportText, TheDutyCycleAndTheMeasuredSlowdown) {
  OverheadReport r = report();
  r.attached_share = 0.195;
  r.duty_fraction = 0.2;
  r.processes[0].measured_slowdown = 0.04;
  const std::string text = render_overhead(r);
  EXPECT_THAT(text, HasSubstr("measured: 4.0% slower while the cycled probes are attached"));
  EXPECT_THAT(text,
              HasSubstr("counted probes attached 19.5% of the time (duty cycle, now 20.0% of each second)"));
  EXPECT_EQ(overhead_json(r)["processes"][0]["measured_slowdown"], 0.04);
  EXPECT_EQ(overhead_json(r)["attached_share"], 0.195);
}

TEST(OverheadReportText, NoShareWithoutCpuTime) {
  OverheadReport r = report();
  r.processes[0].total_cpu_ns = 0;
  const std::string text = render_overhead(r);
  EXPECT_THAT(text, HasSubstr("20.0 ms in probes (no CPU time read: traced for under a second)"));
  EXPECT_THAT(text, Not(HasSubstr("0.00%")));
}

}  // namespace
}  // namespace eacgm::exporting
