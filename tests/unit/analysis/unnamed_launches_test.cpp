// Launches counted before their kernel's name was known (always-on) join the name's row
// once a count of the same handle brings it, in the kernel table and in the GPU work
// per stream; a handle never named stays unnamed; the held handles are bounded.
#include "analysis/unnamed_launches.h"

#include <gtest/gtest.h>

#include "analysis/gpu_work.h"
#include "analysis/kernel_stats.h"

namespace eacgm::analysis {
namespace {

std::shared_ptr<const ProbeInfo> counted_launch() {
  auto p = std::make_shared<ProbeInfo>();
  p->function = p->symbol = p->spec.name = "cuLaunchKernel";
  p->spec.domain = "cuda_driver";
  p->spec.work = GpuWork::kKernel;
  for (const char* name : {"f", "grid", "block", "stream"}) {
    ArgSpec a;
    a.name = name;
    if (std::string_view(name) == "grid" || std::string_view(name) == "block") a.kind = ArgKind::kDim3Split;
    p->spec.args.push_back(a);
  }
  p->spec.derived = {{"kernel", DerivedArg::Op::kKernelName, "f", ""}};
  p->counted = true;
  return p;
}

CallCount count(const std::shared_ptr<const ProbeInfo>& p, std::uint64_t handle, std::uint64_t stream,
                const char* kernel, std::uint64_t calls, std::uint32_t pid = 7) {
  CallCount c;
  c.pid = pid;
  c.probe = p;
  c.handle = handle;
  c.stream = stream;
  c.kernel = kernel;
  c.calls = calls;
  return c;
}

TEST(UnnamedLaunches, LaunchesCountedBeforeTheirNameJoinItsRow) {
  auto p = counted_launch();
  KernelStats kernels;
  GpuWorkStats work;
  for (const CallCount& c : {count(p, 0xa0, 1, "", 4), count(p, 0xa0, 2, "", 2), count(p, 0xb0, 1, "", 5),
                             count(p, 0xa0, 1, "adam_step", 3)}) {
    kernels.add(c);
    work.add(c);
  }
  auto rows = kernels.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "adam_step");
  EXPECT_EQ(rows[0].launches, 9u) << "4 + 2 before the name, 3 with it";
  std::map<std::pair<std::uint64_t, std::string>, std::uint64_t> by_stream;
  for (const auto& r : work.rows()) by_stream[{r.stream, r.name}] = r.count;
  EXPECT_EQ(by_stream[(std::pair<std::uint64_t, std::string>{1, "adam_step"})], 7u);
  EXPECT_EQ(by_stream[(std::pair<std::uint64_t, std::string>{2, "adam_step"})], 2u);
  EXPECT_EQ(by_stream[(std::pair<std::uint64_t, std::string>{1, ""})], 5u) << "handle 0xb0 was never named";
  EXPECT_EQ(by_stream.count({2, ""}), 0u) << "an emptied unnamed row goes";
  EXPECT_EQ(work.total(GpuWork::kKernel), 14u) << "moving launches to their name adds none";
}

TEST(UnnamedLaunches, TheSameHandleInAnotherProcessIsAnotherKernel) {
  auto p = counted_launch();
  KernelStats kernels;
  kernels.add(count(p, 0xa0, 1, "", 4, /*pid=*/7));
  kernels.add(count(p, 0xa0, 1, "k", 1, /*pid=*/8));
  ASSERT_EQ(kernels.rows().size(), 1u);
  EXPECT_EQ(kernels.rows()[0].launches, 1u);
}

TEST(UnnamedLaunches, TheOldestHandleIsForgottenAtTheCap) {
  UnnamedLaunches held(2);
  held.add(1, 0x10, 0, 5);
  held.add(1, 0x20, 0, 6);
  held.add(1, 0x30, 0, 7);
  EXPECT_EQ(held.handles(), 2u);
  EXPECT_TRUE(held.take(1, 0x10).empty());
  auto got = held.take(1, 0x30);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second, 7u);
  EXPECT_TRUE(held.take(1, 0x30).empty()) << "taken once";
  EXPECT_EQ(held.handles(), 1u);
}

TEST(UnnamedLaunches, AGoneProcessesHandlesAreForgotten) {
  UnnamedLaunches held;
  held.add(1, 0x10, 0, 5);
  held.add(2, 0x10, 0, 6);
  held.add(2, 0x20, 0, 7);
  held.add(3, 0x10, 0, 8);
  held.forget(2);
  EXPECT_EQ(held.handles(), 2u);
  EXPECT_TRUE(held.take(2, 0x20).empty());
  EXPECT_EQ(held.take(1, 0x10).size(), 1u);
  EXPECT_EQ(held.take(3, 0x10).size(), 1u);
}

}  // namespace
}  // namespace eacgm::analysis
