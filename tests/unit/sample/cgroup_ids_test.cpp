// Pod UIDs, QoS classes, container ids and runtimes from /proc/<pid>/cgroup, over the
// path shapes the kubelet and the runtimes write: cgroup v1 and v2, the systemd and
// cgroupfs drivers, containerd, CRI-O and Docker (dockershim / cri-dockerd), kind's
// nested kubelet, static pods, and Docker and Podman outside Kubernetes.
#include "sample/cgroup_ids.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace eacgm::sample {
namespace {

const std::string kId = "3f1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809";
const std::string kUid = "0b3c1e2a-5d4f-4c1b-9a8e-1f2e3d4c5b6a";
const std::string kUidUnderscores = "0b3c1e2a_5d4f_4c1b_9a8e_1f2e3d4c5b6a";
const std::string kStaticUid = "6d3e2c1b0a9f8e7d6c5b4a3f2e1d0c9b";

struct Shape {
  std::string name;
  std::string cgroup;  // the file's content
  CgroupIds want;
};

std::vector<Shape> shapes() {
  return {
      {"v2 systemd containerd burstable",
       "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidUnderscores +
           ".slice/cri-containerd-" + kId + ".scope\n",
       {kId, kUid, "burstable", "containerd"}},
      {"v2 systemd containerd guaranteed",
       "0::/kubepods.slice/kubepods-pod" + kUidUnderscores + ".slice/cri-containerd-" + kId + ".scope\n",
       {kId, kUid, "guaranteed", "containerd"}},
      {"v2 systemd crio besteffort",
       "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + kUidUnderscores +
           ".slice/crio-" + kId + ".scope\n",
       {kId, kUid, "besteffort", "crio"}},
      {"v2 systemd crio conmon: the pod, no container",
       "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + kUidUnderscores +
           ".slice/crio-conmon-" + kId + ".scope\n",
       {"", kUid, "besteffort", "crio"}},
      {"v2 systemd cri-dockerd",
       "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidUnderscores +
           ".slice/docker-" + kId + ".scope\n",
       {kId, kUid, "burstable", "docker"}},
      {"v2 cgroupfs containerd",
       "0::/kubepods/burstable/pod" + kUid + "/" + kId + "\n",
       {kId, kUid, "burstable", ""}},
      {"v2 cgroupfs guaranteed", "0::/kubepods/pod" + kUid + "/" + kId + "\n", {kId, kUid, "guaranteed", ""}},
      {"v1 cgroupfs, every hierarchy",
       "12:pids:/kubepods/besteffort/pod" + kUid + "/" + kId + "\n11:memory:/kubepods/besteffort/pod" + kUid +
           "/" + kId + "\n1:name=systemd:/kubepods/besteffort/pod" + kUid + "/" + kId + "\n0::/\n",
       {kId, kUid, "besteffort", ""}},
      {"v1 systemd containerd, some hierarchies at the root",
       "12:cpuset:/\n11:memory:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
           kUidUnderscores + ".slice/cri-containerd-" + kId + ".scope\n10:cpu,cpuacct:/\n",
       {kId, kUid, "burstable", "containerd"}},
      {"v1 cgroupfs docker under kubernetes (dockershim)",
       "4:devices:/kubepods/burstable/pod" + kUid + "/" + kId + "\n",
       {kId, kUid, "burstable", ""}},
      {"kind: a kubelet nested in a container",
       "0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
       "kubelet-kubepods-besteffort-pod" +
           kUidUnderscores + ".slice/cri-containerd-" + kId + ".scope\n",
       {kId, kUid, "besteffort", "containerd"}},
      {"static pod: the UID is a config hash",
       "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kStaticUid +
           ".slice/cri-containerd-" + kId + ".scope\n",
       {kId, kStaticUid, "burstable", "containerd"}},
      {"the pod's sandbox-less cgroup (a process in the pod slice itself)",
       "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidUnderscores + ".slice\n",
       {"", kUid, "burstable", ""}},
      {"docker v1",
       "12:memory:/docker/" + kId + "\n11:cpu,cpuacct:/docker/" + kId + "\n",
       {kId, "", "", "docker"}},
      {"docker v2 systemd", "0::/system.slice/docker-" + kId + ".scope\n", {kId, "", "", "docker"}},
      {"podman", "0::/machine.slice/libpod-" + kId + ".scope/container\n", {kId, "", "", "podman"}},
      {"host session", "0::/user.slice/user-1000.slice/session-2.scope\n", {}},
      {"host service", "0::/system.slice/eacgm.service\n", {}},
      {"cgroup namespace: the container sees its root", "0::/\n", {}},
      {"empty", "", {}},
      {"garbage", "garbage\n::\n:\n", {}},
      {"a bad UID is no pod", "0::/kubepods/burstable/podnot-a-uid/" + kId + "\n", {kId, "", "", ""}},
      {"63 hex digits are no container id", "0::/docker/" + kId.substr(1) + "\n", {}},
  };
}

TEST(CgroupIds, EveryPathShape) {
  for (const Shape& s : shapes()) {
    SCOPED_TRACE(s.name);
    EXPECT_EQ(parse_cgroup_ids(s.cgroup), s.want)
        << "got container=" << parse_cgroup_ids(s.cgroup).container_id
        << " pod=" << parse_cgroup_ids(s.cgroup).pod_uid << " qos=" << parse_cgroup_ids(s.cgroup).qos
        << " runtime=" << parse_cgroup_ids(s.cgroup).runtime;
  }
}

TEST(CgroupIds, ALineWithThePodWinsOverOneWithout) {
  // A v1 hierarchy left at a runtime-only path must not hide the pod of another.
  const std::string text =
      "5:devices:/docker/" + kId + "\n4:memory:/kubepods/burstable/pod" + kUid + "/" + kId + "\n";
  EXPECT_EQ(parse_cgroup_ids(text).pod_uid, kUid);
  EXPECT_EQ(parse_cgroup_ids(text).container_id, kId);
}

TEST(CgroupIds, ReadsThisProcessAndNoneForAGonePid) {
  (void)read_cgroup_ids(static_cast<std::uint32_t>(::getpid()));
  EXPECT_EQ(read_cgroup_ids(0x7ffffff0u), CgroupIds{});
}

// A read that fails after the open (a process that exits while its cgroup file is read
// gives ESRCH; a directory gives EISDIR, the same path) is no ids, not an exception.
TEST(CgroupIds, AFailedReadIsNoIds) {
  char root[] = "/tmp/eacgm-cgroup-XXXXXX";
  ASSERT_NE(::mkdtemp(root), nullptr);
  const std::string dir = std::string(root) + "/42/cgroup";
  ASSERT_EQ(::mkdir((std::string(root) + "/42").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  EXPECT_EQ(read_cgroup_ids(42, root), CgroupIds{});
  ::rmdir(dir.c_str());
  ::rmdir((std::string(root) + "/42").c_str());
  ::rmdir(root);
}

}  // namespace
}  // namespace eacgm::sample
