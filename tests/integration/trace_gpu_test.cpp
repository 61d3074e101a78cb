// `eacgm trace` / `eacgm run` with GPU sampling beside the trace, against the fake
// libnvidia-ml (the only GPU stand-in): samples in the JSON Lines stream, reduced to
// the traced processes; the run summary joining traced calls and GPU samples by pid;
// --no-gpu, gpu.sample = false, and a machine without NVML.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include "events.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

const std::string kFakeNvml = EACGM_TEST_BIN_DIR "/fake_nvml/libnvidia-ml.so.1";

// A config sampling every 50 ms, so a short command is sampled several times.
std::string fast_sampling_config(const std::string& dir, const std::string& extra = "") {
  std::string path = dir + "/eacgm.toml";
  std::ofstream(path) << "[gpu]\ninterval_s = 0.05\n" << extra;
  return path;
}

void touch(const std::string& path) { std::ofstream(path) << "go\n"; }

class TraceGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("EACGM_NVML_LIBRARY", kFakeNvml.c_str(), 1);
    setenv("EACGM_FAKE_NVML_SCENARIO", "full", 1);
    // The fake lists live processes of this name on GPU 0 (768 MiB, SM 70%).
    setenv("EACGM_FAKE_NVML_GPU_COMM", "cuda_calls", 1);
  }
  void TearDown() override {
    unsetenv("EACGM_NVML_LIBRARY");
    unsetenv("EACGM_FAKE_NVML_SCENARIO");
    unsetenv("EACGM_FAKE_NVML_GPU_COMM");
  }
};

TEST_F(TraceGpu, JsonLinesCarryDeviceAndTracedProcessSamples) {
  std::string dir = temp_dir();
  std::string go = dir + "/go", out = dir + "/events.jsonl";
  // A cuda_calls outside the traced tree: the fake lists it too, eacgm must leave it out.
  Subprocess outsider({bin("cuda_calls"), "--wait-file", dir + "/never"});
  ASSERT_TRUE(outsider.wait_for("ready"));
  Subprocess eacgm({bin("eacgm"), "trace", "--config", fast_sampling_config(dir), "--probes", "cuda", "-o",
                    out, "--", bin("cuda_calls"), "--wait-file", go});
  ASSERT_TRUE(eacgm.wait_for("ready"));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // several passes while it waits
  touch(go);
  EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
  EXPECT_TRUE(std::regex_search(eacgm.err(), std::regex(R"(; sampling 2 GPUs every 0\.05 s)")))
      << eacgm.err();
  EXPECT_TRUE(std::regex_search(eacgm.err(), std::regex(R"(done events=12 .* gpu_passes=\d+)")))
      << eacgm.err();

  std::string ready = eacgm.out();
  const int traced_pid = std::stoi(ready.substr(ready.find("ready ") + 6));
  auto lines = read_jsonl(out);
  int calls = 0, devices = 0, processes = 0, busy = 0;
  std::set<unsigned> gpu_indices;
  for (const auto& l : lines) {
    if (l["domain"] != "gpu") {
      EXPECT_EQ(l["pid"], traced_pid);
      ++calls;
      continue;
    }
    ASSERT_TRUE(l["ts_ns"].is_number_unsigned()) << l;
    if (l["name"] == "device") {
      ++devices;
      gpu_indices.insert(l["gpu"]["index"].get<unsigned>());
      EXPECT_EQ(l["gpu"]["name"], "Fake NVML GPU (test stand-in)");
      EXPECT_TRUE(l["gpu"].contains("memory_used_bytes")) << l;
    } else if (l["name"] == "process") {
      ++processes;
      // Only the traced process: not the outsider, not the fake's fixed pids.
      EXPECT_EQ(l["pid"], traced_pid) << l;
      EXPECT_EQ(l["process"]["pid"], traced_pid);
      EXPECT_EQ(l["process"]["gpu"], 0);
      EXPECT_EQ(l["process"]["used_memory_bytes"], 768ull << 20);
      // 70 from the fake; 0 when the process exited between the pass's process-list
      // and utilization queries (a process absent from the utilization list is idle).
      const int sm = l["process"]["sm_utilization_percent"].get<int>();
      EXPECT_TRUE(sm == 70 || sm == 0) << l;
      busy += sm == 70;
    } else {
      ADD_FAILURE() << "unexpected GPU line " << l;
    }
  }
  EXPECT_EQ(calls, 12);
  EXPECT_EQ(gpu_indices, (std::set<unsigned>{0, 1}));
  EXPECT_GE(devices, 2 * 4) << "expected several passes of both GPUs";
  EXPECT_EQ(devices % 2, 0);
  EXPECT_GE(processes, 3) << "the traced process was alive for several passes";
  EXPECT_GE(busy, 3) << "its utilization is reported while it runs";
  outsider.signal(SIGKILL);
}

TEST_F(TraceGpu, RunSummaryJoinsCallsAndGpuSamplesByProcess) {
  std::string dir = temp_dir();
  std::string go = dir + "/go";
  Subprocess eacgm({bin("eacgm"), "run", "--mode", "per-call", "--config", fast_sampling_config(dir),
                    "--probes", "cuda", "--", bin("cuda_calls"), "--wait-file", go});
  ASSERT_TRUE(eacgm.wait_for("ready"));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  touch(go);
  EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
  std::string out = eacgm.out();
  const std::string pid =
      out.substr(out.find("ready ") + 6, out.find('\n', out.find("ready ")) - out.find("ready ") - 6);
  // GPU table: both fake GPUs with their fixed utilization, GPM activity (SM, tensor,
  // DRAM: the fake's means), memory and power.
  EXPECT_TRUE(std::regex_search(
      out,
      std::regex(
          R"(\n +0 +Fake NVML GPU \(test stand-in\) +\d+ +45% +45% +80% +60% +25% +1024 +81920 +123\.5 +123\.5 +\d+ +34C +1\n)")))
      << out;
  EXPECT_TRUE(std::regex_search(
      out,
      std::regex(
          R"(\n +1 +Fake NVML GPU \(test stand-in\) +\d+ +55% +55% +75% +55% +25% +2048 +81920 +124\.5 +124\.5 +\d+ +35C +0\n)")))
      << out;
  // Process table: the traced command, its 12 calls (11 failing without a GPU; the
  // registration has no return code) and what NVML saw of it on GPU 0.
  EXPECT_TRUE(
      std::regex_search(out, std::regex("\n *" + pid + R"( +cuda_calls +0 +12 +11 +\d+ +768 +\d+% +70%\n)")))
      << out;
  EXPECT_NE(out.find("accounting: events=12"), std::string::npos) << out;
  EXPECT_EQ(out.find("none read on GPU"), std::string::npos) << "both fake GPUs have GPM: " << out;
}

TEST_F(TraceGpu, RunJsonCarriesTheLastPassGpmBesideUtilization) {
  setenv("EACGM_FAKE_NVML_SCENARIO", "unsupported", 1);  // GPU 1 without GPM
  std::string dir = temp_dir();
  std::string go = dir + "/go";
  Subprocess eacgm({bin("eacgm"), "run", "--json", "--config", fast_sampling_config(dir), "--probes", "cuda",
                    "--", bin("cuda_calls"), "--wait-file", go});
  ASSERT_TRUE(eacgm.wait_for("ready", /*in_stderr=*/true));  // --json: the command's output goes there
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  touch(go);
  EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
  const json doc = json::parse(eacgm.out());
  ASSERT_EQ(doc["gpus"].size(), 2u) << doc["gpus"];
  const json& g0 = doc["gpus"][0];
  EXPECT_EQ(g0["utilization_gpu_percent"], 45);
  EXPECT_EQ(g0["gpm_supported"], true);
  EXPECT_DOUBLE_EQ(g0["gpm"]["sm_active"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(g0["gpm"]["tensor_active"].get<double>(), 0.6);
  EXPECT_EQ(doc["gpus"][1]["gpm_supported"], false);
  EXPECT_EQ(doc["gpus"][1]["gpm"], nullptr);
}

TEST_F(TraceGpu, NoGpuFlagAndConfigSwitchSamplingOff) {
  std::string dir = temp_dir();
  for (bool by_flag : {true, false}) {
    std::string out = dir + (by_flag ? "/flag.jsonl" : "/config.jsonl");
    std::vector<std::string> argv{bin("eacgm"), "trace", "--probes", "cuda", "-o", out};
    if (by_flag) {
      argv.insert(argv.end(), {"--config", fast_sampling_config(dir), "--no-gpu"});
    } else {
      argv.insert(argv.end(), {"--config", fast_sampling_config(dir + "/..", "sample = false\n")});
    }
    argv.insert(argv.end(), {"--", bin("cuda_calls")});
    Subprocess eacgm(argv);
    EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
    auto lines = read_jsonl(out);
    EXPECT_EQ(lines.size(), 12u);
    for (const auto& l : lines) EXPECT_NE(l["domain"], "gpu") << l;
    EXPECT_EQ(eacgm.err().find("sampling"), std::string::npos) << eacgm.err();
    EXPECT_EQ(eacgm.err().find("gpu_passes"), std::string::npos) << eacgm.err();
  }
}

TEST_F(TraceGpu, WithoutNvmlTracingGoesOnWithOneNotice) {
  std::string dir = temp_dir();
  std::string out = dir + "/events.jsonl";
  setenv("EACGM_NVML_LIBRARY", (dir + "/no/libnvidia-ml.so.1").c_str(), 1);
  Subprocess eacgm({bin("eacgm"), "trace", "--probes", "cuda", "-o", out, "--", bin("cuda_calls")});
  EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
  EXPECT_EQ(read_jsonl(out).size(), 12u);
  const std::string err = eacgm.err();
  EXPECT_TRUE(std::regex_search(
      err,
      std::regex(R"(eacgm: no GPU metrics: .*libnvidia-ml.*; tracing goes on \(--no-gpu silences this\)\n)")))
      << err;
  EXPECT_NE(err.find("done events=12 drops=0"), std::string::npos) << err;
}

TEST_F(TraceGpu, InitFailureAndLostGpuDoNotStopTheTrace) {
  std::string dir = temp_dir();
  {
    setenv("EACGM_FAKE_NVML_SCENARIO", "init_fail", 1);
    std::string out = dir + "/init.jsonl";
    Subprocess eacgm({bin("eacgm"), "trace", "--probes", "cuda", "-o", out, "--", bin("cuda_calls")});
    EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
    EXPECT_EQ(read_jsonl(out).size(), 12u);
    EXPECT_NE(eacgm.err().find("no GPU metrics: "), std::string::npos) << eacgm.err();
  }
  {
    setenv("EACGM_FAKE_NVML_SCENARIO", "gpu_lost", 1);
    std::string go = dir + "/go", out = dir + "/lost.jsonl";
    Subprocess eacgm({bin("eacgm"), "trace", "--config", fast_sampling_config(dir), "--probes", "cuda", "-o",
                      out, "--", bin("cuda_calls"), "--wait-file", go});
    ASSERT_TRUE(eacgm.wait_for("ready"));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    touch(go);
    EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
    int calls = 0, gpu1_ok = 0, gpu1_lost = 0, gpu0 = 0;
    for (const auto& l : read_jsonl(out)) {
      if (l["domain"] != "gpu") {
        ++calls;
      } else if (l["name"] == "device" && l["gpu"]["index"] == 1) {
        (l["gpu"]["lost"] == true ? gpu1_lost : gpu1_ok)++;
      } else if (l["name"] == "device") {
        ++gpu0;
      }
    }
    EXPECT_EQ(calls, 12);
    EXPECT_EQ(gpu1_ok, 1);  // the fake loses GPU 1 after the first pass
    EXPECT_GE(gpu1_lost, 2);
    EXPECT_EQ(gpu0, gpu1_ok + gpu1_lost);
  }
}

}  // namespace
}  // namespace eacgm::test
