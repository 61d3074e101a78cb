// `eacgm serve` end to end: Debian's Prometheus scrapes it while it traces the CUDA test
// program (exact counts through PromQL), promtool accepts /metrics, the JSON API lists the
// program, the event stream delivers summaries, SIGHUP with a good and a bad config,
// SIGTERM, and refusals of unsafe listening. GPUs come from the fake libnvidia-ml.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "../unit/server/http_client.h"
#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using server::testing::get;

// The daemon against the fake NVML (serve_support.h).
class Serve : public ServeFixture {};

TEST_F(Serve, AlwaysOnByDefaultCountsEveryDriverCallExactly) {
  auto serve = start_serve({"--probes", "cuda_driver"}, "always-on");
  // The stub libcuda is in no loader cache: the daemon attaches it once the program maps
  // it, so the program waits for that before its loop.
  const std::string go = dir_ + "/go";
  Subprocess loop({bin("driver_loop"), "--threads", "2", "--iters", "10000", "--wait-file", go});
  ASSERT_TRUE(loop.wait_for("ready", false)) << loop.err();
  ASSERT_TRUE(serve->wait_for("libcuda.so", true)) << serve->err();
  std::ofstream(go) << "go";
  ASSERT_EQ(loop.wait(), 0) << loop.err();
  for (const char* f : {"cuLaunchKernel", "cuMemsetD32Async", "cuStreamSynchronize"}) {
    const std::string series =
        std::string("eacgm_calls_total{domain=\"cuda_driver\",function=\"") + f + "\"}";
    EXPECT_TRUE(eventually([&] { return metric(series) == "20000"; })) << series << " = " << metric(series);
  }
  EXPECT_NE(metric("eacgm_counted_calls_total"), "") << "always-on counts are exported";
}

// The agent's program is linked with jemalloc, whose freed pages go back under process churn
// (glibc's stayed resident); serve says which allocator it runs on.
TEST_F(Serve, SaysItsAllocatorIsJemalloc) {
  auto serve = start_serve({"--probes", "cuda_driver"}, "always-on");
  EXPECT_TRUE(serve->wait_for("memory: jemalloc", true)) << serve->err();
}

TEST_F(Serve, PrometheusScrapesExactCallCountsOfTheTracedProgram) {
  auto serve = start_serve({"--config", config("[gpu]\ninterval_s = 0.2\n")});
  const std::uint16_t prom_port = free_port();
  const std::string prom_dir = dir_ + "/prometheus";
  std::ofstream(dir_ + "/prometheus.yml") << "global:\n  scrape_interval: 1s\n"
                                          << "scrape_configs:\n  - job_name: eacgm\n    static_configs:\n"
                                          << "      - targets: ['127.0.0.1:" << port_ << "']\n";
  Subprocess prometheus(
      {"/usr/bin/prometheus", "--config.file=" + dir_ + "/prometheus.yml", "--storage.tsdb.path=" + prom_dir,
       "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
      dir_);
  // The program's calls (twice: counts must add up across runs).
  for (int i = 0; i < 2; ++i) {
    Subprocess program({bin("cuda_calls")});
    EXPECT_EQ(program.wait(), 7);
  }
  auto promql = [&](const std::string& query) -> std::string {
    std::string q;
    for (char c : query) {
      if (std::isalnum(static_cast<unsigned char>(c))) {
        q += c;
      } else {
        char buf[4];
        std::snprintf(buf, sizeof(buf), "%%%02X", static_cast<unsigned char>(c));
        q += buf;
      }
    }
    auto reply = get(prom_port, "/api/v1/query?query=" + q);
    if (reply.status != 200) return "";
    auto doc = json::parse(reply.body, nullptr, false);
    if (doc.is_discarded() || doc["data"]["result"].empty()) return "";
    return doc["data"]["result"][0]["value"][1].get<std::string>();
  };
  EXPECT_TRUE(
      eventually([&] { return promql("sum(eacgm_calls_total{function=\"cudaMalloc\"})") == "4"; }, 60s))
      << promql("sum(eacgm_calls_total{function=\"cudaMalloc\"})") << "\n"
      << prometheus.err().substr(0, 2000);
  EXPECT_TRUE(eventually([&] {
    return promql("sum(eacgm_calls_total{function=\"cudaLaunchKernel\"})") == "6";
  })) << promql("sum(eacgm_calls_total{function=\"cudaLaunchKernel\"})");
  // Per process: each run's 12 calls under its own pid and comm.
  EXPECT_EQ(promql("count(eacgm_process_calls_total{comm=\"cuda_calls\"} == 12)"), "2");
  // The fake GPUs under dcgm-exporter's names and labels.
  EXPECT_EQ(promql("count(DCGM_FI_DEV_GPU_UTIL)"), "2");
  EXPECT_EQ(promql("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",device=\"nvidia0\"} >= 0") != "", true);
  prometheus.signal(SIGTERM);
  prometheus.wait();
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0) << serve->err();
}

TEST_F(Serve, MetricsPassPromtoolAndTheApiListsTheProgram) {
  auto serve = start_serve();
  Subprocess program({bin("cuda_calls"), "--wait-file", dir_ + "/go"});
  ASSERT_TRUE(program.wait_for("ready"));
  const std::string pid = std::to_string(program.pid());
  // The kernel's name is learnt from its registration (read from the live process);
  // the program goes on only once the daemon has seen it, as a long-lived job would.
  ASSERT_TRUE(eventually([&] {
    return metric("eacgm_calls_total{domain=\"cuda\",function=\"__cudaRegisterFunction\"}") == "1";
  })) << get(port_, "/metrics").body;
  std::ofstream(dir_ + "/go") << "go\n";
  EXPECT_EQ(program.wait(), 7);
  ASSERT_TRUE(eventually([&] {
    return metric("eacgm_process_calls_total{pid=\"" + pid + "\",comm=\"cuda_calls\"}") == "12";
  })) << get(port_, "/metrics").body;
  EXPECT_EQ(metric("eacgm_calls_total{domain=\"cuda\",function=\"cudaMalloc\"}"), "2");

  // promtool reads what Prometheus would: every eacgm_ family lints clean (dcgm-exporter's
  // own names are its own style).
  const std::string path = dir_ + "/metrics.txt";
  std::ofstream(path) << get(port_, "/metrics").body;
  Subprocess promtool({"/bin/sh", "-c", "/usr/bin/promtool check metrics < " + path});
  const int rc = promtool.wait();
  EXPECT_TRUE(rc == 0 || rc == 3) << promtool.out() << promtool.err();
  std::istringstream findings(promtool.out() + promtool.err());
  for (std::string line; std::getline(findings, line);) {
    // Any finding on an eacgm_ family is a fault (dcgm-exporter's DCGM_FI_* names are its own).
    if (line.rfind("eacgm_", 0) == 0) ADD_FAILURE() << line;
    EXPECT_EQ(line.find("error while linting"), std::string::npos) << line;
  }

  auto procs = json::parse(get(port_, "/api/v1/processes").body);
  bool found = false;
  for (const auto& p : procs["processes"]) {
    if (p["pid"].get<int>() == program.pid()) {
      found = true;
      EXPECT_EQ(p["comm"], "cuda_calls");
      EXPECT_EQ(p["calls"], 12);
    }
  }
  EXPECT_TRUE(found) << procs.dump();
  auto functions = json::parse(get(port_, "/api/v1/functions").body);
  bool malloc_row = false;
  for (const auto& f : functions["functions"]) {
    if (f["function"] == "cudaMalloc") {
      malloc_row = true;
      EXPECT_EQ(f["calls"], 2);
      EXPECT_TRUE(f["p99_ns"].is_number());
    }
  }
  EXPECT_TRUE(malloc_row) << functions.dump();

  // The program's 3 launches of probe_kernel, grid (2,3,4) block (32,4,1), one shape.
  auto kernels = json::parse(get(port_, "/api/v1/kernels").body);
  bool kernel_row = false;
  for (const auto& k : kernels["kernels"]) {
    if (k["name"] != "probe_kernel(int*)") continue;
    kernel_row = true;
    EXPECT_EQ(k["launches"], 3);
    ASSERT_EQ(k["shapes"].size(), 1u) << k.dump();
    EXPECT_EQ(k["shapes"][0]["grid"], json::array({2, 3, 4}));
    EXPECT_EQ(k["shapes"][0]["block"], json::array({32, 4, 1}));
    EXPECT_EQ(k["shapes"][0]["launches"], 3);
  }
  EXPECT_TRUE(kernel_row) << kernels.dump();
  EXPECT_EQ(metric("eacgm_kernel_launches_total{kernel=\"probe_kernel(int*)\"}"), "3");
  // One cudaMemcpy of 65536 B and one cudaMemcpyAsync of 8192 B.
  EXPECT_EQ(metric("eacgm_bytes_total{domain=\"cuda\",function=\"cudaMemcpy\"}"), "65536");
  EXPECT_EQ(metric("eacgm_bytes_total{domain=\"cuda\",function=\"cudaMemcpyAsync\"}"), "8192");
  EXPECT_EQ(json::parse(get(port_, "/api/v1/nccl").body)["collectives"].size(), 0u);
  EXPECT_EQ(json::parse(get(port_, "/api/v1/gpus").body)["gpus"].size(), 2u);
  EXPECT_EQ(get(port_, "/api/v1/nothing").status, 404);
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0) << serve->err();
  EXPECT_NE(serve->err().find("eacgm: stopped"), std::string::npos) << serve->err();
}

TEST_F(Serve, StreamDeliversSummariesAndAStalledClientCostsNoMemory) {
  auto serve = start_serve();
  const int fd = server::testing::connect_to(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(server::testing::send_all(fd, "GET /api/v1/stream HTTP/1.1\r\nHost: x\r\n\r\n"));
  // A second client that never reads.
  const int stalled = server::testing::connect_to(port_, 4096);
  ASSERT_TRUE(server::testing::send_all(stalled, "GET /api/v1/stream HTTP/1.1\r\nHost: x\r\n\r\n"));
  Subprocess program({bin("cuda_calls"), "--repeat", "200"});
  EXPECT_EQ(program.wait(), 7);
  const std::string got = server::testing::read_until(
      fd, [](const std::string& s) { return s.find("\"function\":\"cudaMalloc\"") != std::string::npos; },
      15s);
  ::close(fd);
  EXPECT_NE(got.find("event: summary"), std::string::npos) << got;
  EXPECT_NE(got.find("\"function\":\"cudaMalloc\""), std::string::npos) << got;
  // The stalled client's queue is bounded: the server's memory does not grow with it.
  EXPECT_NE(metric("eacgm_sse_clients"), "");
  ::close(stalled);
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0) << serve->err();
}

TEST_F(Serve, SighupAppliesAGoodConfigAndKeepsTheOldOneOnABadOne) {
  const std::string path = config("catalogs = [\"cuda\"]\n");
  auto serve = start_serve({"--config", path});
  std::ofstream(path) << "[trace]\nringbuf_mib = 3\n";  // not a power of two
  serve->signal(SIGHUP);
  ASSERT_TRUE(serve->wait_for("reload failed, keeping the running configuration", true)) << serve->err();
  EXPECT_EQ(get(port_, "/healthz").status, 200);
  std::ofstream(path) << "catalogs = [\"cuda_driver\"]\n";
  serve->signal(SIGHUP);
  ASSERT_TRUE(serve->wait_for("configuration reloaded", true)) << serve->err();
  // The new probe set: the driver catalog only.
  EXPECT_TRUE(eventually([&] { return get(port_, "/readyz").status == 200; }));
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0) << serve->err();
  const std::string err = serve->err();
  const auto second = err.find("tracing all processes", err.find("configuration reloaded"));
  ASSERT_NE(second, std::string::npos) << err;
  EXPECT_EQ(err.find("libcudart", err.find("configuration reloaded")), std::string::npos)
      << "the runtime catalog is gone after the reload:\n"
      << err;
}

TEST_F(Serve, RefusesNonLoopbackWithoutTokenAndLooseTokenFiles) {
  Subprocess open_to_all(
      {bin("eacgm"), "serve", "--listen", "0.0.0.0:" + std::to_string(port_), "--store", "off"});
  EXPECT_EQ(open_to_all.wait(), 2);
  const std::string refused = open_to_all.err();
  EXPECT_NE(refused.find("token"), std::string::npos) << refused;
  EXPECT_EQ(std::count(refused.begin(), refused.end(), '\n'), 1) << refused;
  const std::string token = dir_ + "/token";
  std::ofstream(token) << "secret\n";
  chmod(token.c_str(), 0644);
  Subprocess loose({bin("eacgm"), "serve", "--listen", "127.0.0.1:" + std::to_string(port_), "--token-file",
                    token, "--store", "off"});
  EXPECT_EQ(loose.wait(), 2);
  EXPECT_NE(loose.err().find("chmod 600"), std::string::npos) << loose.err();
  chmod(token.c_str(), 0600);
  auto serve = start_serve({"--token-file", token});
  EXPECT_EQ(get(port_, "/metrics").status, 401);
  EXPECT_EQ(get(port_, "/metrics", "Authorization: Bearer wrong\r\n").status, 401);
  EXPECT_EQ(get(port_, "/metrics", "Authorization: Bearer secret\r\n").status, 200);
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0);
}

// The memory ledger through the server: the allocated-bytes gauge while the program
// (on the tests' FAKE libcuda.so.1) holds its memory, its leaks on /api/v1/memory
// once it has exited.
TEST_F(Serve, MemoryLedgerOnMetricsAndApi) {
  auto serve = start_serve({"--probes", "cuda_driver"});
  Subprocess program({bin("memory_leaks"), bin("fake_libcuda/libcuda.so.1"), "--wait-file", dir_ + "/go",
                      "--hold-file", dir_ + "/hold"});
  ASSERT_TRUE(program.wait_for("ready"));
  const std::string pid = std::to_string(program.pid());
  ASSERT_TRUE(serve->wait_for("fake_libcuda/libcuda.so.1", true)) << serve->err();
  std::ofstream(dir_ + "/go") << "go\n";
  ASSERT_TRUE(program.wait_for("holding"));
  const std::string series =
      "eacgm_process_gpu_allocated_bytes{pid=\"" + pid + "\",comm=\"memory_leaks\",cuda_device=\"0\"}";
  EXPECT_TRUE(eventually([&] { return metric(series) == "6291456"; })) << get(port_, "/metrics").body;
  EXPECT_EQ(metric("eacgm_process_gpu_allocated_peak_bytes{pid=\"" + pid +
                   "\",comm=\"memory_leaks\",cuda_device=\"0\"}"),
            "12582912");
  std::ofstream(dir_ + "/hold") << "go\n";
  EXPECT_EQ(program.wait(), 0) << program.err();
  json row;
  EXPECT_TRUE(eventually([&] {
    auto doc = json::parse(get(port_, "/api/v1/memory").body);
    for (const auto& p : doc["processes"]) {
      if (p["pid"].get<int>() == program.pid() && p["exited"].get<bool>()) row = p;
    }
    return !row.is_null();
  })) << get(port_, "/api/v1/memory").body;
  EXPECT_EQ(row["leaks"]["count"], 3);
  EXPECT_EQ(row["leaks"]["bytes"], 6291456);
  EXPECT_EQ(row["double_frees"], 1);
  EXPECT_EQ(metric(series), "") << "an exited process has no gauge";
  // Its leaks in the agent's totals (no other traced process leaked meanwhile).
  EXPECT_EQ(metric("eacgm_memory_leaks_total"), "3");
  EXPECT_EQ(metric("eacgm_memory_leaked_bytes_total"), "6291456");
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0) << serve->err();
}

// Host waits on the whole machine: a process is watched from its first traced call, and
// /metrics has its synchronizing calls and its futex and poll waits per kind.
TEST_F(Serve, HostWaitsOfAProcessFromItsFirstTracedCall) {
  // Off by default in serve (the tracepoints cost every system call of the machine).
  auto serve = start_serve({"--probes", "cuda_driver", "--config", config("[trace]\nhost_waits = true\n")},
                           "always-on");
  Subprocess program({bin("host_waits"), "--cuda", bin("fake_libcuda/libcuda.so.1"), "--cuda-first",
                      "--wait-file", dir_ + "/go"});
  ASSERT_TRUE(program.wait_for("ready"));
  ASSERT_TRUE(serve->wait_for("fake_libcuda/libcuda.so.1", true)) << serve->err();
  std::ofstream(dir_ + "/go") << "go\n";
  ASSERT_EQ(program.wait(), 0) << program.err();
  const std::string labels = "{pid=\"" + std::to_string(program.pid()) + "\",comm=\"host_waits\",kind=\"";
  EXPECT_TRUE(eventually([&] { return metric("eacgm_host_waits_total" + labels + "input_wait\"}") == "1"; }))
      << get(port_, "/metrics").body;
  EXPECT_EQ(metric("eacgm_host_waits_total" + labels + "stream_sync\"}"), "1");
  EXPECT_EQ(metric("eacgm_host_waits_total" + labels + "device_sync\"}"), "1");
  EXPECT_EQ(metric("eacgm_host_waits_total" + labels + "blocking_copy\"}"), "1");
  const std::string futex = metric("eacgm_host_wait_seconds_total" + labels + "futex\"}");
  ASSERT_NE(futex, "") << get(port_, "/metrics").body;
  EXPECT_GE(std::stod(futex), 0.24);
  EXPECT_LE(std::stod(futex), 1.0);
  const std::string input = metric("eacgm_host_wait_seconds_total" + labels + "input_wait\"}");
  EXPECT_GE(std::stod(input), 0.16);
  EXPECT_LE(std::stod(input), 0.9);
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0) << serve->err();
}

// The routes over the analysis's history: a call stream filtered by pid delivers the
// program's calls, /api/v1/series has its calls and the GPUs' GPM activity,
// /api/v1/processes its first and last seen times and, once it has exited, exited=true;
// bad query values are refused.
TEST_F(Serve, CallStreamSeriesAndProcessLifetimes) {
  auto serve = start_serve();
  EXPECT_EQ(get(port_, "/api/v1/series?window=abc").status, 400);
  EXPECT_EQ(get(port_, "/api/v1/series?window=3601").status, 400);
  EXPECT_EQ(get(port_, "/api/v1/stream?calls=2").status, 400);
  EXPECT_EQ(get(port_, "/api/v1/stream?pid=1").status, 400) << "pid only with calls=1";
  EXPECT_EQ(get(port_, "/api/v1/anomalies").status, 200);
  Subprocess program({bin("cuda_calls"), "--wait-file", dir_ + "/go"});
  ASSERT_TRUE(program.wait_for("ready"));
  const std::string pid = std::to_string(program.pid());
  const int fd = server::testing::connect_to(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(server::testing::send_all(
      fd, "GET /api/v1/stream?calls=1&pid=" + pid + " HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::this_thread::sleep_for(1s);  // the subscription is in before the calls
  std::ofstream(dir_ + "/go") << "go\n";
  const std::string got = server::testing::read_until(
      fd, [&](const std::string& s) { return s.find("\"pid\":" + pid + ",") != std::string::npos; }, 15s);
  ::close(fd);
  EXPECT_NE(got.find("event: call"), std::string::npos) << got;
  EXPECT_NE(got.find("\"pid\":" + pid + ","), std::string::npos) << got;
  EXPECT_NE(got.find("\"comm\":\"cuda_calls\""), std::string::npos) << got;
  EXPECT_EQ(program.wait(), 7);
  json series;
  ASSERT_TRUE(eventually([&] {
    series = json::parse(get(port_, "/api/v1/series?window=120").body);
    std::uint64_t calls = 0;
    for (const auto& p : series["points"]) calls += p["calls"].get<std::uint64_t>();
    return calls >= 12;
  })) << series.dump();
  EXPECT_EQ(series["interval_s"], 1);
  bool cuda_domain = false;
  for (const auto& p : series["points"]) cuda_domain |= p["domains"].contains("cuda");
  EXPECT_TRUE(cuda_domain) << series.dump();
  // The fake's GPM beside its utilization, per GPU of a second (GPU 0: SM 80%, tensor
  // 60%; GPU 1: 75%, 55%; DRAM 25% on both).
  json gpus;
  ASSERT_TRUE(eventually([&] {
    series = json::parse(get(port_, "/api/v1/series?window=120").body);
    for (const auto& p : series["points"]) {
      if (p["gpus"].size() == 2 && !p["gpus"][0]["sm_active"].is_null() &&
          !p["gpus"][1]["sm_active"].is_null())
        gpus = p["gpus"];
    }
    return !gpus.is_null();
  })) << series.dump();
  for (const auto& g : gpus) {
    const double i = g["gpu"].get<double>();
    EXPECT_EQ(g["util"], 45.0 + 10 * i) << g;
    EXPECT_DOUBLE_EQ(g["sm_active"].get<double>(), 0.80 - 0.05 * i) << g;
    EXPECT_DOUBLE_EQ(g["tensor_active"].get<double>(), 0.60 - 0.05 * i) << g;
    EXPECT_DOUBLE_EQ(g["dram_active"].get<double>(), 0.25) << g;
  }
  json row;
  ASSERT_TRUE(eventually([&] {
    auto doc = json::parse(get(port_, "/api/v1/processes").body);
    for (const auto& p : doc["processes"]) {
      if (p["pid"].get<int>() == program.pid() && p["exited"].get<bool>()) row = p;
    }
    return !row.is_null();
  })) << get(port_, "/api/v1/processes").body;
  ASSERT_TRUE(row["first_seen_ns"].is_number()) << row.dump();
  EXPECT_GT(row["first_seen_ns"].get<std::uint64_t>(), 0u);
  EXPECT_GE(row["last_seen_ns"].get<std::uint64_t>(), row["first_seen_ns"].get<std::uint64_t>());
  EXPECT_TRUE(row.contains("container")) << row.dump();
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0) << serve->err();
}

// A Python script that spins in `hot` (about 3 parts in 4) and `cold` until told to stop.
// Line numbers matter: `hot` is on line 3.
constexpr const char* kHotScript = R"(import os, sys

def hot(n):
    s = 0
    for i in range(n):
        s += i * i
    return s

def cold(n):
    s = 0
    for i in range(n):
        s += i ^ 3
    return s

print("ready", os.getpid(), flush=True)
while not os.path.exists(sys.argv[1]):
    hot(30000)
    cold(10000)
)";

// The daemon samples Python stacks ([python] sample_hz), ranks the hot function first on
// /api/v1/python, serves its folded stacks, and forgets the process once its samples are
// older than the window.
TEST_F(Serve, PythonHotSpotsOfTheLastWindow) {
  const std::string python = "/usr/bin/python3";
  if (!std::filesystem::exists(python)) GTEST_SKIP() << python << " is not installed";
  auto serve = start_serve({"--config", config("[python]\nsample_hz = 499\nwindow_s = 10\n")});
  const std::string script = dir_ + "/hot_cold.py", stop = dir_ + "/stop";
  std::ofstream(script) << kHotScript;
  Subprocess py({python, script, stop}, dir_);
  ASSERT_TRUE(py.wait_for("ready", false)) << py.err();
  const std::string pid = std::to_string(py.pid());
  // Enough samples for the shares to mean something (at 499 Hz, about a second of CPU).
  json proc;
  ASSERT_TRUE(eventually([&] {
    const auto r = get(port_, "/api/v1/python?pid=" + pid);
    if (r.status != 200) return false;
    const json doc = json::parse(r.body);
    if (doc["processes"].empty()) return false;
    proc = doc["processes"][0];
    return proc["python_samples"].get<int>() >= 400;
  })) << get(port_, "/api/v1/python").body
      << serve->err();
  const json doc = json::parse(get(port_, "/api/v1/python").body);
  EXPECT_EQ(doc["sample_hz"], 499);
  EXPECT_EQ(doc["window_s"], 10);
  EXPECT_EQ(proc["pid"].get<int>(), py.pid());
  const json& f = proc["functions"];
  ASSERT_GE(f.size(), 2u) << proc.dump(2);
  EXPECT_EQ(f[0]["function"], "hot") << proc.dump(2);
  EXPECT_EQ(f[0]["file"], script);
  EXPECT_EQ(f[0]["line"], 3);
  EXPECT_GT(f[0]["self_share"].get<double>(), 0.5) << proc.dump(2);
  EXPECT_EQ(f[1]["function"], "cold") << proc.dump(2);

  // Folded stacks of that process only: the module, then hot.
  const auto folded = get(port_, "/api/v1/python/folded?pid=" + pid);
  EXPECT_EQ(folded.status, 200);
  const std::regex line("python3[.0-9]* \\(" + pid + "\\);<module> \\(" + script + ":1\\);hot \\(" + script +
                        ":3\\) [0-9]+\\n");
  EXPECT_TRUE(std::regex_search(folded.body, line)) << folded.body;
  EXPECT_EQ(folded.body.find("(" + std::to_string(getpid()) + ");"), std::string::npos);
  EXPECT_EQ(get(port_, "/api/v1/python?pid=x").status, 400);
  EXPECT_EQ(get(port_, "/api/v1/python/folded?pid=0").status, 400);
  EXPECT_EQ(metric("eacgm_python_profile_window_seconds"), "10");
  EXPECT_NE(metric("eacgm_python_stack_samples_total"), "");

  // Stopped, the process leaves the profile once its last slice is a window old.
  std::ofstream(stop) << "stop";
  ASSERT_EQ(py.wait(), 0) << py.err();
  EXPECT_TRUE(eventually(
      [&] { return json::parse(get(port_, "/api/v1/python?pid=" + pid).body)["processes"].empty(); }, 30s))
      << get(port_, "/api/v1/python?pid=" + pid).body;
}

// [python] sample_hz = 0: no sampler, an empty profile, no profile metrics.
TEST_F(Serve, PythonSamplingOffWithZeroRate) {
  auto serve = start_serve({"--config", config("[python]\nsample_hz = 0\n")});
  const auto r = get(port_, "/api/v1/python");
  ASSERT_EQ(r.status, 200);
  const json doc = json::parse(r.body);
  EXPECT_EQ(doc["sample_hz"], 0);
  EXPECT_TRUE(doc["processes"].empty());
  EXPECT_EQ(get(port_, "/api/v1/python/folded").body, "");
  EXPECT_EQ(metric("eacgm_python_profile_samples"), "");
  EXPECT_EQ(metric("eacgm_python_stack_samples_total"), "");
}

}  // namespace
}  // namespace eacgm::test
