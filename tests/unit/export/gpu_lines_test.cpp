// GPU lines in the trace stream: JSON Lines records (one per GPU, per process, and for
// pass failures) that parse back with the `eacgm gpu --json` objects; the text form;
// and the GPU tables of `eacgm run`.
#include "export/gpu_lines.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "export/gpu_activity_table.h"

namespace eacgm::exporting {
namespace {

GpuSnapshot sample() {
  GpuSnapshot s;
  s.time = std::chrono::system_clock::time_point(std::chrono::nanoseconds(1'700'000'000'123'456'789));
  DeviceSample ok;
  ok.index = 0;
  ok.name = "GPU zero";
  ok.uuid = "GPU-0";
  ok.utilization_gpu_percent = 97;
  ok.memory_used_bytes = 3ull << 30;
  ok.memory_total_bytes = 80ull << 30;
  ok.temperature_gpu_celsius = 61;
  ok.power_usage_milliwatts = 650'400;
  ok.power_limit_milliwatts = 700'000;
  ok.clock_sm_mhz = 1980;
  DeviceSample lost;
  lost.index = 1;
  lost.name = "GPU one";
  lost.lost = true;
  lost.error = "GPU is lost";
  s.devices = {ok, lost};
  ProcessSample p;
  p.pid = 4242;
  p.gpu_index = 0;
  p.name = "python3";
  p.compute = true;
  p.used_memory_bytes = 2ull << 30;
  p.sm_utilization_percent = 88;
  s.processes = {p};
  s.errors = {"GPU 1: process list: GPU is lost"};
  return s;
}

std::vector<std::string> lines_of(const fmt::memory_buffer& buf) {
  std::vector<std::string> out;
  std::istringstream in(fmt::to_string(buf));
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(GpuLines, JsonLinesOnePerGpuProcessAndFailure) {
  fmt::memory_buffer buf;
  append_gpu_jsonl(buf, sample());
  auto lines = lines_of(buf);
  ASSERT_EQ(lines.size(), 4u);
  auto gpu0 = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(gpu0["ts_ns"], 1'700'000'000'123'456'789ull);
  // Every field of a call line, so that readers of calls do not trip over samples.
  EXPECT_EQ(gpu0["pid"], 0);
  EXPECT_EQ(gpu0["tid"], 0);
  EXPECT_EQ(gpu0["comm"], "");
  EXPECT_TRUE(gpu0["dur_ns"].is_null());
  EXPECT_TRUE(gpu0["ret"].is_null());
  EXPECT_EQ(gpu0["args"], nlohmann::json::object());
  EXPECT_EQ(gpu0["domain"], "gpu");
  EXPECT_EQ(gpu0["name"], "device");
  EXPECT_EQ(gpu0["gpu"]["index"], 0);
  EXPECT_EQ(gpu0["gpu"]["utilization_gpu_percent"], 97);
  EXPECT_TRUE(gpu0["gpu"]["fan_speed_percent"].is_null());  // absent stays visible as null
  auto gpu1 = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(gpu1["gpu"]["lost"], true);
  EXPECT_EQ(gpu1["gpu"]["error"], "GPU is lost");
  auto proc = nlohmann::json::parse(lines[2]);
  EXPECT_EQ(proc["pid"], 4242);
  EXPECT_EQ(proc["name"], "process");
  EXPECT_EQ(proc["process"]["used_memory_bytes"], 2ull << 30);
  EXPECT_EQ(proc["process"]["type"], "C");
  auto errors = nlohmann::json::parse(lines[3]);
  EXPECT_EQ(errors["name"], "errors");
  EXPECT_EQ(errors["pid"], 0);
  EXPECT_EQ(errors["errors"][0], "GPU 1: process list: GPU is lost");
}

// NVML's process names are the processes' own bytes: one that is not UTF-8 still makes
// a line (U+FFFD in its place) instead of an exception on the output thread.
TEST(GpuLines, AProcessNameThatIsNotUtf8StillMakesALine) {
  GpuSnapshot s = sample();
  s.processes[0].name = "py\xc3";
  fmt::memory_buffer buf;
  ASSERT_NO_THROW(append_gpu_jsonl(buf, s));
  bool found = false;
  for (const auto& line : lines_of(buf)) {
    auto j = nlohmann::json::parse(line);
    if (j.contains("pid") && j["pid"] == 4242) {
      EXPECT_EQ(j["process"]["name"], "py\xef\xbf\xbd");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(GpuLines, TextLines) {
  fmt::memory_buffer buf;
  append_gpu_text(buf, sample());
  auto lines = lines_of(buf);
  ASSERT_EQ(lines.size(), 4u);
  // Clock prefix (local time) then the GPU.
  EXPECT_EQ(lines[0].substr(8),
            ".123456 gpu 0 GPU zero: util 97%, mem 3072/81920 MiB, 61C, 650.4/700 W, sm 1980 MHz");
  EXPECT_EQ(lines[1].substr(8), ".123456 gpu 1 GPU one: LOST (GPU is lost)");
  EXPECT_EQ(lines[2].substr(8), ".123456 gpu 0 pid 4242 python3: mem 2048 MiB, sm 88%");
  EXPECT_EQ(lines[3].substr(8), ".123456 gpu: GPU 1: process list: GPU is lost");
}

TEST(GpuLines, TextLinesNameGpmActivityBesideUtilization) {
  GpuSnapshot s = sample();
  s.devices[0].gpm_supported = true;
  s.devices[0].gpm = GpmCounters{};
  s.devices[0].gpm->sm_active = 0.8;
  s.devices[0].gpm->tensor_active = 0.6;
  fmt::memory_buffer buf;
  append_gpu_text(buf, s);
  EXPECT_EQ(lines_of(buf)[0].substr(8),
            ".123456 gpu 0 GPU zero: util 97%, sm active 80%, tensor active 60%, mem 3072/81920 MiB, 61C, "
            "650.4/700 W, sm 1980 MHz")
      << "an activity not read is left out";
}

TEST(GpuActivityTable, EmptyWithoutSamplesThenBothTables) {
  analysis::GpuActivity a;
  EXPECT_EQ(render_gpu_activity(a), "");
  GpuSnapshot s = sample();
  s.devices[0].gpm_supported = true;
  s.devices[0].gpm = GpmCounters{};
  s.devices[0].gpm->sm_active = 0.7;
  s.devices[0].gpm->tensor_active = 0.5;
  s.devices[0].gpm->dram_active = 0.2;
  a.add(s);
  s.time += std::chrono::seconds(2);
  s.devices[0].gpm->sm_active = 0.9;
  s.devices[0].gpm->tensor_active = 0.7;
  s.devices[0].gpm->dram_active = 0.3;
  a.add(s);
  const std::string out = render_gpu_activity(a);
  // SM and tensor activity are the means over the run, beside utilization's.
  const std::string expected =
      "\n"
      "gpu  name         samples  util mean  util max  sm active  tensor active  dram active  mem max MiB  "
      "mem total MiB  power mean W  power max W  energy J  temp max  xid\n"
      "  0  GPU zero           2        97%       97%        80%            60%          25%         3072  "
      "        81920         650.4        650.4      1301       61C    -\n"
      "  1  GPU one   0 (2 lost)          -         -          -              -            -            -  "
      "            -             -            -         -         -    -\n"
      "\n"
      " pid  process  gpu  calls  errors  samples  mem max MiB  sm mean  sm max\n"
      "4242  python3    0      0       0        2         2048      88%     88%\n";
  EXPECT_EQ(out, expected);
}

TEST(GpuActivityTable, NamesTheGpusWithoutGpmReadings) {
  analysis::GpuActivity a;
  GpuSnapshot s = sample();
  s.devices[1] = s.devices[0];
  s.devices[1].index = 1;
  s.devices[0].gpm_supported = true;
  s.devices[0].gpm = GpmCounters{};
  s.devices[0].gpm->sm_active = 0.8;
  a.add(s);
  const std::string out = render_gpu_activity(a);
  EXPECT_NE(out.find("sm/tensor/dram active: means of NVML GPM profiling counters, none read on GPU 1 (they "
                     "need a Hopper or newer GPU)\n"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace eacgm::exporting
