// PodDirectory: names from the kubelet's logs and its pod-resources list (a function
// here, standing in for the gRPC client), GPU assignment, hostname fallback, refresh on
// an unknown pod, failures keeping the last list, and gone pods leaving no name.
#include "sample/pod_directory.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace eacgm::sample {
namespace {

namespace fs = std::filesystem;
const std::string kId = "3f1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809";
const std::string kUid = "0b3c1e2a-5d4f-4c1b-9a8e-1f2e3d4c5b6a";
const std::string kUid2 = "1b3c1e2a-5d4f-4c1b-9a8e-1f2e3d4c5b6a";

class PodDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test process: ctest runs this suite's tests side by side.
    root_ = fs::path(::testing::TempDir()) / fmt::format("pod_directory_test.{}", getpid());
    fs::remove_all(root_);
    fs::create_directories(root_ / "pods");
    fs::create_directories(root_ / "containers");
  }
  void TearDown() override { fs::remove_all(root_); }
  void add_pod(const std::string& ns, const std::string& pod, const std::string& uid,
               const std::vector<std::string>& containers) {
    for (const auto& c : containers)
      fs::create_directories(root_ / "pods" / (ns + "_" + pod + "_" + uid) / c);
  }
  void remove_pod(const std::string& ns, const std::string& pod, const std::string& uid) {
    fs::remove_all(root_ / "pods" / (ns + "_" + pod + "_" + uid));
  }
  PodDirectory make(PodResourcesList list) {
    PodDirectoryOptions o;
    o.log_root = root_.string();
    return PodDirectory(
        std::move(list), o, [this](std::string m) { notices_.push_back(std::move(m)); },
        [this] { return now_; });
  }
  fs::path root_;
  std::vector<std::string> notices_;
  PodDirectory::Clock::time_point now_{std::chrono::hours(1)};
};

Workload in_pod(const std::string& uid, const std::string& id = "") {
  Workload w;
  w.pod_uid = uid;
  w.container_id = id;
  return w;
}

TEST_F(PodDirectoryTest, NamesFromTheLogsAndGpusFromTheList) {
  add_pod("ml", "trainer-0", kUid, {"pytorch"});
  int lists = 0;
  auto dir = make([&]() -> Result<std::vector<PodContainerResources>> {
    ++lists;
    return std::vector<PodContainerResources>{
        {"ml", "trainer-0", "pytorch", {{"nvidia.com/gpu", "GPU-aaa"}, {"nvidia.com/gpu", "GPU-bbb::2"}}},
        {"ml", "trainer-0", "pytorch", {{"example.com/nic", "0"}}}};
  });
  Workload w = in_pod(kUid, kId);
  dir.name(w, "");
  EXPECT_EQ(w.namespace_, "ml");
  EXPECT_EQ(w.pod, "trainer-0");
  EXPECT_EQ(w.container, "pytorch");  // the only container in the pod's log directory
  EXPECT_EQ(dir.gpus_of(w), (std::vector<std::string>{"GPU-aaa", "GPU-bbb"}));
  EXPECT_EQ(w.gpus, dir.gpus_of(w));
  ASSERT_EQ(dir.holders_of_gpu("GPU-bbb", 1).size(), 1U);
  EXPECT_EQ(dir.holders_of_gpu("GPU-bbb", 1)[0].pod, "trainer-0");
  EXPECT_TRUE(dir.holders_of_gpu("GPU-ccc", 0).empty());  // "0" is a NIC, not a GPU
  EXPECT_EQ(lists, 1);
  EXPECT_TRUE(notices_.empty());
}

TEST_F(PodDirectoryTest, TheContainerLinkNamesOneOfSeveralContainers) {
  add_pod("ml", "trainer-0", kUid, {"pytorch", "sidecar"});
  std::ofstream(root_ / "containers" / ("trainer-0_ml_sidecar-" + kId + ".log")) << "";
  auto dir = make(nullptr);
  Workload w = in_pod(kUid, kId);
  dir.name(w, "");
  EXPECT_EQ(w.container, "sidecar");
  Workload other = in_pod(kUid, std::string(64, 'a'));
  dir.name(other, "");
  EXPECT_EQ(other.pod, "trainer-0");
  EXPECT_EQ(other.container, "");  // two containers, no link: not guessed
  // No socket: one notice, at the first process in a pod.
  ASSERT_EQ(notices_.size(), 1U);
  EXPECT_NE(notices_[0].find("no kubelet pod-resources socket"), std::string::npos);
}

TEST_F(PodDirectoryTest, HostnameNamesAPodTheLogsDoNotHave) {
  auto dir = make([]() -> Result<std::vector<PodContainerResources>> {
    return std::vector<PodContainerResources>{{"ml", "trainer-0", "pytorch", {}},
                                              {"web", "frontend", "nginx", {}}};
  });
  Workload w = in_pod(kUid);
  dir.name(w, "trainer-0");
  EXPECT_EQ(w.namespace_, "ml");
  EXPECT_EQ(w.pod, "trainer-0");
  EXPECT_EQ(w.container, "pytorch");  // the pod's only container
  Workload unknown = in_pod(kUid);
  dir.name(unknown, "somewhere-else");
  EXPECT_EQ(unknown.pod, "");
}

TEST_F(PodDirectoryTest, AHostnameInTwoNamespacesNamesNothing) {
  auto dir = make([]() -> Result<std::vector<PodContainerResources>> {
    return std::vector<PodContainerResources>{{"a", "worker", "c", {}}, {"b", "worker", "c", {}}};
  });
  Workload w = in_pod(kUid);
  dir.name(w, "worker");
  EXPECT_EQ(w.pod, "");
}

TEST_F(PodDirectoryTest, AnUnknownPodRefreshesAtMostEveryMinRefreshAndGonePodsLoseTheirNames) {
  int lists = 0;
  auto dir = make([&]() -> Result<std::vector<PodContainerResources>> {
    ++lists;
    return std::vector<PodContainerResources>{};
  });
  Workload w = in_pod(kUid);
  dir.name(w, "");
  EXPECT_EQ(lists, 1);
  EXPECT_EQ(w.pod, "");
  add_pod("ml", "late", kUid, {"c"});
  dir.name(w, "");  // unknown, but asked again too soon
  EXPECT_EQ(lists, 1);
  EXPECT_EQ(w.pod, "");
  now_ += std::chrono::seconds(3);
  dir.name(w, "");
  EXPECT_EQ(lists, 2);
  EXPECT_EQ(w.pod, "late");
  // Known pods do not refresh before the period...
  Workload again = in_pod(kUid);
  dir.name(again, "");
  EXPECT_EQ(lists, 2);
  // ...and after it the pod that went is forgotten.
  remove_pod("ml", "late", kUid);
  now_ += std::chrono::seconds(31);
  Workload gone = in_pod(kUid);
  dir.name(gone, "");
  EXPECT_EQ(lists, 3);
  EXPECT_EQ(gone.pod, "");
}

TEST_F(PodDirectoryTest, AFailingListKeepsTheLastOneAndSaysSoOnce) {
  bool fail = false;
  auto dir = make([&]() -> Result<std::vector<PodContainerResources>> {
    if (fail) return make_error("connection refused");
    return std::vector<PodContainerResources>{{"ml", "p", "c", {{"nvidia.com/gpu", "GPU-aaa"}}}};
  });
  dir.refresh();
  fail = true;
  dir.refresh();
  dir.refresh();
  EXPECT_EQ(dir.holders_of_gpu("GPU-aaa", 0).size(), 1U);
  ASSERT_EQ(notices_.size(), 1U);
  EXPECT_NE(notices_[0].find("connection refused"), std::string::npos);
  EXPECT_EQ(dir.stats().list_failures, 2U);
  fail = false;
  dir.refresh();
  fail = true;
  dir.refresh();
  EXPECT_EQ(notices_.size(), 2U);  // failing again after it answered: said again
}

TEST(PodDirectory, ReplicaSuffixIsCut) {
  EXPECT_EQ(gpu_of_device_id("GPU-aaa::3"), "GPU-aaa");
  EXPECT_EQ(gpu_of_device_id("MIG-bbb"), "MIG-bbb");
  EXPECT_EQ(gpu_of_device_id("0"), "0");
}

}  // namespace
}  // namespace eacgm::sample

namespace eacgm::sample {
namespace {

// 100 pods come and go, a few at a time: each is named while it is there, none is named
// after it went, and the directory's tables hold only the pods there now.
TEST_F(PodDirectoryTest, PodChurnLeavesNoStaleNamesAndBoundedTables) {
  std::vector<PodContainerResources> listed;
  auto dir = make([&]() -> Result<std::vector<PodContainerResources>> { return listed; });
  auto uid_of = [](int i) { return fmt::format("{:08x}-0000-4000-8000-{:012x}", i, i); };
  for (int i = 0; i < 100; ++i) {
    const std::string pod = fmt::format("job-{}", i);
    add_pod("ml", pod, uid_of(i), {"main"});
    listed = {{"ml", pod, "main", {{"nvidia.com/gpu", fmt::format("GPU-{}", i % 8)}}}};
    now_ += std::chrono::seconds(31);
    Workload w = in_pod(uid_of(i));
    dir.name(w, "");
    EXPECT_EQ(w.pod, pod);
    EXPECT_EQ(w.gpus, (std::vector<std::string>{fmt::format("GPU-{}", i % 8)}));
    remove_pod("ml", pod, uid_of(i));
    listed.clear();
  }
  now_ += std::chrono::seconds(31);
  dir.refresh();
  for (int i = 0; i < 100; ++i) {
    Workload gone = in_pod(uid_of(i));
    dir.name(gone, fmt::format("job-{}", i));
    EXPECT_EQ(gone.pod, "") << i;
  }
  EXPECT_EQ(dir.stats().pods, 0U);
  EXPECT_EQ(dir.stats().logged_pods, 0U);
  EXPECT_TRUE(dir.holders_of_gpu("GPU-3", 3).empty());
}

}  // namespace
}  // namespace eacgm::sample
