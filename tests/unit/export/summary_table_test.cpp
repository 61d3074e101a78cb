// Summary table: duration formatting, column order and alignment, row order, and the
// closing lines that mark a cut or capped table.
#include "export/summary_table.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace eacgm::exporting {
namespace {

using analysis::CallSummary;
using analysis::CallSummaryRow;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::shared_ptr<const ProbeInfo> probe(std::string domain, std::string function) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = std::move(function);
  p->spec.domain = std::move(domain);
  p->spec.ret = ReturnKind::kInt32;
  return p;
}

CallEvent event(const std::shared_ptr<const ProbeInfo>& p, std::uint64_t dur, std::int64_t ret = 0,
                bool exit = true) {
  CallEvent e;
  e.probe = p;
  e.has_exit = exit;
  e.dur_ns = dur;
  e.ret = ret;
  return e;
}

TEST(FormatDuration, PicksUnitAndThreeSignificantDigits) {
  EXPECT_EQ(format_duration(0), "0 ns");
  EXPECT_EQ(format_duration(850), "850 ns");
  EXPECT_EQ(format_duration(999.4), "999 ns");
  EXPECT_EQ(format_duration(999.7), "1.00 us");
  EXPECT_EQ(format_duration(1234), "1.23 us");
  EXPECT_EQ(format_duration(1.23e6), "1.23 ms");
  EXPECT_EQ(format_duration(12.34e6), "12.3 ms");
  EXPECT_EQ(format_duration(123.4e6), "123 ms");
  EXPECT_EQ(format_duration(999.7e6), "1.00 s");
  EXPECT_EQ(format_duration(2.5e9), "2.50 s");
  EXPECT_EQ(format_duration(7200e9), "7200 s");
  EXPECT_EQ(format_duration(-1), "-");
}

TEST(SummaryTable, HeaderThenRowsByTotalDurationAligned) {
  CallSummary s;
  auto malloc_probe = probe("cuda", "cudaMalloc");
  auto launch_probe = probe("cuda", "cudaLaunchKernel");
  auto allreduce = probe("nccl", "ncclAllReduce");
  auto step = probe("python", "train_step");
  for (int i = 0; i < 4; ++i) s.add(event(malloc_probe, 1'230'000, i == 0 ? 2 : 0));  // 4.92 ms total
  for (int i = 0; i < 1000; ++i) s.add(event(launch_probe, 3'700));                   // 3.70 ms total
  s.add(event(allreduce, 25'000'000));                                                // 25.0 ms
  s.add(event(step, 0, 0, /*exit=*/false));                                           // entry only

  const auto text = render_table(s);
  const auto ls = lines(text);
  // Header, 4 rows, then the errors by code and the note on what durations measure.
  ASSERT_EQ(ls.size(), 8u) << text;
  EXPECT_EQ(ls[5], "errors by code:");
  EXPECT_EQ(ls[6], "  cuda cudaMalloc: 1 x cudaErrorMemoryAllocation (2)");
  EXPECT_EQ(ls[7].rfind("(durations are host-side API times", 0), 0u) << ls[7];
  EXPECT_EQ(ls[0].rfind("domain", 0), 0u) << ls[0];
  // Header columns in order.
  std::size_t pos = 0;
  for (const char* col : {"domain", "function", "calls", "errors", "total", "mean", "p50", "p99", "max"}) {
    const auto at = ls[0].find(col, pos);
    ASSERT_NE(at, std::string::npos) << col;
    pos = at + 1;
  }
  EXPECT_EQ(ls[1].rfind("nccl", 0), 0u) << ls[1];
  EXPECT_NE(ls[1].find("ncclAllReduce"), std::string::npos);
  EXPECT_NE(ls[1].find("25.0 ms"), std::string::npos) << ls[1];
  EXPECT_NE(ls[2].find("cudaMalloc"), std::string::npos);
  EXPECT_NE(ls[2].find("4.92 ms"), std::string::npos) << ls[2];  // total
  EXPECT_NE(ls[2].find("1.23 ms"), std::string::npos) << ls[2];  // mean, p50, p99, max
  EXPECT_NE(ls[3].find("cudaLaunchKernel"), std::string::npos);
  EXPECT_NE(ls[3].find("1000"), std::string::npos);
  EXPECT_NE(ls[3].find("3.70 ms"), std::string::npos) << ls[3];
  EXPECT_NE(ls[3].find("3.70 us"), std::string::npos) << ls[3];
  EXPECT_NE(ls[4].find("train_step"), std::string::npos);
  EXPECT_NE(ls[4].find("  -"), std::string::npos) << ls[4];  // untimed: no durations

  // Numbers are right-aligned, so every line ends in the same column, and the
  // function column starts at the same offset everywhere.
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(ls[i].size(), ls[0].size()) << ls[i];
  const auto fcol = ls[0].find("function");
  EXPECT_EQ(ls[1].find("ncclAllReduce"), fcol);
  EXPECT_EQ(ls[3].find("cudaLaunchKernel"), fcol);

  // The errors column of the cudaMalloc row reads 1 (right-aligned under "errors").
  const auto errors_end = ls[0].find("errors") + std::string("errors").size();
  EXPECT_EQ(ls[2].substr(errors_end - 1, 1), "1") << ls[2];
  EXPECT_EQ(ls[3].substr(errors_end - 1, 1), "0") << ls[3];
}

TEST(SummaryTable, EmptySummaryIsHeaderOnly) {
  const auto ls = lines(render_table(CallSummary{}));
  ASSERT_EQ(ls.size(), 1u);
  EXPECT_EQ(ls[0], "domain  function  calls  errors  total  mean  p50  p99  max");
}

TEST(SummaryTable, LongNamesAreClippedAndRowsCanBeCut) {
  std::vector<CallSummaryRow> rows(3);
  rows[0].domain = "cuda";
  rows[0].function = std::string(100, 'k');
  rows[0].calls = 1;
  rows[1].domain = "cuda";
  rows[1].function = "b";
  rows[2].domain = "cuda";
  rows[2].function = "c";
  SummaryTableOptions opt;
  opt.max_rows = 2;
  opt.max_function_width = 20;
  const auto ls = lines(render_table(rows, opt));
  ASSERT_EQ(ls.size(), 3u);
  EXPECT_NE(ls[1].find(std::string(17, 'k') + "..."), std::string::npos) << ls[1];
  EXPECT_EQ(ls[1].find(std::string(18, 'k')), std::string::npos);
}

// `run` names each failed call's result code per function, and says the durations are
// host-side API times (no GPU kernel time).
TEST(SummaryTable, ErrorsByCodeNamedPerFunction) {
  CallSummary s;
  auto rt = probe("cuda", "cudaMalloc");
  auto drv = probe("cuda_driver", "cuMemAlloc_v2");
  auto nccl = probe("nccl", "ncclAllReduce");
  auto user = probe("mylib", "my_fn");
  for (int i = 0; i < 3; ++i) s.add(event(rt, 10, 2));
  s.add(event(rt, 10, 35));
  s.add(event(rt, 10, 0));
  s.add(event(drv, 10, 2));
  s.add(event(nccl, 10, 5));
  s.add(event(user, 10, 7));
  s.add(event(rt, 10, 123456));
  const auto text = render_table(s);
  EXPECT_NE(text.find("errors by code:\n"), std::string::npos) << text;
  EXPECT_NE(
      text.find("  cuda cudaMalloc: 3 x cudaErrorMemoryAllocation (2), 1 x cudaErrorInsufficientDriver (35), "
                "1 x code 123456\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("  cuda_driver cuMemAlloc_v2: 1 x CUDA_ERROR_OUT_OF_MEMORY (2)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  nccl ncclAllReduce: 1 x ncclInvalidUsage (5)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  mylib my_fn: 1 x code 7\n"), std::string::npos) << text;
  EXPECT_NE(text.find("host-side API times"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU kernel execution time is not measured"), std::string::npos) << text;

  CallSummary clean;
  clean.add(event(rt, 10, 0));
  EXPECT_EQ(render_table(clean).find("errors by code"), std::string::npos);
}

TEST(SummaryTable, SampledErrorsReadAsAShareOfEveryCall) {
  // Always-on: 1,000 calls counted in the kernel, 16 of them timed, 4 of those failed.
  // The errors cell estimates the whole (4 x 1000 / 16), the codes say what they were
  // taken from; a function whose every call was timed shows its errors as they are.
  CallSummaryRow counted;
  counted.domain = "cuda_driver";
  counted.function = "cuLaunchKernel";
  counted.calls = counted.counted = 1000;
  counted.timed = 16;
  counted.errors = 4;
  CallSummaryRow traced;
  traced.domain = "cuda";
  traced.function = "cudaMalloc";
  traced.calls = traced.timed = 10;
  traced.errors = 3;
  const auto table = lines(render_table(std::vector<CallSummaryRow>{counted, traced}, SummaryTableOptions{}));
  ASSERT_EQ(table.size(), 3u);
  EXPECT_NE(table[1].find(" ~250 "), std::string::npos) << table[1];
  EXPECT_EQ(table[2].find('~'), std::string::npos) << table[2];
  EXPECT_NE(table[2].find(" 3 "), std::string::npos) << table[2];
  const std::string codes = render_error_codes({counted, traced}, 0);
  EXPECT_NE(codes.find("cuLaunchKernel: 4 x other codes (of 16 sampled calls)\n"), std::string::npos)
      << codes;
  EXPECT_NE(codes.find("cudaMalloc: 3 x other codes\n"), std::string::npos) << codes;
}

TEST(SummaryTable, SummaryFooterReportsCutRowsAndOverflow) {
  CallSummary::Options o;
  o.max_keys = 2;
  auto s = CallSummary::create(o);
  ASSERT_TRUE(s.ok());
  for (const char* f : {"a", "b", "c", "d"}) s->add(event(probe("cuda", f), 10));
  SummaryTableOptions opt;
  opt.max_rows = 1;
  const auto text = render_table(*s, opt);
  EXPECT_NE(text.find("(1 more functions not shown)"), std::string::npos) << text;
  EXPECT_NE(text.find("2 events of functions beyond the 2-function cap"), std::string::npos) << text;
}

}  // namespace
}  // namespace eacgm::exporting
