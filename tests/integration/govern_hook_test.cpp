// libeacgm_hook.so against the FAKE libcuda (tests/fakes/fake_libcuda): memory limits on
// every allocation path through every lookup route, the free/total view (driver and
// NVML), frees and async frees, per-device accounting, fork, threads, launches, a
// program without CUDA and bad environment values. No GPU and no privileges needed.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "subprocess.h"

namespace {

using eacgm::test::bin;
using eacgm::test::Subprocess;

std::string hook() { return bin("libeacgm_hook.so"); }
std::string fake_cuda() { return bin("fake_libcuda/libcuda.so.1"); }
std::string fake_nvml() { return bin("fake_nvml/libnvidia-ml.so.1"); }

struct HookedRun {
  int code = -1;
  std::string out;
  std::string err;
  std::map<std::string, std::string> values;  // "key=value" lines (first token of each)
};

// Runs `argv` under env(1) with LD_PRELOAD=libeacgm_hook.so and `env`.
HookedRun run_hooked(const std::vector<std::string>& env, const std::vector<std::string>& argv) {
  std::vector<std::string> full = {"/usr/bin/env",
                                   "-u",
                                   "EACGM_MEMORY_LIMIT",
                                   "-u",
                                   "CUDA_DEVICE_MEMORY_LIMIT",
                                   "-u",
                                   "EACGM_SCHED_SOCKET",
                                   "-u",
                                   "EACGM_SCHED_ADDR",
                                   "LD_PRELOAD=" + hook()};
  full.insert(full.end(), env.begin(), env.end());
  full.insert(full.end(), argv.begin(), argv.end());
  Subprocess p(full);
  HookedRun r;
  r.code = p.wait(std::chrono::seconds(60));
  r.out = p.out();
  r.err = p.err();
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      auto eq = word.find('=');
      if (eq != std::string::npos) r.values[word.substr(0, eq)] = word.substr(eq + 1);
    }
  }
  return r;
}

HookedRun run_calls(const std::string& route, const std::string& scenario,
                    const std::vector<std::string>& env) {
  std::string program = route == "linked" ? bin("govern_calls_linked") : bin("govern_calls");
  return run_hooked(env, {program, route, scenario, fake_cuda(), fake_nvml()});
}

const char* kPaths[] = {"alloc", "pitch", "managed", "async", "pool", "create", "array", "array3d"};

class GovernRoutes : public testing::TestWithParam<std::string> {};

// Under a 64 MiB limit each path allocates 48 MiB (0), is refused 32 MiB more with
// CUDA_ERROR_OUT_OF_MEMORY (2), frees (0), and then gets the 32 MiB (0): the free was
// accounted, whichever route the functions came from.
TEST_P(GovernRoutes, LimitsEveryAllocationPathAndFollowsFrees) {
  HookedRun r = run_calls(GetParam(), "limits", {"EACGM_MEMORY_LIMIT=64MiB"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  for (const char* path : kPaths) {
    EXPECT_EQ(r.values["path_" + std::string(path)], "0,2,0,0") << path << "\n" << r.out;
  }
  EXPECT_EQ(r.values["host_alloc"], "0") << "pinned host memory is not GPU memory";
  // Every governed function came back wrapped; others (cuInit) are the driver's own.
  int wrapped = 0;
  for (const auto& [key, value] : r.values) {
    if (key.rfind("owner_cu", 0) != 0 || key == "owner_cuInit") continue;
    EXPECT_EQ(value, "hook") << key;
    ++wrapped;
  }
  EXPECT_GE(wrapped, 20);
  EXPECT_EQ(r.values["owner_cuInit"], "driver");
  EXPECT_EQ(r.err, "");
}

INSTANTIATE_TEST_SUITE_P(Hook, GovernRoutes,
                         testing::Values("linked", "dlsym", "procaddr", "procaddr_pt", "procaddr_v1"));

TEST(GovernHook, ProcAddressHonoursVersionAndPerThreadFlag) {
  HookedRun legacy = run_calls("procaddr", "launches", {});
  ASSERT_EQ(legacy.code, 0) << legacy.err;
  EXPECT_EQ(legacy.values["owner_cuGetProcAddress_v2"], "hook");
  EXPECT_EQ(legacy.values["owner_self_lookup"], "hook") << "cuGetProcAddress asked for itself";
  EXPECT_EQ(legacy.values["variant_cuMemAllocAsync"], "cuMemAllocAsync");
  EXPECT_EQ(legacy.values["variant_cuLaunchKernel"], "cuLaunchKernel");
  EXPECT_EQ(legacy.values["variant_cuCtxSynchronize_12080"], "cuCtxSynchronize");
  EXPECT_EQ(legacy.values["variant_cuCtxSynchronize_13000"], "cuCtxSynchronize_v2");
  HookedRun per_thread = run_calls("procaddr_pt", "launches", {});
  ASSERT_EQ(per_thread.code, 0) << per_thread.err;
  EXPECT_EQ(per_thread.values["variant_cuMemAllocAsync"], "cuMemAllocAsync_ptsz");
  EXPECT_EQ(per_thread.values["variant_cuLaunchKernel"], "cuLaunchKernel_ptsz");
  for (const char* k : {"launch", "launch_ex", "launch_coop", "graph_launch", "sync"}) {
    EXPECT_EQ(per_thread.values[k], "0") << k;
  }
}

TEST(GovernHook, ZeroLimitMeansNoLimit) {
  for (const char* env : {"EACGM_MEMORY_LIMIT=0", "CUDA_DEVICE_MEMORY_LIMIT=0"}) {
    HookedRun r = run_calls("dlsym", "limits", {env});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.values["path_alloc"], "0,0,0,0") << env;
    EXPECT_EQ(r.values["path_create"], "0,0,0,0") << env;
  }
}

TEST(GovernHook, HamiVariablesAndPrecedence) {
  HookedRun hami = run_calls("procaddr", "limits", {"CUDA_DEVICE_MEMORY_LIMIT=64m"});
  ASSERT_EQ(hami.code, 0) << hami.err;
  EXPECT_EQ(hami.values["path_alloc"], "0,2,0,0");
  HookedRun hami_index = run_calls("procaddr", "limits", {"CUDA_DEVICE_MEMORY_LIMIT_0=65536k"});
  EXPECT_EQ(hami_index.values["path_async"], "0,2,0,0");
  // EACGM_MEMORY_LIMIT_0 wins over every other spelling.
  HookedRun ours =
      run_calls("procaddr", "limits",
                {"CUDA_DEVICE_MEMORY_LIMIT=1g", "EACGM_MEMORY_LIMIT=2GiB", "EACGM_MEMORY_LIMIT_0=0.0625GiB"});
  EXPECT_EQ(ours.values["path_pool"], "0,2,0,0");
}

// cuMemGetInfo and cuDeviceTotalMem report the limit; free never wraps past zero (HAMi-
// core reports ~18 EB there); each device has its own account; cuMemCreate is charged
// to the device its properties name.
TEST(GovernHook, MemoryViewPerDevice) {
  HookedRun r = run_calls("procaddr", "view", {"EACGM_MEMORY_LIMIT=64MiB"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.values["dev0_after16_free_mib"], "48");
  EXPECT_EQ(r.values["total_mib"], "64");
  EXPECT_EQ(r.values["dev0_full_free"], "0");
  EXPECT_EQ(r.values["dev0_over"], "2");
  EXPECT_EQ(r.values["dev0_total_mem_mib"], "64");
  EXPECT_EQ(r.values["dev1_total_mem_mib"], "64");
  EXPECT_EQ(r.values["dev1_free_mib"], "64");
  EXPECT_EQ(r.values["dev1_alloc"], "0");
  EXPECT_EQ(r.values["create_for_dev0_from_dev1"], "2");
  EXPECT_EQ(r.values["create_for_dev1"], "0");
}

TEST(GovernHook, PerDeviceLimits) {
  HookedRun r = run_calls("procaddr", "view", {"EACGM_MEMORY_LIMIT_0=64MiB", "EACGM_MEMORY_LIMIT_1=1GiB"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.values["dev0_total_mem_mib"], "64");
  EXPECT_EQ(r.values["dev1_total_mem_mib"], "1024");
}

TEST(GovernHook, NvmlReportsTheLimitedView) {
  HookedRun r = run_calls("dlsym", "nvml", {"EACGM_MEMORY_LIMIT=64MiB"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.values["owner_nvml"], "hook");
  EXPECT_NE(r.out.find("nvml=0 total_mib=64 used_mib=24 free_mib=40"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nvml_v2=0 total_mib=64 used_mib=24 free_mib=40"), std::string::npos) << r.out;
}

TEST(GovernHook, ForkWithoutExecStartsTheChildClean) {
  HookedRun r = run_calls("dlsym", "fork", {"EACGM_MEMORY_LIMIT=64MiB"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.values["parent_first"], "0");
  EXPECT_EQ(r.values["child_alloc"], "0");
  EXPECT_EQ(r.values["child_status"], "0");
  EXPECT_EQ(r.values["parent_over"], "2");
}

TEST(GovernHook, ThreadsNeverPassTheLimitTogether) {
  HookedRun r = run_calls("procaddr", "threads", {"EACGM_MEMORY_LIMIT=64MiB"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.values["held_at_once"], "4");
  EXPECT_EQ(r.values["rounds_failed"], "0");
  EXPECT_EQ(r.values["whole_limit_after"], "0");
}

TEST(GovernHook, NoCurrentContextIsNotAccountedAndDoesNotCrash) {
  HookedRun r = run_calls("dlsym", "no_context", {"EACGM_MEMORY_LIMIT=64MiB"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.values["no_ctx_first"], "0");
  EXPECT_EQ(r.values["no_ctx_second"], "0");
  EXPECT_EQ(r.values["no_ctx_info"], "201");  // the driver's CUDA_ERROR_INVALID_CONTEXT, untouched
}

// A program that never touches CUDA: same output, nothing on stderr, even with a bad
// value in the environment (the hook reads it only on the first CUDA call).
TEST(GovernHook, ProgramWithoutCudaRunsUnaffected) {
  HookedRun r = run_hooked({"EACGM_MEMORY_LIMIT=bogus"},
                           {"/bin/sh", "-c", "echo hello; ls / >/dev/null && echo listed"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "hello\nlisted\n");
  EXPECT_EQ(r.err, "");
}

// exec: the new program is governed afresh (LD_PRELOAD is inherited), with no state
// carried over from the shell that exec'd it.
TEST(GovernHook, ExecKeepsTheProgramGoverned) {
  std::string cmd = "exec " + bin("govern_calls") + " procaddr limits " + fake_cuda();
  HookedRun r = run_hooked({"EACGM_MEMORY_LIMIT=64MiB"}, {"/bin/sh", "-c", cmd});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.values["path_alloc"], "0,2,0,0");
  EXPECT_EQ(r.values["path_create"], "0,2,0,0");
}

TEST(GovernHook, BadLimitIsReportedAndIgnored) {
  HookedRun r = run_calls("dlsym", "limits", {"EACGM_MEMORY_LIMIT=12 parsecs"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("ignoring EACGM_MEMORY_LIMIT=12 parsecs: not a memory size"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.values["path_alloc"], "0,0,0,0");
}

}  // namespace
