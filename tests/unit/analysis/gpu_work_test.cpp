// The GPU work table under process churn: the rows of processes found gone stay for the
// last kMaxExited exits only, so its memory stops growing once that many have exited;
// the operations of the processes let go stay in the totals and are counted.
#include "analysis/gpu_work.h"

#include <gtest/gtest.h>

#include <set>

namespace eacgm::analysis {
namespace {

std::shared_ptr<const ProbeInfo> counted(GpuWork work, const char* name) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = p->symbol = p->spec.name = name;
  p->spec.domain = "cuda_runtime";
  p->spec.work = work;
  p->counted = true;
  return p;
}

CallCount count(const std::shared_ptr<const ProbeInfo>& p, std::uint32_t pid, const char* kernel,
                std::uint64_t calls) {
  return CallCount{.pid = pid, .probe = p, .stream = 1, .kernel = kernel, .calls = calls};
}

using Clock = GpuWorkStats::Clock;

TEST(GpuWorkStats, ExitedProcessesRowsStayWithinTheirBoundUnderChurn) {
  const auto launch = counted(GpuWork::kKernel, "cudaLaunchKernel");
  const auto memset = counted(GpuWork::kMemset, "cudaMemset");
  GpuWorkStats::Options o;
  o.max_exited = 8;
  GpuWorkStats work(o);
  std::set<std::uint32_t> alive;
  const auto is_alive = [&alive](std::uint32_t pid) { return alive.contains(pid); };
  Clock::time_point now{};
  const auto grace = std::chrono::seconds(2);
  // 200 short processes one after another, each with two rows, swept each "tick".
  for (std::uint32_t pid = 100; pid < 300; ++pid) {
    alive.insert(pid);
    work.add(count(launch, pid, "k", 3));
    work.add(count(memset, pid, "", 2));
    alive.erase(pid);
    for (int t = 0; t < 2; ++t) {
      now += std::chrono::seconds(2);
      work.sweep(now, is_alive, 512, grace);
    }
    EXPECT_LE(work.process_count(), 9u) << "at pid " << pid;
    EXPECT_LE(work.row_count(), 18u) << "at pid " << pid;
  }
  EXPECT_EQ(work.exited_dropped(), 192u);
  EXPECT_EQ(work.total(GpuWork::kKernel), 600u) << "the processes let go stay in the totals";
  EXPECT_EQ(work.total(GpuWork::kMemset), 400u);
  std::set<std::uint32_t> listed;
  for (const auto& r : work.rows()) listed.insert(r.pid);
  EXPECT_EQ(listed.size(), 8u);
  EXPECT_EQ(*listed.begin(), 292u) << "the last to exit are kept";
}

TEST(GpuWorkStats, RunningProcessesAndThoseInTheirGraceKeepTheirRows) {
  const auto launch = counted(GpuWork::kKernel, "cudaLaunchKernel");
  GpuWorkStats::Options o;
  o.max_exited = 1;
  GpuWorkStats work(o);
  std::set<std::uint32_t> alive{1, 2};
  const auto is_alive = [&alive](std::uint32_t pid) { return alive.contains(pid); };
  for (std::uint32_t pid : {1u, 2u, 3u, 4u}) work.add(count(launch, pid, "k", 1));
  Clock::time_point now{};
  work.sweep(now, is_alive, 512, std::chrono::seconds(2));
  EXPECT_EQ(work.rows().size(), 4u) << "3 and 4 are gone, but not yet for the grace";
  now += std::chrono::seconds(3);
  work.sweep(now, is_alive, 512, std::chrono::seconds(2));
  EXPECT_EQ(work.rows().size(), 3u) << "3 exited first and went; 4 is the one exited kept";
  EXPECT_EQ(work.exited_dropped(), 1u);
  // Pid 4 is reused by a new process: it runs again, and its rows are no longer an exit's.
  alive.insert(4);
  work.add(count(launch, 4, "k", 1));
  work.add(count(launch, 5, "k", 1));
  now += std::chrono::seconds(3);
  work.sweep(now, is_alive, 512, std::chrono::seconds(0));
  now += std::chrono::seconds(3);
  work.sweep(now, is_alive, 512, std::chrono::seconds(2));
  std::set<std::uint32_t> listed;
  for (const auto& r : work.rows()) listed.insert(r.pid);
  EXPECT_EQ(listed, (std::set<std::uint32_t>{1, 2, 4, 5}));
}

}  // namespace
}  // namespace eacgm::analysis
