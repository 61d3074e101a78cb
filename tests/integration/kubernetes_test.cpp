// Pods and jobs end to end: `eacgm serve` with a fake kubelet (tests/integration/
// fake_kubelet.h: the real pod-resources gRPC API on a Unix socket, and the kubelet's log
// directories) and traced processes placed in real Kubernetes-shaped cgroups (cgroupfs
// driver paths, kubepods/<qos>/pod<uid>/<container id>): the API, /metrics (per-process
// series by pod, DCGM_FI_* labelled with the pod holding the GPU) and the store carry
// each process's pod, namespace, container, UID, job and GPUs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fake_kubelet.h"
#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::string kUid0 = "0b3c1e2a-5d4f-4c1b-9a8e-1f2e3d4c5b6a";
const std::string kUid1 = "7c2d9e4f-1a2b-4c3d-8e9f-0a1b2c3d4e5f";
const std::string kId0 = std::string(60, 'a') + "0001";
const std::string kId1 = std::string(60, 'b') + "0002";
// The fake NVML's GPUs (tests/fakes/fake_nvml).
const std::string kGpu0 = "GPU-fa4e0000-0000-0000-0000-000000000000";
const std::string kGpu1 = "GPU-fa4e0000-0000-0000-0000-000000000001";

// A cgroup hierarchy this test may make groups in: cgroup v1's pids controller or the
// v2 tree (hybrid or unified); "" when none is writable.
std::string writable_cgroup_root() {
  for (const char* root : {"/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
    const std::string probe = std::string(root) + "/eacgm-cgroup-probe";
    if (::mkdir(probe.c_str(), 0755) == 0 || errno == EEXIST) {
      const bool ok = fs::exists(probe + "/cgroup.procs");
      ::rmdir(probe.c_str());
      if (ok) return root;
    }
  }
  return "";
}

class Kubernetes : public ServeFixture {
 protected:
  void SetUp() override {
    ServeFixture::SetUp();
    if (IsSkipped()) return;
    cgroups_ = writable_cgroup_root();
    ASSERT_FALSE(cgroups_.empty()) << "no writable cgroup hierarchy to place the test's processes in";
  }
  void TearDown() override {
    // Leaf first; the processes have exited by now.
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) ::rmdir(it->c_str());
    ServeFixture::TearDown();
  }
  // kubepods/<qos>/pod<uid>/<id>, made (and removed at the end).
  std::string cgroup(const std::string& qos, const std::string& uid, const std::string& id) {
    std::string path = cgroups_;
    for (const std::string& part : {std::string("kubepods"), qos, "pod" + uid, id}) {
      path += "/" + part;
      if (::mkdir(path.c_str(), 0755) == 0) made_.push_back(path);
    }
    return path;
  }
  // cuda_calls in `group`, with `env`: it moves itself there before exec, waits for
  // `go` to call, then for `done` to exit.
  std::unique_ptr<Subprocess> start_in(const std::string& group, const std::vector<std::string>& env,
                                       const std::string& go, const std::string& done) {
    std::string script = "echo $$ > " + group + "/cgroup.procs && exec env";
    for (const auto& e : env) script += " " + e;
    script += " " + bin("cuda_calls") + " --wait-file " + go + " --exit-file " + done;
    return std::make_unique<Subprocess>(std::vector<std::string>{"/bin/sh", "-c", script}, dir_);
  }
  std::string cgroups_;
  std::vector<std::string> made_;
};

json process_of(std::uint16_t port, const std::string& comm_pid) {
  const json doc = json::parse(server::testing::get(port, "/api/v1/processes").body, nullptr, false);
  if (!doc.is_object()) return nullptr;
  for (const auto& p : doc["processes"]) {
    if (std::to_string(p["pid"].get<long>()) == comm_pid) return p;
  }
  return nullptr;
}

TEST_F(Kubernetes, ApiMetricsAndStoreCarryEachProcesssPodContainerJobAndGpus) {
  const std::string socket = dir_ + "/kubelet.sock";
  FakeKubelet kubelet(socket, dir_ + "/log");
  ASSERT_TRUE(kubelet.serving());
  // trainer-0 is in the kubelet's logs; trainer-1 is not (named by its HOSTNAME).
  kubelet.set_pods({
      {"ml", "trainer-0", kUid0, {{"pytorch", kId0, {kGpu0}}}, true},
      {"ml", "trainer-1", kUid1, {{"pytorch", kId1, {kGpu1 + "::1"}}}, false},
      {"web", "frontend", "11111111-2222-3333-4444-555555555555", {{"nginx", "", {}}}, true},
  });
  const std::string cfg = config("[kubernetes]\npod_resources_socket = \"" + socket + "\"\nlog_root = \"" +
                                 dir_ + "/log\"\nrefresh_s = 1\n");
  auto serve = start_serve({"--config", cfg});
  const std::string go = dir_ + "/go", done = dir_ + "/done";
  auto p0 = start_in(cgroup("burstable", kUid0, kId0), {"SLURM_JOB_ID=4711", "SLURM_STEP_ID=0", "RANK=0"}, go,
                     done);
  auto p1 = start_in(cgroup("besteffort", kUid1, kId1),
                     {"TORCHELASTIC_RUN_ID=run-7", "HOSTNAME=trainer-1", "RANK=1"}, go, done);
  ASSERT_TRUE(p0->wait_for("ready")) << p0->err();
  ASSERT_TRUE(p1->wait_for("ready")) << p1->err();
  const std::string pid0 = std::to_string(p0->pid()), pid1 = std::to_string(p1->pid());
  std::ofstream(go) << "";
  ASSERT_TRUE(p0->wait_for("calls done")) << p0->err();
  ASSERT_TRUE(p1->wait_for("calls done")) << p1->err();

  json a, b;
  ASSERT_TRUE(eventually([&] {
    a = process_of(port_, pid0);
    b = process_of(port_, pid1);
    return a.is_object() && b.is_object() && a["pod"].is_string() && b["pod"].is_string();
  })) << a.dump()
      << "\n"
      << b.dump() << "\n"
      << serve->err();
  EXPECT_EQ(a["pod"], "trainer-0");
  EXPECT_EQ(a["namespace"], "ml");
  EXPECT_EQ(a["container"], "pytorch");
  EXPECT_EQ(a["pod_uid"], kUid0);
  EXPECT_EQ(a["container_id"], kId0);
  EXPECT_EQ(a["job"], "4711");
  EXPECT_EQ(a["job_step"], "0");
  EXPECT_EQ(a["pod_gpus"], json::array({kGpu0}));
  EXPECT_EQ(b["pod"], "trainer-1");  // from HOSTNAME: not in the logs
  EXPECT_EQ(b["namespace"], "ml");
  EXPECT_EQ(b["container"], "pytorch");
  EXPECT_EQ(b["pod_uid"], kUid1);
  EXPECT_EQ(b["job"], "run-7");
  EXPECT_EQ(b["pod_gpus"], json::array({kGpu1}));  // the time-slicing replica's GPU

  // /metrics: the processes' series by pod, no pid label; the GPU families labelled with
  // the pod that holds each GPU.
  // The GPU families follow the sampling pass that first lists both processes: scraped
  // until one has (the shares below need it too).
  std::string body;
  auto line_with = [&](const std::string& family, const std::vector<std::string>& parts) -> std::string {
    std::size_t at = 0;
    while ((at = body.find("\n" + family + "{", at)) != std::string::npos) {
      const std::string line = body.substr(at + 1, body.find('\n', at + 1) - at - 1);
      at += 1;
      bool all = true;
      for (const auto& p : parts) all = all && line.find(p) != std::string::npos;
      if (all) return line;
    }
    return "";
  };
  ASSERT_TRUE(eventually([&] {
    body = server::testing::get(port_, "/metrics").body;
    return !line_with("eacgm_pod_gpu_share_ratio", {"gpu=\"0\"", "pod=\"trainer-0\""}).empty() &&
           !line_with("eacgm_pod_gpu_share_ratio", {"gpu=\"0\"", "pod=\"trainer-1\""}).empty() &&
           !line_with("eacgm_process_calls_total", {"pod=\"trainer-1\""}).empty();
  })) << body;
  const std::string calls0 = line_with("eacgm_process_calls_total",
                                       {"pod=\"trainer-0\"", "namespace=\"ml\"", "container=\"pytorch\"",
                                        "pod_uid=\"" + kUid0 + "\"", "job=\"4711\"", "rank=\"0\""});
  EXPECT_FALSE(calls0.empty()) << body.substr(0, 4000);
  EXPECT_EQ(calls0.find("pid="), std::string::npos) << calls0;
  EXPECT_FALSE(line_with("eacgm_process_calls_total", {"pod=\"trainer-1\"", "job=\"run-7\""}).empty());
  EXPECT_EQ(line_with("eacgm_process_calls_total", {"pid=\"" + pid0 + "\""}), "");
  EXPECT_FALSE(line_with("DCGM_FI_DEV_GPU_UTIL",
                         {"gpu=\"0\"", "pod=\"trainer-0\"", "namespace=\"ml\"", "container=\"pytorch\""})
                   .empty())
      << body.substr(0, 4000);
  EXPECT_FALSE(line_with("DCGM_FI_DEV_GPU_UTIL", {"gpu=\"1\"", "pod=\"trainer-1\""}).empty());
  EXPECT_GE(kubelet.lists(), 1);
  // GPU 0 runs both pods' processes (the fake NVML lists every cuda_calls there): its
  // utilisation divided between them, the shares summing to it.
  auto value_of = [](const std::string& line) {
    return line.empty() ? -1.0 : std::stod(line.substr(line.rfind(' ') + 1));
  };
  const double util = value_of(line_with("DCGM_FI_DEV_GPU_UTIL", {"gpu=\"0\""}));
  const double share0 = value_of(line_with("eacgm_pod_gpu_share_ratio", {"gpu=\"0\"", "pod=\"trainer-0\""}));
  const double share1 = value_of(line_with("eacgm_pod_gpu_share_ratio", {"gpu=\"0\"", "pod=\"trainer-1\""}));
  ASSERT_GT(util, 0) << body.substr(0, 3000);
  ASSERT_GE(share0, 0) << body;
  ASSERT_GE(share1, 0) << body;
  double all = 0;  // with the fake NVML's processes in no pod, which share it too
  for (std::size_t at = 0; (at = body.find("\neacgm_pod_gpu_share_ratio{gpu=\"0\"", at)) != std::string::npos;
       ++at) {
    all += value_of(body.substr(at + 1, body.find('\n', at + 1) - at - 1));
  }
  EXPECT_NEAR(all, util / 100.0, 1e-9);
  // The fake GPU 0's SM activity (GPM, 0.8) divided on the same basis, summing to it.
  const double sm = value_of(line_with("DCGM_FI_PROF_SM_ACTIVE", {"gpu=\"0\""}));
  EXPECT_DOUBLE_EQ(sm, 0.8) << body.substr(0, 3000);
  double sm_all = 0;
  for (std::size_t at = 0; (at = body.find("\neacgm_pod_sm_active_ratio{gpu=\"0\"", at)) != std::string::npos;
       ++at) {
    sm_all += value_of(body.substr(at + 1, body.find('\n', at + 1) - at - 1));
  }
  EXPECT_NEAR(sm_all, sm, 1e-9);
  EXPECT_NEAR(value_of(line_with("eacgm_pod_sm_active_ratio", {"gpu=\"0\"", "pod=\"trainer-0\""})),
              share0 * sm / (util / 100.0), 1e-9);

  // The store: SIGHUP writes an interval now; the history has the same workload.
  serve->signal(SIGHUP);
  json stored;
  ASSERT_TRUE(eventually([&] {
    stored =
        json::parse(server::testing::get(port_, "/api/v1/history/processes?since=1h&comm=cuda_calls").body,
                    nullptr, false);
    if (!stored.is_object() || stored["processes"].size() < 2) return false;
    for (const auto& p : stored["processes"]) {
      if (!p["pod"].is_string()) return false;
    }
    return true;
  })) << stored.dump();
  for (const auto& p : stored["processes"]) {
    const bool first = std::to_string(p["pid"].get<long>()) == pid0;
    EXPECT_EQ(p["pod"], first ? "trainer-0" : "trainer-1");
    EXPECT_EQ(p["namespace"], "ml");
    EXPECT_EQ(p["container"], "pytorch");
    EXPECT_EQ(p["pod_uid"], first ? kUid0 : kUid1);
    EXPECT_EQ(p["container_id"], first ? kId0 : kId1);
    EXPECT_EQ(p["job"], first ? "4711" : "run-7");
  }
  // The jobs of the window, each a row with its node, rank and pod.
  const json jobs =
      json::parse(server::testing::get(port_, "/api/v1/history/jobs?since=1h").body, nullptr, false);
  ASSERT_TRUE(jobs.is_object()) << jobs.dump();
  std::map<std::string, json> by_job;
  for (const auto& j : jobs["jobs"]) by_job[j["job"].get<std::string>()] = j;
  ASSERT_TRUE(by_job.contains("4711")) << jobs.dump();
  ASSERT_TRUE(by_job.contains("run-7")) << jobs.dump();
  EXPECT_EQ(by_job["4711"]["ranks"], json::array({0}));
  EXPECT_EQ(by_job["4711"]["pods"], json::array({"ml/trainer-0"}));
  EXPECT_EQ(by_job["run-7"]["ranks"], json::array({1}));
  EXPECT_EQ(by_job["run-7"]["nodes"].size(), 1U);

  std::ofstream(done) << "";
  p0->wait();
  p1->wait();
}

TEST_F(Kubernetes, WithoutTheSocketPodsKeepTheirUidsAndTheLogsNames) {
  // Only the logs: the kubelet's socket is absent.
  FakeKubelet logs_only(dir_ + "/unused.sock", dir_ + "/log");
  logs_only.set_pods({{"ml", "trainer-0", kUid0, {{"pytorch", kId0, {kGpu0}}}, true}});
  const std::string cfg = config("[kubernetes]\npod_resources_socket = \"" + dir_ +
                                 "/absent.sock\"\nlog_root = \"" + dir_ + "/log\"\n");
  auto serve = start_serve({"--config", cfg});
  const std::string go = dir_ + "/go", done = dir_ + "/done";
  auto p0 = start_in(cgroup("burstable", kUid0, kId0), {}, go, done);
  auto stray = start_in(cgroup("burstable", kUid1, kId1), {}, go, done);  // in no log, no list
  ASSERT_TRUE(p0->wait_for("ready")) << p0->err();
  ASSERT_TRUE(stray->wait_for("ready")) << stray->err();
  std::ofstream(go) << "";
  ASSERT_TRUE(p0->wait_for("calls done"));
  ASSERT_TRUE(stray->wait_for("calls done"));
  json a, s;
  ASSERT_TRUE(eventually([&] {
    a = process_of(port_, std::to_string(p0->pid()));
    s = process_of(port_, std::to_string(stray->pid()));
    return a.is_object() && s.is_object();
  })) << serve->err();
  EXPECT_EQ(a["pod"], "trainer-0");
  EXPECT_EQ(a["container"], "pytorch");
  EXPECT_EQ(a["pod_gpus"], json::array());  // which GPUs it was given is not known
  EXPECT_TRUE(s["pod"].is_null());
  EXPECT_EQ(s["pod_uid"], kUid1);
  EXPECT_EQ(s["container_id"], kId1);
  // One notice, naming what is missing.
  EXPECT_TRUE(
      eventually([&] { return serve->err().find("no kubelet pod-resources socket") != std::string::npos; },
                 std::chrono::seconds(5)))
      << serve->err();
  // The unnamed pod's process keeps its pid label on /metrics, with its UID.
  const std::string body = server::testing::get(port_, "/metrics").body;
  EXPECT_NE(body.find("pod_uid=\"" + kUid1 + "\""), std::string::npos);
  std::ofstream(done) << "";
  p0->wait();
  stray->wait();
}

}  // namespace
}  // namespace eacgm::test
