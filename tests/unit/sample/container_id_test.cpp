// Container ids from /proc/<pid>/cgroup lines (container_id_from_cgroup, which the process
// sampler uses; sample/cgroup_ids.h reads a process's file): Docker (cgroup v1 and v2
// with systemd), containerd under Kubernetes, CRI-O, Podman; none for a host process or
// a malformed id.
#include <gtest/gtest.h>
#include <unistd.h>

#include "sample/process_sampler.h"

namespace eacgm::sample {
namespace {

const std::string kId = "3f1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809";

TEST(ContainerId, DockerCgroupV1) {
  EXPECT_EQ(container_id_from_cgroup("12:memory:/docker/" + kId + "\n11:cpu,cpuacct:/docker/" + kId + "\n"),
            kId);
}

TEST(ContainerId, DockerSystemdCgroupV2) {
  EXPECT_EQ(container_id_from_cgroup("0::/system.slice/docker-" + kId + ".scope\n"), kId);
}

TEST(ContainerId, ContainerdUnderKubernetes) {
  EXPECT_EQ(container_id_from_cgroup("0::/kubepods.slice/kubepods-burstable.slice/"
                                     "kubepods-burstable-pod0b3c1e2a_5d4f_4c1b_9a8e_1f2e3d4c5b6a.slice/"
                                     "cri-containerd-" +
                                     kId + ".scope\n"),
            kId);
  EXPECT_EQ(container_id_from_cgroup("4:pids:/kubepods/besteffort/pod0b3c1e2a-5d4f/" + kId + "\n"), kId);
}

TEST(ContainerId, CrioAndPodman) {
  EXPECT_EQ(container_id_from_cgroup("0::/kubepods.slice/crio-" + kId + ".scope"), kId);
  EXPECT_EQ(container_id_from_cgroup("0::/machine.slice/libpod-" + kId + ".scope/container"), kId);
}

TEST(ContainerId, NoneOnTheHost) {
  EXPECT_EQ(container_id_from_cgroup("0::/user.slice/user-1000.slice/session-2.scope\n"), "");
  EXPECT_EQ(container_id_from_cgroup("0::/init.scope\n"), "");
  EXPECT_EQ(container_id_from_cgroup(""), "");
  EXPECT_EQ(container_id_from_cgroup("garbage"), "");
  // 63 hex digits or upper case are no container id.
  EXPECT_EQ(container_id_from_cgroup("0::/docker/" + kId.substr(1)), "");
  std::string upper = kId;
  upper[0] = 'F';
  EXPECT_EQ(container_id_from_cgroup("0::/docker/" + upper), "");
}

}  // namespace
}  // namespace eacgm::sample
