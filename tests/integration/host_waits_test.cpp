// Integration tests (root, real eBPF on the raw syscall tracepoints and real uprobes): the
// host waits end to end. host_waits blocks 300 ms on a condition variable (futex) and
// 200 ms in poll on an empty pipe, and with the FAKE libcuda 100 ms in each of
// cuStreamSynchronize, cuCtxSynchronize and cuMemcpyDtoH_v2; `eacgm run --json` must
// report about those times per kind. Bounds leave room for a loaded machine: at least
// 80% of what was planted, and not far above it.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

constexpr double kMs = 1e6;

std::string fake_libcuda() { return bin("fake_libcuda/libcuda.so.1"); }

json run_waits(const std::vector<std::string>& options, const std::vector<std::string>& program_args = {}) {
  std::vector<std::string> argv = {bin("eacgm"), "run", "--json", "--no-gpu"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.push_back(bin("host_waits"));
  argv.insert(argv.end(), program_args.begin(), program_args.end());
  Subprocess eacgm(argv);
  EXPECT_EQ(eacgm.wait(), 0) << eacgm.err();
  EXPECT_EQ(eacgm.err().find("no host waits"), std::string::npos) << eacgm.err();
  return json::parse(eacgm.out());
}

// The waits of the one process of the run, by kind.
std::map<std::string, json> waits_of(const json& doc) {
  std::map<std::string, json> out;
  const json& procs = doc["waits"]["processes"];
  EXPECT_EQ(procs.size(), 1u) << doc["waits"].dump(2);
  if (procs.size() != 1) return out;
  EXPECT_EQ(procs[0]["comm"], "host_waits");
  EXPECT_TRUE(procs[0]["exited"].get<bool>());
  for (const auto& w : procs[0]["waits"]) out[w["kind"].get<std::string>()] = w;
  return out;
}

void expect_about(const json& wait, double planted_ms, const std::string& what) {
  ASSERT_FALSE(wait.is_null()) << what;
  const double total = wait["total_ns"].get<double>();
  EXPECT_GE(total, 0.8 * planted_ms * kMs) << what << ": " << wait.dump();
  EXPECT_LE(total, planted_ms * kMs + 700 * kMs) << what << ": " << wait.dump();
}

TEST(HostWaitsTrace, FutexAndPollWaitsOfAPlainProgram) {
  const json doc = run_waits({"--probes", "cuda_driver"});
  auto w = waits_of(doc);
  ASSERT_TRUE(w.contains("futex")) << doc["waits"].dump(2);
  ASSERT_TRUE(w.contains("input_wait")) << doc["waits"].dump(2);
  expect_about(w["futex"], 300, "futex");
  expect_about(w["input_wait"], 200, "input_wait");
  EXPECT_GE(w["futex"]["calls"].get<int>(), 1);
  EXPECT_EQ(w["input_wait"]["calls"], 1) << "one blocking poll";
  EXPECT_EQ(w["futex"]["timed"], w["futex"]["calls"]) << "every syscall wait is timed";
  EXPECT_FALSE(w["futex"]["estimated"].get<bool>());
  // The slowest futex wait is the condition variable's.
  EXPECT_GE(w["futex"]["max_ns"].get<double>(), 240 * kMs);
  // The program does little but wait, one wait at a time: the shares of its wall time
  // (from its exec to its exit, as the kernel saw them) add up to nearly all of it.
  const double shares = w["futex"]["share"].get<double>() + w["input_wait"]["share"].get<double>();
  EXPECT_GT(shares, 0.5) << doc["waits"].dump(2);
  EXPECT_LT(shares, 1.02) << doc["waits"].dump(2);
  for (const char* kind : {"stream_sync", "device_sync", "blocking_copy"})
    EXPECT_FALSE(w.contains(kind)) << kind;
  EXPECT_GT(doc["accounting"]["host_waits"].get<int>(), 1);
}

TEST(HostWaitsTrace, SyncWaitsThroughTheFakeDriverPerCall) {
  const json doc = run_waits({"--probes", "cuda_driver", "--mode", "per-call"}, {"--cuda", fake_libcuda()});
  auto w = waits_of(doc);
  for (const char* kind : {"stream_sync", "device_sync", "blocking_copy"}) {
    ASSERT_TRUE(w.contains(kind)) << kind << ": " << doc["waits"].dump(2);
    EXPECT_EQ(w[kind]["calls"], 1) << kind;
    EXPECT_EQ(w[kind]["timed"], 1) << kind;
    expect_about(w[kind], 100, kind);
  }
  expect_about(w["futex"], 300, "futex");
  expect_about(w["input_wait"], 200, "input_wait");
}

TEST(HostWaitsTrace, SyncWaitsThroughTheFakeDriverAlwaysOn) {
  // Every counted call timed (sample_shift 0, no budget control), so the totals are known.
  const std::string config = temp_dir() + "/waits.toml";
  std::ofstream(config) << "[trace]\nsample_shift = 0\nbudget = 0\n";
  const json doc = run_waits({"--probes", "cuda_driver", "--mode", "always-on", "--config", config},
                             {"--cuda", fake_libcuda()});
  auto w = waits_of(doc);
  for (const char* kind : {"stream_sync", "device_sync", "blocking_copy"}) {
    ASSERT_TRUE(w.contains(kind)) << kind << ": " << doc["waits"].dump(2);
    EXPECT_EQ(w[kind]["calls"], 1) << kind;
    EXPECT_EQ(w[kind]["timed"], 1) << kind;
    expect_about(w[kind], 100, kind);
  }
  EXPECT_GT(doc["accounting"]["counted_calls"].get<int>(), 0) << "counted in the kernel, not recorded";
}

TEST(HostWaitsTrace, TablesHaveAHostWaitsSectionAndTheSwitchTurnsItOff) {
  {
    Subprocess eacgm({bin("eacgm"), "run", "--no-gpu", "--probes", "cuda_driver", "--", bin("host_waits")});
    ASSERT_EQ(eacgm.wait(), 0) << eacgm.err();
    const std::string out = eacgm.out();
    auto at = out.find("\nhost waits");
    ASSERT_NE(at, std::string::npos) << out;
    EXPECT_NE(out.find("host_waits  futex", at), std::string::npos) << out;
    EXPECT_NE(out.find("host_waits  input_wait", at), std::string::npos) << out;
  }
  const std::string config = temp_dir() + "/no_waits.toml";
  std::ofstream(config) << "[trace]\nhost_waits = false\n";
  const json doc = run_waits({"--probes", "cuda_driver", "--config", config});
  EXPECT_TRUE(doc["waits"]["processes"].empty()) << doc["waits"].dump(2);
  EXPECT_FALSE(doc["accounting"].contains("host_waits"));
}

}  // namespace
}  // namespace eacgm::test
