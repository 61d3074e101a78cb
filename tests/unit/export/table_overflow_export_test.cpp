// eacgm_process_table_overflow_calls_total: the calls of processes a per-process table
// had no room for, one series per table, from the snapshot's parts.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "../common/cuda_probe.h"
#include "analysis/gpu_activity.h"
#include "analysis/memory_ledger.h"
#include "analysis/process_calls.h"
#include "export/call_metrics.h"

namespace eacgm::exporting {
namespace {

std::string metrics(const analysis::AnalysisSnapshot& snap) {
  ExpositionWriter out(ExpositionFormat::kPrometheusText);
  append_call_metrics(out, snap, CallMetricsOptions{});
  return out.finish();
}

TEST(TableOverflowExport, EachTableCountsTheCallsOfProcessesItHadNoRoomFor) {
  // The history's table holds one process: the second's 5 calls overflow it.
  analysis::ProcessCalls::Options options;
  options.max_processes = 1;
  analysis::ProcessCalls calls(options);
  const auto probe = test::cuda_probe("cudaMalloc");
  for (std::uint32_t pid : {1u, 2u}) {
    CallCount count;
    count.pid = pid;
    count.probe = probe;
    count.calls = 5;
    calls.add(count);
  }
  // GPU activity holds one process too: the second's one call overflows it; its tallied
  // call (a record whose count comes with its probe's CallCount) and its nested one do not.
  analysis::GpuActivity activity(1);
  for (std::uint32_t pid : {7u, 8u}) {
    CallEvent call;
    call.probe = probe;
    call.pid = pid;
    activity.add(call);
  }
  CallEvent tallied;
  tallied.probe = probe;
  tallied.pid = 8;
  tallied.tallied = true;
  activity.add(tallied);
  CallEvent nested = tallied;
  nested.tallied = false;
  nested.nested = true;
  activity.add(nested);
  analysis::AnalysisSnapshot snap;
  snap.edit<analysis::ProcessCallsView>() = *calls.view();
  snap.edit<analysis::GpuActivity>() = activity;
  snap.edit<analysis::MemorySummary>().overflow_calls = 3;
  const std::string text = metrics(snap);
  EXPECT_NE(text.find("# TYPE eacgm_process_table_overflow_calls_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("eacgm_process_table_overflow_calls_total{table=\"history\"} 5\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("eacgm_process_table_overflow_calls_total{table=\"activity\"} 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("eacgm_process_table_overflow_calls_total{table=\"memory\"} 3\n"), std::string::npos)
      << text;
}

TEST(TableOverflowExport, WithoutTheHistorysTableItsSeriesIsLeftOut) {
  // A snapshot no per-process calls analysis published into (a replay): no history series.
  const std::string text = metrics(analysis::AnalysisSnapshot{});
  EXPECT_NE(text.find("eacgm_process_table_overflow_calls_total{table=\"activity\"} 0\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("table=\"history\""), std::string::npos) << text;
}

}  // namespace
}  // namespace eacgm::exporting
