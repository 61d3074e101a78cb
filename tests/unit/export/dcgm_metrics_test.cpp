// GPU snapshots as dcgm-exporter-compatible series: a pass of the device sampler over
// the fake NVML rendered with dcgm-exporter's names, units and labels (exact values),
// absent fields leaving no sample, per-process series with rank labels, and the rendered
// text accepted by promtool.
#include "export/dcgm_metrics.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "export/metrics_table.h"
#include "sample/device_sampler.h"
#include "sample/nvml_api.h"

namespace eacgm::exporting {
namespace {

const char* fake_nvml_path() { return EACGM_TEST_BIN_DIR "/fake_nvml/libnvidia-ml.so.1"; }

// One pass of the real device sampler over the fake NVML ("full" scenario unless named).
GpuSnapshot fake_snapshot(const char* scenario = "full") {
  setenv("EACGM_FAKE_NVML_SCENARIO", scenario, 1);
  auto session = sample::nvml::Session::open(fake_nvml_path());
  EXPECT_TRUE(session.ok()) << session.error();
  if (!session.ok()) return {};
  sample::DeviceSampler sampler(*session);
  sample::DevicePass pass = sampler.sample();
  GpuSnapshot snap;
  snap.system = sampler.system();
  snap.devices = std::move(pass.devices);
  snap.errors = std::move(pass.errors);
  return snap;
}

// "name{labels}" -> value text, for every sample line.
std::map<std::string, std::string> samples_of(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto sp = line.rfind(' ');
    out[line.substr(0, sp)] = line.substr(sp + 1);
  }
  return out;
}

const std::string kGpu0 =
    "gpu=\"0\",UUID=\"GPU-fa4e0000-0000-0000-0000-000000000000\",pci_bus_id=\"00000000:19:00.0\","
    "device=\"nvidia0\",modelName=\"Fake NVML GPU (test stand-in)\",Hostname=\"node-1\","
    "DCGM_FI_DRIVER_VERSION=\"999.99.99-fake\"";
// eacgm's own GPU families: the same labels in snake_case.
const std::string kGpu0Own =
    "gpu=\"0\",uuid=\"GPU-fa4e0000-0000-0000-0000-000000000000\",pci_bus_id=\"00000000:19:00.0\","
    "device=\"nvidia0\",model_name=\"Fake NVML GPU (test stand-in)\",hostname=\"node-1\","
    "driver_version=\"999.99.99-fake\"";

std::pair<int, std::string> promtool_check(const std::string& text);

std::string render(const GpuSnapshot& snap, const GpuMetricsOptions& options,
                   ExpositionFormat format = ExpositionFormat::kPrometheusText) {
  ExpositionWriter w(format);
  append_gpu_metrics(w, snap, options);
  append_process_metrics(w, snap, options);
  return w.finish();
}

TEST(DcgmMetrics, FakeGpuAsDcgmExporterWritesIt) {
  const GpuSnapshot snap = fake_snapshot();
  ASSERT_EQ(snap.devices.size(), 2u);
  GpuMetricsOptions options;
  options.hostname = "node-1";
  const std::string text = render(snap, options);
  const auto s = samples_of(text);
  auto at = [&](const std::string& name) {
    const auto it = s.find(name + "{" + (name.starts_with("DCGM_") ? kGpu0 : kGpu0Own) + "}");
    return it == s.end() ? std::string("<absent>") : it->second;
  };
  EXPECT_EQ(at("DCGM_FI_DEV_GPU_UTIL"), "45");
  EXPECT_EQ(at("DCGM_FI_DEV_MEM_COPY_UTIL"), "12");
  EXPECT_EQ(at("DCGM_FI_DEV_ENC_UTIL"), "5");
  EXPECT_EQ(at("DCGM_FI_DEV_DEC_UTIL"), "7");
  EXPECT_EQ(at("DCGM_FI_DEV_FB_USED"), "1024");   // MiB
  EXPECT_EQ(at("DCGM_FI_DEV_FB_FREE"), "80384");  // 80 GiB - 512 MiB - 1 GiB
  EXPECT_EQ(at("DCGM_FI_DEV_FB_RESERVED"), "512");
  EXPECT_EQ(at("DCGM_FI_DEV_GPU_TEMP"), "34");
  EXPECT_EQ(at("DCGM_FI_DEV_MEMORY_TEMP"), "41");
  EXPECT_EQ(at("DCGM_FI_DEV_POWER_USAGE"), "123.456");                 // W from 123456 mW
  EXPECT_EQ(at("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"), "987654321");  // mJ
  EXPECT_EQ(at("DCGM_FI_DEV_SM_CLOCK"), "1980");
  EXPECT_EQ(at("DCGM_FI_DEV_MEM_CLOCK"), "2619");
  EXPECT_EQ(at("DCGM_FI_DEV_PCIE_REPLAY_COUNTER"), "3");
  EXPECT_EQ(at("DCGM_FI_DEV_XID_ERRORS"), "31");  // the last XID's value
  EXPECT_EQ(at("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"), "2");
  EXPECT_EQ(at("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"), "1");
  EXPECT_EQ(at("DCGM_FI_DEV_ROW_REMAP_FAILURE"), "0");
  EXPECT_EQ(at("eacgm_gpu_power_limit_watts"), "700");
  EXPECT_EQ(at("eacgm_gpu_fan_speed_ratio"), "0.3");
  EXPECT_EQ(at("eacgm_gpu_nvlink_tx_bytes_total"), std::to_string(1048576ull * 1024));
  EXPECT_EQ(at("eacgm_gpu_xid_errors_total"), "1");
  EXPECT_EQ(at("eacgm_gpu_lost"), "0");

  // GPU 1: no XID yet shows 0, as dcgm-exporter does.
  bool gpu1_xid = false;
  for (const auto& [k, v] : s) {
    if (k.starts_with("DCGM_FI_DEV_XID_ERRORS{gpu=\"1\"")) gpu1_xid = v == "0";
  }
  EXPECT_TRUE(gpu1_xid) << text;

  // HELP and TYPE lines are dcgm-exporter's.
  EXPECT_NE(
      text.find(
          "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE DCGM_FI_DEV_FB_USED gauge\n"),
      std::string::npos);
  EXPECT_NE(
      text.find("# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n"
                "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"),
      std::string::npos);
  EXPECT_NE(text.find("# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n"
                      "# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n"),
            std::string::npos);
}

TEST(DcgmMetrics, AbsentFieldsAndLostGpusWriteNoSample) {
  GpuSnapshot snap = fake_snapshot("unsupported");
  ASSERT_EQ(snap.devices.size(), 2u);
  DeviceSample lost;
  lost.index = 2;
  lost.uuid = "GPU-lost";
  lost.name = "Lost";
  lost.lost = true;
  lost.error = "GPU is lost";
  snap.devices.push_back(lost);
  const auto s = samples_of(render(snap, {}));
  auto has = [&](const std::string& name, const std::string& gpu) {
    for (const auto& [k, v] : s) {
      if (k.starts_with(name + "{gpu=\"" + gpu + "\"")) return true;
    }
    return false;
  };
  EXPECT_FALSE(has("eacgm_gpu_fan_speed_ratio", "0"));  // no fan on GPU 0
  EXPECT_TRUE(has("DCGM_FI_DEV_GPU_UTIL", "0"));
  EXPECT_TRUE(has("DCGM_FI_DEV_GPU_UTIL", "1"));
  EXPECT_FALSE(has("DCGM_FI_DEV_MEMORY_TEMP", "1"));  // GPU 1 lacks most optional fields
  EXPECT_FALSE(has("DCGM_FI_DEV_GPU_UTIL", "2"));
  EXPECT_FALSE(has("DCGM_FI_DEV_FB_USED", "2"));
  ASSERT_TRUE(has("eacgm_gpu_lost", "2"));
  for (const auto& [k, v] : s) {
    if (k.starts_with("eacgm_gpu_lost{gpu=\"2\"")) {
      EXPECT_EQ(v, "1");
    }
  }
  // Without a hostname or driver version those labels are left out.
  for (const auto& [k, v] : s) {
    EXPECT_EQ(k.find("Hostname="), std::string::npos) << k;
  }
}

TEST(DcgmMetrics, ProfilingFieldsFromGpmInDcgmExporterUnits) {
  const GpuSnapshot snap = fake_snapshot("unsupported");  // GPU 1 has no GPM
  GpuMetricsOptions options;
  options.hostname = "node-1";
  const auto s = samples_of(render(snap, options));
  EXPECT_EQ(s.at("DCGM_FI_PROF_SM_ACTIVE{" + kGpu0 + "}"), "0.8");
  EXPECT_EQ(s.at("DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + kGpu0 + "}"), "0.85");
  EXPECT_EQ(s.at("DCGM_FI_PROF_SM_OCCUPANCY{" + kGpu0 + "}"), "0.4");
  EXPECT_EQ(s.at("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{" + kGpu0 + "}"), "0.6");
  EXPECT_EQ(s.at("DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE{" + kGpu0 + "}"), "0.55");
  EXPECT_EQ(s.at("DCGM_FI_PROF_PIPE_FP16_ACTIVE{" + kGpu0 + "}"), "0.1");
  EXPECT_EQ(s.at("DCGM_FI_PROF_DRAM_ACTIVE{" + kGpu0 + "}"), "0.25");
  EXPECT_EQ(s.at("DCGM_FI_PROF_PCIE_TX_BYTES{" + kGpu0 + "}"), "104857600");
  EXPECT_EQ(s.at("DCGM_FI_PROF_PCIE_RX_BYTES{" + kGpu0 + "}"), "262144000");
  EXPECT_EQ(s.at("DCGM_FI_PROF_NVLINK_TX_BYTES{" + kGpu0 + "}"), "268435456");
  EXPECT_EQ(s.at("eacgm_gpu_nvlink_link_tx_bytes_per_second{" + kGpu0Own + ",link=\"3\"}"), "67108864");
  EXPECT_EQ(s.at("eacgm_gpu_nvlink_link_rx_bytes_per_second{" + kGpu0Own + ",link=\"0\"}"), "33554432");
  // GPU 1 without GPM: no profiling series at all, and no zeros standing in for them.
  for (const auto& [k, v] : s) {
    if (k.find("gpu=\"1\"") == std::string::npos) continue;
    EXPECT_FALSE(k.starts_with("DCGM_FI_PROF_")) << k;
    EXPECT_FALSE(k.starts_with("eacgm_gpu_nvlink_link_")) << k;
  }
}

// A GPU in MIG mode: one series per GPU instance in each profiling family, with
// dcgm-exporter's GPU_I_PROFILE and GPU_I_ID after modelName, and none for the whole GPU.
TEST(DcgmMetrics, ProfilingFieldsPerMigInstance) {
  setenv("EACGM_FAKE_NVML_MIG", "2", 1);
  const GpuSnapshot snap = fake_snapshot();
  unsetenv("EACGM_FAKE_NVML_MIG");
  GpuMetricsOptions options;
  options.hostname = "node-1";
  const std::string text = render(snap, options);
  const auto s = samples_of(text);
  const std::string model = "modelName=\"Fake NVML GPU (test stand-in)\"";
  auto instance = [&](const char* profile, const char* id) {
    std::string l = kGpu0;
    l.insert(l.find(model) + model.size(),
             std::string(",GPU_I_PROFILE=\"") + profile + "\",GPU_I_ID=\"" + id + "\"");
    return l;
  };
  EXPECT_EQ(s.at("DCGM_FI_PROF_SM_ACTIVE{" + instance("3g.40gb", "1") + "}"), "0.7");
  EXPECT_EQ(s.at("DCGM_FI_PROF_SM_ACTIVE{" + instance("2g.20gb", "5") + "}"), "0.6");
  EXPECT_EQ(s.at("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{" + instance("2g.20gb", "5") + "}"), "0.4");
  EXPECT_EQ(s.at("DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + instance("3g.40gb", "1") + "}"), "0.75");
  EXPECT_EQ(s.at("DCGM_FI_PROF_DRAM_ACTIVE{" + instance("3g.40gb", "1") + "}"), "0.25");
  EXPECT_EQ(s.count("DCGM_FI_PROF_SM_ACTIVE{" + kGpu0 + "}"), 0u);
  EXPECT_EQ(s.count("DCGM_FI_PROF_NVLINK_TX_BYTES{" + instance("3g.40gb", "1") + "}"), 0u);
  // The device families and the other GPU are as without MIG.
  EXPECT_EQ(s.count("DCGM_FI_DEV_GPU_UTIL{" + kGpu0 + "}"), 1u);
  std::string gpu1 = kGpu0;
  gpu1.replace(gpu1.find("gpu=\"0\""), 7, "gpu=\"1\"");
  gpu1.replace(gpu1.find("000000000000\""), 13, "000000000001\"");
  gpu1.replace(gpu1.find("19:00.0"), 7, "3B:00.0");
  gpu1.replace(gpu1.find("nvidia0"), 7, "nvidia1");
  EXPECT_EQ(s.at("DCGM_FI_PROF_SM_ACTIVE{" + gpu1 + "}"), "0.75");
  std::size_t with_instance = 0;
  for (const auto& [k, v] : s) {
    if (k.find("GPU_I_ID") == std::string::npos) continue;
    ++with_instance;
    EXPECT_TRUE(k.starts_with("DCGM_FI_PROF_")) << k;
  }
  EXPECT_EQ(with_instance % 2, 0u);  // both instances in every family that has one
  EXPECT_GE(with_instance, 2u * 12);
  // Instance series lint as the GPU's: GPU_I_* are not camelCase.
  const auto [status, out] = promtool_check(text);
  EXPECT_TRUE(status == 0 || status == 3) << out;
  EXPECT_EQ(out.find("GPU_I_"), std::string::npos) << out;
}

TEST(DcgmMetrics, PodLabelsFromTheHook) {
  GpuSnapshot snap = fake_snapshot();
  GpuMetricsOptions options;
  options.pod_of_gpu = [](const DeviceSample& d) -> std::optional<PodLabels> {
    if (d.index != 1) return std::nullopt;
    return PodLabels{"trainer-0", "ml", "pytorch"};
  };
  const std::string text = render(snap, options);
  EXPECT_NE(
      text.find(
          "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-fa4e0000-0000-0000-0000-000000000001\","
          "pci_bus_id=\"00000000:3B:00.0\",device=\"nvidia1\",modelName=\"Fake NVML GPU (test "
          "stand-in)\",DCGM_FI_DRIVER_VERSION=\"999.99.99-fake\",container=\"pytorch\",namespace=\"ml\","
          "pod=\"trainer-0\"} 55\n"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-fa4e0000-0000-0000-0000-000000000000\","
                      "pci_bus_id=\"00000000:19:00.0\",device=\"nvidia0\",modelName=\"Fake NVML GPU (test "
                      "stand-in)\",DCGM_FI_DRIVER_VERSION=\"999.99.99-fake\",container"),
            std::string::npos);
}

TEST(DcgmMetrics, ProcessSeriesWithRankLabels) {
  GpuSnapshot snap;
  ProcessSample p;
  p.pid = 4242;
  p.gpu_index = 1;
  p.gpu_uuid = "GPU-1";
  p.name = "python3";
  p.used_memory_bytes = 3ull << 30;
  p.sm_utilization_percent = 88;
  p.memory_utilization_percent = 5;
  ProcessSample q = p;
  q.pid = 77;
  q.name = "Xorg";
  q.container_id = std::string(64, 'a');
  q.used_memory_bytes.reset();
  q.sm_utilization_percent.reset();
  q.memory_utilization_percent.reset();
  snap.processes = {p, q};
  GpuMetricsOptions options;
  options.rank_of_pid = [](std::uint32_t pid) {
    return pid == 4242 ? sample::RankInfo{3, 1, 8} : sample::RankInfo{};
  };
  const std::string text = render(snap, options);
  const std::string labels =
      "{pid=\"4242\",comm=\"python3\",gpu=\"1\",uuid=\"GPU-1\",rank=\"3\",local_rank=\"1\",world_size=\"8\"}";
  EXPECT_NE(text.find("eacgm_process_gpu_memory_bytes" + labels + " 3221225472\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("eacgm_process_sm_utilization_ratio" + labels + " 0.88\n"), std::string::npos) << text;
  EXPECT_NE(text.find("eacgm_process_memory_utilization_ratio" + labels + " 0.05\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("pid=\"77\""), std::string::npos) << "a process without values has no series\n" << text;
}

// Runs promtool (installed by scripts/setup.sh) on `text`; its exit status and output.
std::pair<int, std::string> promtool_check(const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("eacgm_promtool_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  { std::ofstream(dir / "in.prom") << text; }
  const std::string cmd =
      "promtool check metrics < " + (dir / "in.prom").string() + " > " + (dir / "out.txt").string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream in(dir / "out.txt");
  std::stringstream out;
  out << in.rdbuf();
  std::filesystem::remove_all(dir);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out.str()};
}

TEST(DcgmMetrics, PromtoolAcceptsTheExposition) {
  ASSERT_EQ(std::system("command -v promtool > /dev/null 2>&1"), 0)
      << "promtool not found: run scripts/setup.sh (it installs Debian's prometheus package for promtool)";
  GpuSnapshot snap = fake_snapshot();
  ProcessSample p;
  p.pid = 4242;
  p.name = "python \"quoted\"\\n";
  p.gpu_uuid = snap.devices.empty() ? "" : snap.devices[0].uuid;
  p.used_memory_bytes = 1ull << 30;
  p.sm_utilization_percent = 50;
  snap.processes = {p};
  GpuMetricsOptions options;
  options.hostname = "node-1";
  options.rank_of_pid = [](std::uint32_t) { return sample::RankInfo{0, 0, 2}; };
  const std::string text = render(snap, options);

  const auto [status, out] = promtool_check(text);
  // 0: clean; 1: a parse error; 3: lint findings. dcgm-exporter's own names break three
  // lint rules (counters without _total, the camelCase labels modelName and Hostname, and
  // "COUNTER" in a name): those, and only those, are allowed, and only for DCGM_* series.
  ASSERT_TRUE(status == 0 || status == 3) << "promtool rejected the text (status " << status << "):\n"
                                          << out << text;
  const std::string camel_labels = "label names should be written in 'snake_case' not 'camelCase'";
  const std::set<std::string> allowed = {
      "counter metrics should have \"_total\" suffix",
      camel_labels,
      "metric name should not include type 'counter'",
  };
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const auto sp = line.find(' ');
    const std::string name = line.substr(0, sp);
    const std::string problem = sp == std::string::npos ? "" : line.substr(sp + 1);
    // Only dcgm-exporter's own names and labels; eacgm's families follow Prometheus's.
    const bool ok = name.starts_with("DCGM_FI_") && allowed.count(problem);
    EXPECT_TRUE(ok) << "promtool: " << line;
  }

  // eacgm's own families are lint-clean.
  ExpositionWriter w(ExpositionFormat::kPrometheusText);
  for (const auto& def : metric_table()) {
    if (def.name.starts_with("DCGM_")) continue;
    w.begin_family(family_of(def));
    w.add({{"gpu", "0"}}, std::uint64_t{1});
  }
  const auto [own_status, own_out] = promtool_check(w.finish());
  EXPECT_EQ(own_status, 0) << own_out;
}

TEST(MetricsTable, NamesAreValidAndUnique) {
  std::set<std::string_view> seen;
  for (const auto& def : metric_table()) {
    EXPECT_TRUE(is_valid_metric_name(def.name)) << def.name;
    EXPECT_TRUE(seen.insert(def.name).second) << "duplicate " << def.name;
    EXPECT_FALSE(def.help.empty()) << def.name;
    if (def.type == MetricType::kCounter && !def.name.starts_with("DCGM_")) {
      EXPECT_TRUE(def.name.ends_with("_total")) << def.name;
    }
    if (!def.unit.empty()) {
      EXPECT_NE(def.name.find("_" + std::string(def.unit)), std::string_view::npos) << def.name;
    }
  }
  EXPECT_NE(find_metric("DCGM_FI_DEV_GPU_UTIL"), nullptr);
  EXPECT_EQ(find_metric("nope"), nullptr);
}

TEST(MetricsDoc, UpToDate) {
  const std::string path = EACGM_SOURCE_DIR "/docs/metrics.md";
  std::ifstream in(path);
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_EQ(file.str(), render_metrics_doc())
      << "docs/metrics.md is stale: regenerate it with build/eacgm-metrics-doc > docs/metrics.md";
}

TEST(MetricsTable, CounterRegistryValuesAsFamilies) {
  CounterRegistry registry;
  CounterDef events;
  events.key = "events";
  events.metric = "eacgm_events_total";
  events.help = "Events read.";
  registry.add(events, [] { return 12; });
  CounterDef clients;
  clients.key = "clients";
  clients.metric = "eacgm_sse_clients";
  clients.help = "Clients.";
  clients.kind = CounterKind::kGauge;
  registry.add(clients, [] { return 2; });
  ExpositionWriter w(ExpositionFormat::kOpenMetrics);
  append_counters(w, registry.read());
  EXPECT_EQ(
      w.finish(),
      "# HELP eacgm_events Events read.\n# TYPE eacgm_events counter\neacgm_events_total 12\n"
      "# HELP eacgm_sse_clients Clients.\n# TYPE eacgm_sse_clients gauge\neacgm_sse_clients 2\n# EOF\n");
}

}  // namespace
}  // namespace eacgm::exporting
