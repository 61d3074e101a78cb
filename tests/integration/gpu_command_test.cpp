// Runs the real build/eacgm binary (`eacgm gpu`, --json, --processes, --watch) against the
// fake libnvidia-ml and without any NVML; checks exact output and exit codes.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

using nlohmann::json;

const std::string kEacgm = EACGM_TEST_BIN_DIR "/eacgm";
const std::string kFakeNvml = EACGM_TEST_BIN_DIR "/fake_nvml/libnvidia-ml.so.1";

struct CommandRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs eacgm with `args` and the environment changed by `env` ("NAME=value" sets,
// "NAME" alone removes). Stdout and stderr are kept apart.
CommandRun run_eacgm(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    std::string s(*e);
    bool replaced = false;
    for (const auto& change : env) {
      const std::string name = change.substr(0, change.find('='));
      if (s.compare(0, name.size() + 1, name + "=") == 0) replaced = true;
    }
    if (!replaced) envs.push_back(s);
  }
  for (const auto& change : env) {
    if (change.find('=') != std::string::npos) envs.push_back(change);
  }
  std::vector<std::string> argv_s{kEacgm};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv, envp;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);

  char out_path[] = "/tmp/eacgm-gpu-out-XXXXXX";
  char err_path[] = "/tmp/eacgm-gpu-err-XXXXXX";
  int out_fd = mkstemp(out_path);
  int err_fd = mkstemp(err_path);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, err_fd, STDERR_FILENO);
  CommandRun r;
  pid_t pid = 0;
  if (posix_spawn(&pid, kEacgm.c_str(), &fa, nullptr, argv.data(), envp.data()) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&fa);
  close(out_fd);
  close(err_fd);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  unlink(out_path);
  unlink(err_path);
  return r;
}

CommandRun run_fake(const std::string& scenario, const std::vector<std::string>& args) {
  return run_eacgm(args, {"EACGM_NVML_LIBRARY=" + kFakeNvml, "EACGM_FAKE_NVML_SCENARIO=" + scenario});
}

constexpr std::uint64_t kMiB = 1024ull * 1024;
constexpr std::uint64_t kGiB = 1024 * kMiB;

TEST(GpuCommand, TableShowsEveryGpuLikeACompactNvidiaSmi) {
  CommandRun r = run_fake("full", {"gpu"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(
      r.out,
      "Driver 999.99.99-fake  CUDA 12.4  2 GPUs\n"
      "GPU  Name                           Bus-Id            Util   SM  Tensor  DRAM  MemUtil  "
      "Memory used/total MiB  Temp  Power/limit W  SM MHz  Mem MHz  Fan  XID\n"
      "  0  Fake NVML GPU (test stand-in)  00000000:19:00.0   45%  80%     60%   25%      12%           "
      "1024 / 81920   34C    123.5 / 700    1980     2619  30%    1\n"
      "  1  Fake NVML GPU (test stand-in)  00000000:3B:00.0   55%  75%     55%   25%      13%           "
      "2048 / 81920   35C    124.5 / 700    1880     2619  31%    0\n");
}

TEST(GpuCommand, GpusWithoutGpmShowADashAndAreNamedOnce) {
  CommandRun r = run_fake("unsupported", {"gpu"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.out.find("SM, Tensor, DRAM: NVML GPM profiling counters, not on GPU 1 (they need a Hopper or newer "
                 "GPU and driver R520+)\n"),
      std::string::npos)
      << r.out;
  r = run_fake("full", {"gpu", "--json"});
  const json j = json::parse(r.out);
  EXPECT_EQ(j["gpus"][0]["gpm_supported"], true);
  EXPECT_DOUBLE_EQ(j["gpus"][0]["gpm"]["sm_active"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(j["gpus"][0]["gpm"]["tensor_active"].get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(j["gpus"][0]["gpm"]["pcie_rx_bytes_per_second"].get<double>(), 250.0 * kMiB);
  EXPECT_EQ(j["gpus"][0]["gpm"]["nvlinks"].size(), 4u);
  r = run_fake("unsupported", {"gpu", "--json"});
  const json u = json::parse(r.out);
  EXPECT_EQ(u["gpus"][1]["gpm_supported"], false);
  EXPECT_EQ(u["gpus"][1]["gpm"], nullptr);
}

// GPU 0 in MIG mode with GPU instances 1 (3g.40gb, two compute instances) and 5 (2g.20gb):
// GPM per GPU instance, in a table of its own and in `gpm_instances`; GPU 1 as before.
TEST(GpuCommand, MigGpuShowsGpmPerGpuInstance) {
  CommandRun t = run_eacgm(
      {"gpu"}, {"EACGM_NVML_LIBRARY=" + kFakeNvml, "EACGM_FAKE_NVML_SCENARIO=full", "EACGM_FAKE_NVML_MIG=2"});
  EXPECT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.err, "");
  // The instances in a table of their own after the GPUs'.
  const std::string instances =
      "\n"
      "MIG: GPM counters per GPU instance (none for the whole GPU)\n"
      "GPU  GI  Profile   SM  Tensor  DRAM  Graphics  FP16  FP32  FP64\n"
      "  0   1  3g.40gb  70%     50%   25%       75%   10%   20%    1%\n"
      "  0   5  2g.20gb  60%     40%   25%       65%   10%   20%    1%\n";
  ASSERT_TRUE(t.out.ends_with(instances)) << t.out;
  // Above it, the table without MIG but for GPU 0's own SM, Tensor and DRAM.
  std::string expected = run_fake("full", {"gpu"}).out;
  const std::string whole = "45%  80%     60%   25%";
  ASSERT_NE(expected.find(whole), std::string::npos) << expected;
  expected.replace(expected.find(whole), whole.size(), "45%    -       -     -");
  EXPECT_EQ(t.out.substr(0, t.out.size() - instances.size()), expected);

  CommandRun r = run_eacgm({"gpu", "--json"}, {"EACGM_NVML_LIBRARY=" + kFakeNvml,
                                               "EACGM_FAKE_NVML_SCENARIO=full", "EACGM_FAKE_NVML_MIG=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  const json& g = j["gpus"][0];
  EXPECT_EQ(g["gpm_supported"], true);
  EXPECT_EQ(g["gpm"], nullptr);
  EXPECT_EQ(g["field_errors"], json::array());
  ASSERT_EQ(g["gpm_instances"].size(), 2u) << g.dump();
  const json& gi = g["gpm_instances"][1];
  EXPECT_EQ(gi["gpu_instance_id"], 5);
  EXPECT_EQ(gi["profile"], "2g.20gb");
  EXPECT_DOUBLE_EQ(gi["sm_active"].get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(gi["tensor_active"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(gi["pcie_rx_bytes_per_second"].get<double>(), 250.0 * kMiB);
  EXPECT_EQ(gi["nvlink_tx_bytes_per_second"], nullptr);
  EXPECT_EQ(gi["nvlinks"], json::array());
  EXPECT_GE(gi["interval_seconds"].get<double>(), 0.09);
  EXPECT_EQ(g["gpm_instances"][0]["gpu_instance_id"], 1);
  EXPECT_EQ(g["gpm_instances"][0]["profile"], "3g.40gb");
  // Keys only where MIG is on.
  EXPECT_FALSE(j["gpus"][1].contains("gpm_instances"));
  EXPECT_DOUBLE_EQ(j["gpus"][1]["gpm"]["sm_active"].get<double>(), 0.75);
  const json plain = json::parse(run_fake("full", {"gpu", "--json"}).out);
  EXPECT_FALSE(plain["gpus"][0].contains("gpm_instances"));
}

TEST(GpuCommand, JsonCarriesEveryFieldInBaseUnits) {
  CommandRun r = run_fake("full", {"gpu", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["driver_version"], "999.99.99-fake");
  EXPECT_EQ(j["cuda_driver_version"], "12.4");
  EXPECT_EQ(j["sequence"], 0);
  EXPECT_TRUE(j["pass_cpu_seconds"].is_number());
  EXPECT_TRUE(j["time"].is_string());
  EXPECT_FALSE(j.contains("processes"));
  EXPECT_EQ(j["errors"], json::array());
  ASSERT_EQ(j["gpus"].size(), 2u);
  const json& g = j["gpus"][0];
  EXPECT_EQ(g["index"], 0);
  EXPECT_EQ(g["name"], "Fake NVML GPU (test stand-in)");
  EXPECT_EQ(g["uuid"], "GPU-fa4e0000-0000-0000-0000-000000000000");
  EXPECT_EQ(g["pci_bus_id"], "00000000:19:00.0");
  EXPECT_EQ(g["lost"], false);
  EXPECT_EQ(g["error"], nullptr);
  EXPECT_EQ(g["field_errors"], json::array());
  EXPECT_EQ(g["utilization_gpu_percent"], 45);
  EXPECT_EQ(g["utilization_memory_percent"], 12);
  EXPECT_EQ(g["memory_total_bytes"], 80 * kGiB);
  EXPECT_EQ(g["memory_used_bytes"], 1 * kGiB);
  EXPECT_EQ(g["memory_reserved_bytes"], 512 * kMiB);
  EXPECT_EQ(g["memory_free_bytes"], 80 * kGiB - 512 * kMiB - 1 * kGiB);
  EXPECT_EQ(g["temperature_gpu_celsius"], 34);
  EXPECT_EQ(g["temperature_memory_celsius"], 41);
  EXPECT_EQ(g["power_usage_milliwatts"], 123456);
  EXPECT_EQ(g["power_limit_milliwatts"], 700000);
  EXPECT_EQ(g["energy_total_millijoules"], 987654321);
  EXPECT_EQ(g["clock_sm_mhz"], 1980);
  EXPECT_EQ(g["clock_memory_mhz"], 2619);
  EXPECT_EQ(g["fan_speed_percent"], 30);
  EXPECT_EQ(g["encoder_utilization_percent"], 5);
  EXPECT_EQ(g["decoder_utilization_percent"], 7);
  EXPECT_EQ(g["pcie_tx_bytes_per_second"], 1000 * 1024);
  EXPECT_EQ(g["pcie_rx_bytes_per_second"], 2000 * 1024);
  EXPECT_EQ(g["pcie_replay_total"], 3);
  EXPECT_EQ(g["nvlink_tx_bytes_total"], 1 * kGiB);
  EXPECT_EQ(g["nvlink_rx_bytes_total"], 2 * kGiB);
  EXPECT_EQ(g["ecc_corrected_volatile_total"], 2);
  EXPECT_EQ(g["ecc_uncorrected_volatile_total"], 0);
  EXPECT_EQ(g["remapped_rows_correctable"], 1);
  EXPECT_EQ(g["remapped_rows_uncorrectable"], 0);
  EXPECT_EQ(g["remapped_rows_pending"], false);
  EXPECT_EQ(g["remapped_rows_failure"], false);
  EXPECT_EQ(g["clock_event_reasons"], 5);
  EXPECT_EQ(g["clock_event_reason_names"], json({"gpu_idle", "sw_power_cap"}));
  EXPECT_EQ(g["xid_errors_total"], 1);
  EXPECT_EQ(g["last_xid"], 31);
  const json& h = j["gpus"][1];
  EXPECT_EQ(h["uuid"], "GPU-fa4e0000-0000-0000-0000-000000000001");
  EXPECT_EQ(h["memory_used_bytes"], 2 * kGiB);
  EXPECT_EQ(h["clock_event_reason_names"], json::array());
  EXPECT_EQ(h["xid_errors_total"], 0);
  EXPECT_EQ(h["last_xid"], nullptr);
}

TEST(GpuCommand, ProcessesTableAndJson) {
  CommandRun t = run_fake("full", {"gpu", "--processes"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const std::string expected_processes =
      "GPU      PID  Type  Process  Container  Memory MiB   SM  Mem  Enc  Dec\n"
      "  0  5000001  C     python3  -                1024  50%  15%   0%   0%\n"
      "  0  5000002  G     Xorg     -                 256   0%   0%   0%   0%\n"
      "  1  5000001  C     python3  -                 512  20%   5%   1%   2%\n"
      "  1  5000003  C     -        -                   -   0%   0%   0%   0%\n";
  ASSERT_NE(t.out.find("\n\n"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.substr(t.out.find("\n\n") + 2), expected_processes);

  CommandRun r = run_fake("full", {"gpu", "--processes", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json p = json::parse(r.out)["processes"];
  ASSERT_EQ(p.size(), 4u);
  // pids above the kernel's PID_MAX_LIMIT cannot exist here, so /proc adds nothing.
  EXPECT_EQ(p[0], json::parse(R"({"pid":5000001,"gpu":0,"gpu_uuid":"GPU-fa4e0000-0000-0000-0000-000000000000",
      "name":"python3","container_id":null,"type":"C","used_memory_bytes":1073741824,
      "sm_utilization_percent":50,"memory_utilization_percent":15,
      "encoder_utilization_percent":0,"decoder_utilization_percent":0})"));
  EXPECT_EQ(p[1]["pid"], 5000002);
  EXPECT_EQ(p[1]["type"], "G");
  EXPECT_EQ(p[1]["used_memory_bytes"], 256 * kMiB);
  EXPECT_EQ(p[2]["gpu"], 1);
  EXPECT_EQ(p[2]["used_memory_bytes"], 512 * kMiB);
  EXPECT_EQ(p[2]["sm_utilization_percent"], 20);
  EXPECT_EQ(p[2]["decoder_utilization_percent"], 2);
  EXPECT_EQ(p[3]["pid"], 5000003);
  EXPECT_EQ(p[3]["name"], nullptr);
  EXPECT_EQ(p[3]["used_memory_bytes"], nullptr);
}

TEST(GpuCommand, UnsupportedFieldsAreNullForThatGpuOnly) {
  CommandRun r = run_fake("unsupported", {"gpu", "--json", "--processes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  const json& g = j["gpus"][0];
  EXPECT_EQ(g["fan_speed_percent"], nullptr);  // the data-centre case: no fan
  EXPECT_EQ(g["memory_used_bytes"], 1 * kGiB);
  EXPECT_EQ(g["power_usage_milliwatts"], 123456);
  EXPECT_EQ(g["xid_errors_total"], 1);
  const json& h = j["gpus"][1];
  for (const char* absent : {"temperature_memory_celsius",
                             "power_usage_milliwatts",
                             "power_limit_milliwatts",
                             "energy_total_millijoules",
                             "fan_speed_percent",
                             "encoder_utilization_percent",
                             "decoder_utilization_percent",
                             "pcie_tx_bytes_per_second",
                             "pcie_rx_bytes_per_second",
                             "pcie_replay_total",
                             "nvlink_tx_bytes_total",
                             "nvlink_rx_bytes_total",
                             "ecc_corrected_volatile_total",
                             "ecc_uncorrected_volatile_total",
                             "remapped_rows_correctable",
                             "remapped_rows_pending",
                             "clock_event_reasons",
                             "clock_event_reason_names",
                             "xid_errors_total",
                             "last_xid"}) {
    EXPECT_EQ(h[absent], nullptr) << absent;
  }
  EXPECT_EQ(h["utilization_gpu_percent"], 55);
  EXPECT_EQ(h["memory_total_bytes"], 80 * kGiB);
  EXPECT_EQ(h["temperature_gpu_celsius"], 35);
  EXPECT_EQ(h["clock_sm_mhz"], 1880);
  EXPECT_EQ(h["field_errors"], json::array());
  EXPECT_EQ(j["processes"][2]["used_memory_bytes"], 512 * kMiB);
  EXPECT_EQ(j["processes"][2]["sm_utilization_percent"], nullptr);

  CommandRun t = run_fake("unsupported", {"gpu"});
  EXPECT_EQ(t.exit_code, 0);
  EXPECT_NE(
      t.out.find(
          "  1  Fake NVML GPU (test stand-in)  00000000:3B:00.0   55%    -       -     -      13%           "
          "2048 / 81920   35C              -    1880     2619    -    -\n"),
      std::string::npos)
      << t.out;
}

TEST(GpuCommand, GpuLostMidWatchIsReportedAndTheOtherGpuStays) {
  CommandRun r =
      run_fake("gpu_lost", {"gpu", "--json", "--processes", "--watch", "--count", "2", "--interval", "0.05"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "");
  std::istringstream lines(r.out);
  std::string first_line, second_line, extra;
  ASSERT_TRUE(std::getline(lines, first_line));
  ASSERT_TRUE(std::getline(lines, second_line));
  EXPECT_FALSE(std::getline(lines, extra)) << "one JSON object per pass, two passes";
  json first = json::parse(first_line), second = json::parse(second_line);
  EXPECT_EQ(first["sequence"], 0);
  EXPECT_EQ(second["sequence"], 1);
  EXPECT_EQ(first["gpus"][1]["lost"], false);
  EXPECT_EQ(first["gpus"][1]["memory_used_bytes"], 2 * kGiB);
  EXPECT_EQ(first["processes"].size(), 4u);

  const json& lost = second["gpus"][1];
  EXPECT_EQ(lost["lost"], true);
  EXPECT_EQ(lost["error"], "nvmlDeviceGetUtilizationRates failed: GPU is lost");
  EXPECT_EQ(lost["uuid"], "GPU-fa4e0000-0000-0000-0000-000000000001");
  EXPECT_EQ(lost["memory_used_bytes"], nullptr);
  EXPECT_EQ(lost["utilization_gpu_percent"], nullptr);
  EXPECT_EQ(second["gpus"][0]["lost"], false);
  EXPECT_EQ(second["gpus"][0]["memory_used_bytes"], 1 * kGiB);
  EXPECT_EQ(second["processes"].size(), 2u);
  EXPECT_EQ(second["errors"], json({"GPU 1: nvmlDeviceGetComputeRunningProcesses_v3: GPU is lost"}));

  CommandRun t = run_fake("gpu_lost", {"gpu", "--count", "2", "--interval", "0.05"});
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.out.find("  1  Fake NVML GPU (test stand-in)  00000000:3B:00.0  LOST"), std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find(
                "GPU 1: lost (nvmlDeviceGetUtilizationRates failed: GPU is lost): reset the GPU or reboot\n"),
            std::string::npos)
      << t.out;
}

// No NVML is a runtime failure (1), not a usage error (2).
TEST(GpuCommand, NoLibraryAtAllIsANoticeAndExitCode1) {
  CommandRun r = run_eacgm({"gpu"}, {"EACGM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "eacgm: NVML not available (cannot load EACGM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1: "
            "/nonexistent/libnvidia-ml.so.1: cannot open shared object file: No such file or directory); "
            "no GPU metrics\n");
}

TEST(GpuCommand, NoDriverOnTheSearchPath) {
  if (void* dl = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(dl);
    GTEST_SKIP() << "this machine has an NVIDIA driver; the no-driver notice cannot be observed";
  }
  for (const char* dir : {"/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/lib/x86_64-linux-gnu",
                          "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"}) {
    if (access((std::string(dir) + "/libnvidia-ml.so.1").c_str(), F_OK) == 0) {
      GTEST_SKIP() << dir << "/libnvidia-ml.so.1 exists; the no-driver notice cannot be observed";
    }
  }
  const std::string why = "NVML not available (libnvidia-ml.so.1 not found: install the NVIDIA driver)";
  for (const auto& args : {std::vector<std::string>{"gpu"}, std::vector<std::string>{"gpu", "--json"},
                           std::vector<std::string>{"gpu", "--processes", "--watch"}}) {
    CommandRun r = run_eacgm(args, {"EACGM_NVML_LIBRARY"});
    EXPECT_EQ(r.exit_code, 1);
    if (args.size() == 2 && args[1] == "--json") {
      // A program reading stdout learns why there is nothing to report.
      EXPECT_EQ(json::parse(r.out), json({{"error", why}, {"gpus", json::array()}})) << r.out;
    } else {
      EXPECT_EQ(r.out, "");
    }
    EXPECT_EQ(r.err, "eacgm: " + why + "; no GPU metrics\n");
  }
}

TEST(GpuCommand, InitFailureCarriesTheNvmlError) {
  for (const char* flag : {"", "--json"}) {
    std::vector<std::string> args{"gpu"};
    if (*flag) args.push_back(flag);
    CommandRun r = run_fake("init_fail", args);
    EXPECT_EQ(r.exit_code, 1);
    if (*flag) {
      EXPECT_EQ(
          r.out,
          "{\n  \"error\": \"NVML not available (nvmlInit_v2 failed: Driver Not Loaded; load the nvidia "
          "kernel module (is the driver installed?))\",\n  \"gpus\": []\n}\n");
    } else {
      EXPECT_EQ(r.out, "");
    }
    EXPECT_EQ(
        r.err,
        "eacgm: NVML not available (nvmlInit_v2 failed: Driver Not Loaded; load the nvidia kernel module "
        "(is the driver installed?)); no GPU metrics\n");
  }
}

// Without a usable NVML, --json still prints a JSON document on stdout: the reason and
// no GPUs (and no processes with --processes; one line with --watch), with the same
// exit code as the table form; a missing library and a failed init alike.
TEST(GpuCommand, JsonSaysWhyThereAreNoGpus) {
  for (const auto& extra : {std::vector<std::string>{}, std::vector<std::string>{"--processes"},
                            std::vector<std::string>{"--watch", "--count", "2"}}) {
    std::vector<std::string> args{"gpu", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    CommandRun init = run_fake("init_fail", args);
    EXPECT_EQ(init.exit_code, 1);
    ASSERT_FALSE(init.out.empty()) << init.err;
    if (!extra.empty() && extra[0] == "--watch") {
      EXPECT_EQ(std::count(init.out.begin(), init.out.end(), '\n'), 1) << init.out;
    }
    const json doc = json::parse(init.out);
    EXPECT_EQ(
        doc["error"],
        "NVML not available (nvmlInit_v2 failed: Driver Not Loaded; load the nvidia kernel module (is the "
        "driver installed?))");
    EXPECT_EQ(doc["gpus"], json::array());
    EXPECT_EQ(doc.contains("processes"), !extra.empty() && extra[0] == "--processes");

    CommandRun missing = run_eacgm(args, {"EACGM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1"});
    EXPECT_EQ(missing.exit_code, 1);
    const json m = json::parse(missing.out);
    EXPECT_EQ(m["error"].get<std::string>().rfind(
                  "NVML not available (cannot load EACGM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1", 0),
              0u)
        << missing.out;
    EXPECT_EQ(m["gpus"], json::array());
  }
  CommandRun c = run_fake("full", {"gpu", "--json", "--config", "/nonexistent/eacgm.toml"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_EQ(
      json::parse(c.out)["error"].get<std::string>().rfind("cannot read config /nonexistent/eacgm.toml", 0),
      0u)
      << c.out;
}

TEST(GpuCommand, NoGpusIsNotAnError) {
  CommandRun r = run_fake("no_gpus", {"gpu", "--processes"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "Driver 999.99.99-fake  CUDA 12.4  0 GPUs\n"
            "No GPUs found by NVML\n"
            "\n"
            "No processes on the GPUs\n");
}

TEST(GpuCommand, WatchRefreshesOnTheInterval) {
  CommandRun r = run_fake("full", {"gpu", "--json", "--count", "3", "--interval", "0.1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::vector<json> snaps;
  while (std::getline(lines, line)) snaps.push_back(json::parse(line));
  ASSERT_EQ(snaps.size(), 3u);
  for (std::size_t i = 0; i < snaps.size(); ++i) {
    EXPECT_EQ(snaps[i]["sequence"], i);
    EXPECT_EQ(snaps[i]["gpus"][0]["xid_errors_total"], 1);  // counted once, kept
  }
}

TEST(GpuCommand, BadIntervalAndMissingConfigAreRejected) {
  CommandRun r = run_fake("full", {"gpu", "--interval", "0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out.find("Driver"), std::string::npos);
  CommandRun c = run_fake("full", {"gpu", "--config", "/nonexistent/eacgm.toml"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_EQ(c.out, "");
  EXPECT_EQ(c.err.rfind("eacgm: cannot read config /nonexistent/eacgm.toml", 0), 0u) << c.err;
}

}  // namespace
