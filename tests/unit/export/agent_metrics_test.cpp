// The agent's own families: its build (version, commit, kernel, mode as labels of a
// constant 1), whether it samples the GPUs, its start time and its cost.
#include "export/agent_metrics.h"

#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <string>

#include "core/build_info.h"

namespace eacgm::exporting {
namespace {

std::string render(const AgentInfo& info) {
  ExpositionWriter out(ExpositionFormat::kPrometheusText);
  append_agent_metrics(out, info);
  return out.finish();
}

TEST(AgentMetrics, BuildInfoNamesTheVersionCommitKernelAndMode) {
  AgentInfo info;
  info.start_time_seconds = 1790000000;
  info.mode = "per-call";
  const std::string text = render(info);
  utsname u{};
  ASSERT_EQ(uname(&u), 0);
  EXPECT_FALSE(build_commit().empty());
  EXPECT_NE(text.find("eacgm_build_info{version=\"" + std::string(build_version()) + "\",commit=\"" +
                      std::string(build_commit()) + "\",kernel=\"" + u.release + "\",mode=\"per-call\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("eacgm_agent_start_time_seconds 1790000000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("eacgm_agent_cpu_seconds_total "), std::string::npos) << text;
  EXPECT_NE(text.find("eacgm_agent_resident_memory_bytes "), std::string::npos) << text;
}

TEST(AgentMetrics, GpuSamplingActiveFollowsTheSampler) {
  AgentInfo info;
  EXPECT_NE(render(info).find("eacgm_gpu_sampling_active 0\n"), std::string::npos);
  info.gpu_sampling = true;
  EXPECT_NE(render(info).find("eacgm_gpu_sampling_active 1\n"), std::string::npos);
}

TEST(AgentMetrics, VersionIsTheProjectVersion) {
  // The version is CMake's PROJECT_VERSION: three dot-separated numbers.
  const std::string v(build_version());
  int dots = 0;
  for (char c : v) {
    if (c == '.') {
      ++dots;
    } else {
      EXPECT_TRUE(c >= '0' && c <= '9') << v;
    }
  }
  EXPECT_EQ(dots, 2) << v;
}

}  // namespace
}  // namespace eacgm::exporting
