// CommFilter (--comm): exact matches on the 15-character comm pass on, the rest is
// counted per name and summed up in one line; everything else passes through.
#include "analysis/comm_filter.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace eacgm::analysis {
namespace {

struct Recorder final : Consumer {
  std::vector<std::string> comms;
  int rounds = 0, gpu = 0, flushes = 0, ends = 0;
  void on_calls(std::span<const CallEvent> calls) override {
    ++rounds;
    for (const auto& e : calls) comms.emplace_back(e.comm_view());
  }
  void on_gpu(const GpuSnapshot&) override { ++gpu; }
  void flush() override { ++flushes; }
  void on_end(const CounterValues&) override { ++ends; }
};

CallEvent call(const std::string& comm) {
  CallEvent e;
  std::snprintf(e.comm.data(), e.comm.size(), "%s", comm.c_str());
  return e;
}

TEST(CommFilter, PassesExactNamesAndCountsTheRest) {
  auto rec = std::make_shared<Recorder>();
  CommFilter f({"eacgm-demo", "python3"}, rec);
  std::vector<CallEvent> calls{call("eacgm-demo"), call("other"),     call("python3"),
                               call("python"),     call("eacgm-dem"), call("other")};
  f.on_calls(calls);
  EXPECT_EQ(rec->comms, (std::vector<std::string>{"eacgm-demo", "python3"}));
  EXPECT_EQ(f.passed(), 2u);
  EXPECT_EQ(f.left_out(), 4u);
  EXPECT_EQ(f.left_out_by_comm().at("other"), 2u);
  EXPECT_EQ(f.left_out_by_comm().at("python"), 1u);
  EXPECT_EQ(f.summary(), "4 calls of other processes not shown (other 2, eacgm-dem 1, python 1)");
  EXPECT_EQ(f.summary(1), "4 calls of other processes not shown (other 2; 2 more names)");
}

TEST(CommFilter, LongNamesMatchTheKernelsCutComm) {
  auto rec = std::make_shared<Recorder>();
  CommFilter f({"a_very_long_process_name"}, rec);
  std::vector<CallEvent> calls{call("a_very_long_pro")};  // what the kernel keeps: 15 bytes
  f.on_calls(calls);
  EXPECT_EQ(rec->comms.size(), 1u);
  EXPECT_EQ(f.summary(), "");
}

TEST(CommFilter, RoundsWithNothingKeptAreNotPassedOnButTheRestIs) {
  auto rec = std::make_shared<Recorder>();
  CommFilter f({"x"}, rec);
  std::vector<CallEvent> calls{call("y")};
  f.on_calls(calls);
  EXPECT_EQ(rec->rounds, 0);
  f.on_gpu(GpuSnapshot{});
  f.flush();
  f.on_end(CounterValues{});
  EXPECT_EQ(rec->gpu, 1);
  EXPECT_EQ(rec->flushes, 1);
  EXPECT_EQ(rec->ends, 1);
  EXPECT_EQ(f.summary(), "1 call of other processes not shown (y 1)");
}

TEST(CommFilter, ManyNamesAreFoldedPastTheCap) {
  CommFilter f({"keep"}, nullptr);
  std::vector<CallEvent> calls;
  for (std::size_t i = 0; i < CommFilter::kMaxNamesCounted + 10; ++i)
    calls.push_back(call("p" + std::to_string(i)));
  f.on_calls(calls);
  EXPECT_EQ(f.left_out_by_comm().size(), CommFilter::kMaxNamesCounted + 1);
  EXPECT_EQ(f.left_out_by_comm().at(""), 10u);
  EXPECT_EQ(f.left_out(), CommFilter::kMaxNamesCounted + 10);
}

TEST(CommFilter, AlwaysOnCountsAndOverheadGoByTheProcessName) {
  struct Counts final : Consumer {
    std::uint64_t calls = 0, timed = 0;
    std::vector<std::uint32_t> overhead_pids;
    void on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) override {
      for (const auto& c : counts) calls += c.calls;
      for (const auto& t : timings) timed += t.count;
    }
    void on_overhead(const OverheadReport& r) override {
      for (const auto& p : r.processes) overhead_pids.push_back(p.pid);
    }
  };
  auto inner = std::make_shared<Counts>();
  CommFilter f({"train"}, inner);
  int lookups = 0;
  f.set_comm_of([&](std::uint32_t pid) {
    ++lookups;
    return pid == 1 ? std::string("train") : std::string("other");
  });
  std::vector<CallCount> counts{{1, nullptr, 0, 0, "", 100, 0}, {2, nullptr, 0, 0, "", 40, 0}};
  std::vector<CallTimings> timings{{1, nullptr, 3, 6, 0, 0}, {2, nullptr, 3, 2, 0, 0}};
  f.on_counts(counts, timings);
  f.on_counts(counts, timings);
  EXPECT_EQ(inner->calls, 200u);
  EXPECT_EQ(inner->timed, 12u);
  EXPECT_EQ(f.left_out(), 80u);
  EXPECT_EQ(f.left_out_by_comm().at("other"), 80u);
  EXPECT_EQ(lookups, 2) << "one name lookup per pid";
  OverheadReport r;
  r.processes = {ProcessOverhead{.pid = 1}, ProcessOverhead{.pid = 2}};
  f.on_overhead(r);
  EXPECT_EQ(inner->overhead_pids, std::vector<std::uint32_t>{1});
}

TEST(CommFilter, HostWaitsGoByTheProcessName) {
  struct Waits final : Consumer {
    std::vector<std::uint32_t> pids, process_pids;
    void on_host_waits(std::span<const HostWaitProcess> processes,
                       std::span<const HostWaitTimings> waits) override {
      for (const auto& p : processes) process_pids.push_back(p.pid);
      for (const auto& w : waits) pids.push_back(w.pid);
    }
  };
  auto inner = std::make_shared<Waits>();
  CommFilter f({"train"}, inner);
  f.set_comm_of([](std::uint32_t pid) { return pid == 1 ? std::string("train") : std::string("other"); });
  std::vector<HostWaitTimings> waits(3);
  waits[0].pid = 1;
  waits[1].pid = 2;
  waits[2].pid = 1;
  std::vector<HostWaitProcess> processes(2);
  processes[0].pid = 1;
  processes[1].pid = 2;
  f.on_host_waits(processes, waits);
  std::vector<HostWaitTimings> others(1);
  others[0].pid = 2;
  f.on_host_waits({}, others);
  EXPECT_EQ(inner->pids, (std::vector<std::uint32_t>{1, 1})) << "nothing passed on for the other process";
  EXPECT_EQ(inner->process_pids, std::vector<std::uint32_t>{1});
  EXPECT_EQ(f.left_out(), 0u) << "waits are not calls";
}

}  // namespace
}  // namespace eacgm::analysis
