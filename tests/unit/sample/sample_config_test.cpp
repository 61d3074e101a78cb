// The sample stage's sections: [gpu] (the sampling period and switch) and [kubernetes]
// (the kubelet's socket and logs, the process series), each error at its line and column.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "../common/config_text.h"
#include "sample/gpu_config.h"
#include "sample/kubernetes_config.h"

namespace eacgm::sample {
namespace {

const test::SectionText<GpuConfig> gpu(add_gpu_section);

TEST(GpuConfig, ValuesAndDefaults) {
  EXPECT_EQ(GpuConfig{}.interval_s, 1.0);
  EXPECT_TRUE(GpuConfig{}.sample);
  EXPECT_TRUE(GpuConfig{}.profiling);
  Result<GpuConfig> r = gpu.parse({"[gpu]", "interval_s = 2", "sample = false", "profiling = false"});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_DOUBLE_EQ(r->interval_s, 2.0);
  EXPECT_FALSE(r->sample);
  EXPECT_FALSE(r->profiling);
}

TEST(GpuConfig, UnknownKeysListWhatIsAllowed) {
  // Nothing close: list what is allowed instead of guessing.
  EXPECT_THAT(gpu.error_of({"[gpu]", "completely_different = 1"}),
              HasSubstr("eacgm.toml:2:1: [gpu]: unknown key \"completely_different\" "
                        "(expected one of interval_s, sample, profiling)"));
}

TEST(GpuConfig, WrongTypesAndRanges) {
  EXPECT_THAT(gpu.error_of({"[gpu]", "interval_s = \"1s\""}),
              HasSubstr("eacgm.toml:2:14: [gpu]: interval_s must be a number, not a string"));
  EXPECT_THAT(gpu.error_of({"[gpu]", "sample = \"yes\""}),
              HasSubstr("eacgm.toml:2:10: [gpu]: sample must be true or false, not a string"));
  EXPECT_THAT(gpu.error_of({"[gpu]", "profiling = 1"}),
              HasSubstr("eacgm.toml:2:13: [gpu]: profiling must be true or false, not an integer"));
  EXPECT_THAT(gpu.error_of({"[gpu]", "interval_s = 0.001"}),
              HasSubstr("eacgm.toml:2:14: [gpu]: interval_s = 0.001 is out of range "
                        "0.01..3600"));
}

const test::SectionText<KubernetesConfig> kubernetes(add_kubernetes_section);

TEST(KubernetesConfig, Kubernetes) {
  const KubernetesConfig d;
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.pod_resources_socket, "/var/lib/kubelet/pod-resources/kubelet.sock");
  EXPECT_EQ(d.process_series, "auto");
  Result<KubernetesConfig> r =
      kubernetes.parse({"[kubernetes]", "enabled = false", "pod_resources_socket = \"/run/k.sock\"",
                        "log_root = \"/host/var/log\"", "refresh_s = 5", "process_series = \"pid\""});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(r->enabled);
  EXPECT_EQ(r->pod_resources_socket, "/run/k.sock");
  EXPECT_EQ(r->log_root, "/host/var/log");
  EXPECT_EQ(r->refresh_s, 5.0);
  EXPECT_EQ(r->process_series, "pid");
  EXPECT_THAT(
      kubernetes.error_of({"[kubernetes]", "process_series = \"pod\""}),
      HasSubstr("eacgm.toml:2:18: [kubernetes]: process_series must be \"auto\" or \"pid\", not \"pod\""));
  EXPECT_THAT(kubernetes.error_of({"[kubernetes]", "log_root = \"var/log\""}),
              HasSubstr("[kubernetes]: log_root must be an absolute path"));
  EXPECT_THAT(kubernetes.error_of({"[kubernetes]", "refresh_s = 0"}), HasSubstr("is out of range 1..86400"));
  EXPECT_THAT(kubernetes.error_of({"[kubernetes]", "socket = \"/x\""}),
              HasSubstr("[kubernetes]: unknown key \"socket\""));
}

}  // namespace
}  // namespace eacgm::sample
