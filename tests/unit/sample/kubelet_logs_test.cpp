// Pod and container names from the kubelet's log directory names, and a directory tree
// laid out as the kubelet lays it.
#include "sample/kubelet_logs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

namespace eacgm::sample {
namespace {

const std::string kId = "3f1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809";
const std::string kUid = "0b3c1e2a-5d4f-4c1b-9a8e-1f2e3d4c5b6a";

TEST(KubeletLogs, PodDirectoryNames) {
  auto p = parse_pod_log_dir("ml-team_trainer-0_" + kUid);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->first, kUid);
  EXPECT_EQ(p->second, (PodRef{"ml-team", "trainer-0"}));
  // A static pod's hash UID, and a dotted pod name.
  auto s = parse_pod_log_dir("kube-system_etcd-node.example_6d3e2c1b0a9f8e7d6c5b4a3f2e1d0c9b");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->second.pod, "etcd-node.example");
  for (const std::string& bad :
       std::vector<std::string>{"", "a_b", "a_b_c_" + kUid, "ns_pod_" + kUid.substr(1), "NS_pod_" + kUid,
                                "ns__" + kUid, "ns_pod_", "ns_pod_" + kUid + "x"}) {
    EXPECT_FALSE(parse_pod_log_dir(bad).has_value()) << bad;
  }
}

TEST(KubeletLogs, ContainerLinkNames) {
  auto c = parse_container_log_name("trainer-0_ml-team_pytorch-" + kId + ".log");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->first, kId);
  EXPECT_EQ(c->second, (ContainerRef{"ml-team", "trainer-0", "pytorch"}));
  for (const std::string& bad : std::vector<std::string>{
           "trainer-0_ml-team_pytorch-" + kId, "trainer-0_ml-team_pytorch_" + kId + ".log",
           "trainer-0_pytorch-" + kId + ".log", "trainer-0_ml-team_pytorch-" + kId.substr(1) + ".log",
           std::string("x.log")}) {
    EXPECT_FALSE(parse_container_log_name(bad).has_value()) << bad;
  }
}

TEST(KubeletLogs, ReadsTheKubeletsLayout) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(::testing::TempDir()) / "kubelet_logs_test";
  fs::remove_all(root);
  fs::create_directories(root / "pods" / ("ml_trainer-0_" + kUid) / "pytorch");
  fs::create_directories(root / "pods" / ("ml_trainer-0_" + kUid) / "sidecar");
  fs::create_directories(root / "pods" / "not-a-pod");
  fs::create_directories(root / "containers");
  std::ofstream(root / "containers" / ("trainer-0_ml_pytorch-" + kId + ".log")) << "";
  std::ofstream(root / "containers" / "junk.log") << "";
  const KubeletLogNames n = read_kubelet_log_names(root.string());
  ASSERT_EQ(n.pods_by_uid.size(), 1U);
  EXPECT_EQ(n.pods_by_uid.at(kUid), (PodRef{"ml", "trainer-0"}));
  EXPECT_EQ(n.containers_of_uid.at(kUid), (std::vector<std::string>{"pytorch", "sidecar"}));
  ASSERT_EQ(n.containers_by_id.size(), 1U);
  EXPECT_EQ(n.containers_by_id.at(kId).container, "pytorch");
  // A node without the directories: empty tables.
  EXPECT_TRUE(read_kubelet_log_names((root / "absent").string()).pods_by_uid.empty());
  fs::remove_all(root);
}

}  // namespace
}  // namespace eacgm::sample
