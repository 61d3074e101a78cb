// Two GPM sample buffers per GPU used in turn; nvmlGpmMetricsGet turns the older and the
// newer into averages. Percentages become ratios and MiB/s bytes per second here, so
// everything above sample/ speaks dcgm-exporter's units.
#include "sample/gpm_reader.h"

#include <thread>
#include <utility>

namespace eacgm::sample {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::vector<unsigned> make_metric_ids() {
  std::vector<unsigned> ids = {
      nvml::kGpmGraphicsUtil,
      nvml::kGpmSmUtil,
      nvml::kGpmSmOccupancy,
      nvml::kGpmIntegerUtil,
      nvml::kGpmAnyTensorUtil,
      nvml::kGpmDfmaTensorUtil,
      nvml::kGpmHmmaTensorUtil,
      nvml::kGpmImmaTensorUtil,
      nvml::kGpmDramBwUtil,
      nvml::kGpmFp64Util,
      nvml::kGpmFp32Util,
      nvml::kGpmFp16Util,
      nvml::kGpmPcieTxPerSec,
      nvml::kGpmPcieRxPerSec,
      nvml::kGpmNvlinkTotalRxPerSec,
      nvml::kGpmNvlinkTotalTxPerSec,
  };
  for (unsigned link = 0; link < nvml::kGpmNvlinkLinks; ++link) {
    ids.push_back(nvml::kGpmNvlinkL0RxPerSec + 2 * link);
    ids.push_back(nvml::kGpmNvlinkL0RxPerSec + 2 * link + 1);
  }
  return ids;
}

// A percentage as a ratio, clamped: GPM's averages overshoot 100 by rounding now and then.
double ratio(double percent) {
  const double r = percent / 100.0;
  return r < 0 ? 0 : (r > 1 ? 1 : r);
}

// Fills `out` from the answered metrics; a metric the GPU lacks stays absent.
void fill(const nvml::GpmMetricsGet& get, GpmCounters& out) {
  std::optional<double> link_rx[nvml::kGpmNvlinkLinks], link_tx[nvml::kGpmNvlinkLinks];
  for (unsigned i = 0; i < get.numMetrics; ++i) {
    const nvml::GpmMetric& m = get.metrics[i];
    if (m.nvmlReturn != nvml::kSuccess) continue;
    const double v = m.value;
    switch (m.metricId) {
      case nvml::kGpmGraphicsUtil:
        out.graphics_active = ratio(v);
        break;
      case nvml::kGpmSmUtil:
        out.sm_active = ratio(v);
        break;
      case nvml::kGpmSmOccupancy:
        out.sm_occupancy = ratio(v);
        break;
      case nvml::kGpmIntegerUtil:
        out.integer_active = ratio(v);
        break;
      case nvml::kGpmAnyTensorUtil:
        out.tensor_active = ratio(v);
        break;
      case nvml::kGpmDfmaTensorUtil:
        out.tensor_dfma_active = ratio(v);
        break;
      case nvml::kGpmHmmaTensorUtil:
        out.tensor_hmma_active = ratio(v);
        break;
      case nvml::kGpmImmaTensorUtil:
        out.tensor_imma_active = ratio(v);
        break;
      case nvml::kGpmDramBwUtil:
        out.dram_active = ratio(v);
        break;
      case nvml::kGpmFp64Util:
        out.fp64_active = ratio(v);
        break;
      case nvml::kGpmFp32Util:
        out.fp32_active = ratio(v);
        break;
      case nvml::kGpmFp16Util:
        out.fp16_active = ratio(v);
        break;
      case nvml::kGpmPcieTxPerSec:
        out.pcie_tx_bytes_per_second = v * kMiB;
        break;
      case nvml::kGpmPcieRxPerSec:
        out.pcie_rx_bytes_per_second = v * kMiB;
        break;
      case nvml::kGpmNvlinkTotalRxPerSec:
        out.nvlink_rx_bytes_per_second = v * kMiB;
        break;
      case nvml::kGpmNvlinkTotalTxPerSec:
        out.nvlink_tx_bytes_per_second = v * kMiB;
        break;
      default:
        if (m.metricId >= nvml::kGpmNvlinkL0RxPerSec &&
            m.metricId < nvml::kGpmNvlinkL0RxPerSec + 2 * nvml::kGpmNvlinkLinks) {
          const unsigned off = m.metricId - nvml::kGpmNvlinkL0RxPerSec;
          (off % 2 == 0 ? link_rx : link_tx)[off / 2] = v * kMiB;
        }
        break;
    }
  }
  for (unsigned link = 0; link < nvml::kGpmNvlinkLinks; ++link) {
    if (link_rx[link] || link_tx[link]) {
      out.nvlinks.push_back({link, link_tx[link].value_or(0), link_rx[link].value_or(0)});
    }
  }
}

}  // namespace

const std::vector<unsigned>& gpm_metric_ids() {
  static const std::vector<unsigned> ids = make_metric_ids();
  return ids;
}

const std::vector<unsigned>& gpm_metric_ids_but_graphics() {
  static const std::vector<unsigned> ids = [] {
    std::vector<unsigned> all = make_metric_ids();
    std::erase(all, nvml::kGpmGraphicsUtil);
    return all;
  }();
  return ids;
}

GpmReader::GpmReader(std::shared_ptr<const nvml::Session> session, const std::vector<nvml::Device>& devices,
                     bool wait)
    : session_(std::move(session)), wait_(wait) {
  static_assert(nvml::kGpmMaxAsked >= 16 + 2 * nvml::kGpmNvlinkLinks);
  const nvml::Functions& f = session_->fn();
  gpus_.resize(devices.size());
  if (!f.GpmQueryDeviceSupport || !f.GpmSampleAlloc || !f.GpmSampleFree || !f.GpmSampleGet ||
      !f.GpmMetricsGet) {
    return;  // a driver before R520: no GPU has GPM
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    Gpu& g = gpus_[i];
    g.handle = devices[i];
    if (!g.handle) continue;
    nvml::GpmSupport support{nvml::kGpmSupportVersion, 0};
    if (f.GpmQueryDeviceSupport(g.handle, &support) != nvml::kSuccess || !support.isSupportedDevice) continue;
    if (f.GpmSampleAlloc(&g.samples[0]) != nvml::kSuccess) {
      g.samples[0] = nullptr;
      continue;
    }
    if (f.GpmSampleAlloc(&g.samples[1]) != nvml::kSuccess) {
      f.GpmSampleFree(g.samples[0]);
      g.samples[0] = g.samples[1] = nullptr;
      continue;
    }
    take(g, 0);  // a failure here leaves latest at -1: the first read starts over
  }
}

GpmReader::~GpmReader() {
  const nvml::Functions& f = session_->fn();
  for (Gpu& g : gpus_) {
    for (nvml::GpmSample& s : g.samples) {
      if (s) f.GpmSampleFree(s);
      s = nullptr;
    }
  }
}

nvml::Return GpmReader::take(Gpu& g, int slot) {
  const nvml::Return r = session_->fn().GpmSampleGet(g.handle, g.samples[slot]);
  if (r == nvml::kSuccess) {
    g.latest = slot;
    g.taken_at = std::chrono::steady_clock::now();
  }
  return r;
}

GpmRead GpmReader::read(std::size_t i) {
  GpmRead out;
  if (!supported(i)) return out;
  Gpu& g = gpus_[i];
  if (g.latest < 0) {
    out.status = take(g, 0);
    out.call = "nvmlGpmSampleGet";
    return out;  // the next read has an interval
  }
  const auto since = std::chrono::steady_clock::now() - g.taken_at;
  if (since < kMinInterval) {
    if (!wait_) return out;
    std::this_thread::sleep_for(kMinInterval - since);
  }
  const int older = g.latest;
  const int newer = 1 - older;
  const auto previous_at = g.taken_at;
  if (nvml::Return r = take(g, newer); r != nvml::kSuccess) {
    out.status = r;
    out.call = "nvmlGpmSampleGet";
    return out;
  }
  nvml::GpmMetricsGet get{};
  get.version = nvml::kGpmMetricsGetVersion;
  get.sample1 = g.samples[older];
  get.sample2 = g.samples[newer];
  const bool graphics = g.reads % kGraphicsEvery == 0;
  const std::vector<unsigned>& ids = graphics ? gpm_metric_ids() : gpm_metric_ids_but_graphics();
  get.numMetrics = static_cast<unsigned>(ids.size());
  for (std::size_t k = 0; k < ids.size(); ++k) get.metrics[k].metricId = ids[k];
  if (nvml::Return r = session_->fn().GpmMetricsGet(&get); r != nvml::kSuccess) {
    out.status = r;
    out.call = "nvmlGpmMetricsGet";
    return out;
  }
  GpmCounters c;
  c.interval_seconds = std::chrono::duration<double>(g.taken_at - previous_at).count();
  fill(get, c);
  ++g.reads;
  if (graphics) {
    g.graphics_active = c.graphics_active;
  } else {
    c.graphics_active = g.graphics_active;
  }
  out.counters = std::move(c);
  return out;
}

}  // namespace eacgm::sample
