// Two GPM sample buffers per GPU (per GPU instance under MIG) used in turn;
// nvmlGpmMetricsGet turns the older and the newer into averages. Percentages become ratios
// and MiB/s bytes per second here, so everything above sample/ speaks dcgm-exporter's units.
#include "sample/gpm_reader.h"

#include <fmt/format.h>

#include <algorithm>
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

using Series = GpmReader::Series;
using Clock = std::chrono::steady_clock;

// Takes a sample into `slot` with `take` (nvmlGpmSampleGet or nvmlGpmMigSampleGet).
template <typename Take>
nvml::Return take_into(Series& s, int slot, const Take& take) {
  const nvml::Return r = take(s.samples[slot]);
  if (r == nvml::kSuccess) {
    s.latest = slot;
    s.taken_at = Clock::now();
  }
  return r;
}

// One interval of a series: a new sample into the buffer not holding the previous one,
// and the metrics between the two. `wait`: as GpmReader's.
template <typename Take>
GpmRead step(const nvml::Functions& f, Series& s, const char* call, const Take& take, bool wait) {
  GpmRead out;
  if (s.latest < 0) {
    out.status = take_into(s, 0, take);
    out.call = call;
    return out;  // the next read has an interval
  }
  const auto since = Clock::now() - s.taken_at;
  if (since < GpmReader::kMinInterval) {
    if (!wait) return out;
    std::this_thread::sleep_for(GpmReader::kMinInterval - since);
  }
  const int older = s.latest;
  const int newer = 1 - older;
  const auto previous_at = s.taken_at;
  if (nvml::Return r = take_into(s, newer, take); r != nvml::kSuccess) {
    out.status = r;
    out.call = call;
    return out;
  }
  nvml::GpmMetricsGet get{};
  get.version = nvml::kGpmMetricsGetVersion;
  get.sample1 = s.samples[older];
  get.sample2 = s.samples[newer];
  const bool graphics = s.reads % GpmReader::kGraphicsEvery == 0;
  const std::vector<unsigned>& ids = graphics ? gpm_metric_ids() : gpm_metric_ids_but_graphics();
  get.numMetrics = static_cast<unsigned>(ids.size());
  for (std::size_t k = 0; k < ids.size(); ++k) get.metrics[k].metricId = ids[k];
  if (nvml::Return r = f.GpmMetricsGet(&get); r != nvml::kSuccess) {
    out.status = r;
    out.call = "nvmlGpmMetricsGet";
    return out;
  }
  GpmCounters c;
  c.interval_seconds = std::chrono::duration<double>(s.taken_at - previous_at).count();
  fill(get, c);
  ++s.reads;
  if (graphics) {
    s.graphics_active = c.graphics_active;
  } else {
    c.graphics_active = s.graphics_active;
  }
  out.counters = std::move(c);
  return out;
}

bool allocate(const nvml::Functions& f, Series& s) {
  if (f.GpmSampleAlloc(&s.samples[0]) != nvml::kSuccess) {
    s.samples[0] = nullptr;
    return false;
  }
  if (f.GpmSampleAlloc(&s.samples[1]) != nvml::kSuccess) {
    f.GpmSampleFree(s.samples[0]);
    s.samples[0] = s.samples[1] = nullptr;
    return false;
  }
  return true;
}

struct FoundInstance {
  unsigned id;
  std::string profile;
};

// The GPU instances of a GPU in MIG mode, by id, from its MIG devices (compute instances:
// several may share a GPU instance).
std::vector<FoundInstance> find_instances(const nvml::Functions& f, nvml::Device parent) {
  std::vector<FoundInstance> found;
  unsigned int max = 0;
  if (f.DeviceGetMaxMigDeviceCount(parent, &max) != nvml::kSuccess) return found;
  for (unsigned int k = 0; k < max; ++k) {
    nvml::Device mig = nullptr;
    unsigned int id = 0;
    if (f.DeviceGetMigDeviceHandleByIndex(parent, k, &mig) != nvml::kSuccess || !mig ||
        f.DeviceGetGpuInstanceId(mig, &id) != nvml::kSuccess) {
      continue;  // no MIG device at this index
    }
    if (std::ranges::any_of(found, [&](const FoundInstance& x) { return x.id == id; })) continue;
    std::string profile;
    char name[nvml::kNameBufferSize] = {};
    if (f.DeviceGetName && f.DeviceGetName(mig, name, nvml::kNameBufferSize) == nvml::kSuccess) {
      name[sizeof name - 1] = 0;
      profile = mig_profile_of_name(name);
    }
    found.push_back({id, std::move(profile)});
  }
  std::ranges::sort(found, {}, &FoundInstance::id);
  return found;
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

std::string mig_profile_of_name(std::string_view name) {
  const auto at = name.rfind("MIG ");
  if (at == std::string_view::npos) return "";
  std::string_view p = name.substr(at + 4);
  // "<n>c.<gpu instance profile>": a compute instance of part of its GPU instance.
  if (const auto dot = p.find('.'); dot != std::string_view::npos && dot > 0 && p[dot - 1] == 'c' &&
                                    p.find('.', dot + 1) != std::string_view::npos) {
    p = p.substr(dot + 1);
  }
  while (!p.empty() && (p.back() == ' ' || p.back() == '\n')) p.remove_suffix(1);
  return std::string(p);
}

GpmReader::GpmReader(std::shared_ptr<const nvml::Session> session, const std::vector<nvml::Device>& devices,
                     bool wait, std::chrono::nanoseconds mig_period)
    : session_(std::move(session)), wait_(wait), mig_period_(mig_period) {
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
    if (!allocate(f, g.whole)) continue;
    list_instances(g, true);
    // A failure here leaves latest at -1: the first read starts over.
    if (!g.mig) take_into(g.whole, 0, [&](nvml::GpmSample s) { return f.GpmSampleGet(g.handle, s); });
  }
}

GpmReader::~GpmReader() {
  for (Gpu& g : gpus_) {
    release(g.whole);
    for (Instance& in : g.instances) release(in.series);
  }
}

void GpmReader::release(Series& s) {
  for (nvml::GpmSample& x : s.samples) {
    if (x) session_->fn().GpmSampleFree(x);
    x = nullptr;
  }
}

// Whether MIG is on and which GPU instances there are: instances still there keep their
// buffers, new ones get two and their first sample, vanished ones are freed. A driver or
// GPU that cannot say (no MIG) is not asked again.
void GpmReader::list_instances(Gpu& g, bool at_start) {
  const nvml::Functions& f = session_->fn();
  g.listed_at = Clock::now();
  g.list_due = false;
  if (!g.mig_capable) return;
  unsigned int current = 0, pending = 0;
  const nvml::Return mode =
      f.DeviceGetMigMode ? f.DeviceGetMigMode(g.handle, &current, &pending) : nvml::kErrorFunctionNotFound;
  if (mode == nvml::kErrorNotSupported || mode == nvml::kErrorFunctionNotFound || !f.GpmMigSampleGet ||
      !f.DeviceGetMaxMigDeviceCount || !f.DeviceGetMigDeviceHandleByIndex || !f.DeviceGetGpuInstanceId) {
    g.mig_capable = false;
    return;
  }
  if (mode != nvml::kSuccess) return;  // asked again at the next period
  const bool was_mig = g.mig;
  g.mig = current == nvml::kDeviceMigEnable;
  if (was_mig && !g.mig) g.whole.latest = -1;  // the whole GPU's series starts over
  std::vector<FoundInstance> found = g.mig ? find_instances(f, g.handle) : std::vector<FoundInstance>{};

  std::vector<Instance> kept;
  for (Instance& in : g.instances) {
    if (std::ranges::any_of(found, [&](const FoundInstance& x) { return x.id == in.id; })) {
      kept.push_back(std::move(in));
    } else {
      release(in.series);
    }
  }
  // An instance destroyed and made again is asked again.
  std::erase_if(g.without_gpm, [&](unsigned id) {
    return std::ranges::none_of(found, [&](const FoundInstance& x) { return x.id == id; });
  });
  for (FoundInstance& x : found) {
    if (std::ranges::any_of(kept, [&](const Instance& in) { return in.id == x.id; }) ||
        std::ranges::find(g.without_gpm, x.id) != g.without_gpm.end()) {
      continue;
    }
    Instance in{x.id, std::move(x.profile), {}, !at_start};
    if (!allocate(f, in.series)) continue;
    const unsigned id = in.id;
    const nvml::Return r =
        take_into(in.series, 0, [&](nvml::GpmSample s) { return f.GpmMigSampleGet(g.handle, id, s); });
    if (r == nvml::kErrorNotSupported) {
      g.notes.push_back(
          fmt::format("GPU instance {}{}: no GPM profiling counters (nvmlGpmMigSampleGet: {}), left out", id,
                      in.profile.empty() ? "" : fmt::format(" ({})", in.profile), session_->error_string(r)));
      g.without_gpm.push_back(id);
      release(in.series);
      continue;
    }
    kept.push_back(std::move(in));  // another failure: the first read starts over
  }
  std::ranges::sort(kept, {}, &Instance::id);
  g.instances = std::move(kept);
}

// Each GPU instance's interval. A failed read has the instances listed again at the next
// read (the usual cause: the instance was destroyed); the GPU being lost ends the read.
void GpmReader::read_instances(Gpu& g, GpmRead& out) {
  const nvml::Functions& f = session_->fn();
  for (Instance& in : g.instances) {
    if (in.fresh) {
      in.fresh = false;
      continue;
    }
    const unsigned id = in.id;
    GpmRead r = step(
        f, in.series, "nvmlGpmMigSampleGet",
        [&](nvml::GpmSample s) { return f.GpmMigSampleGet(g.handle, id, s); }, wait_);
    if (r.counters) {
      out.instances.push_back({id, in.profile, std::move(*r.counters)});
      continue;
    }
    if (r.status == nvml::kSuccess) continue;  // a first sample, or too soon
    // Listed again before the next read; an instance made again under the same id starts
    // a new series rather than use a sample of the one destroyed.
    g.list_due = true;
    in.series.latest = -1;
    if (nvml::is_gpu_lost(r.status)) {
      out.status = r.status;
      out.call = r.call;
      return;
    }
    if (!nvml::is_absent(r.status)) {
      out.notes.push_back(
          fmt::format("GPU instance {}: {} failed: {}", id, r.call, session_->error_string(r.status)));
    }
  }
}

GpmRead GpmReader::read(std::size_t i) {
  if (!supported(i)) return {};
  Gpu& g = gpus_[i];
  if (g.list_due || Clock::now() - g.listed_at >= mig_period_) list_instances(g, false);
  GpmRead out;
  out.notes = std::move(g.notes);
  g.notes.clear();
  if (g.mig) {
    out.mig = true;
    read_instances(g, out);
    return out;
  }
  const nvml::Functions& f = session_->fn();
  GpmRead whole = step(
      f, g.whole, "nvmlGpmSampleGet", [&](nvml::GpmSample s) { return f.GpmSampleGet(g.handle, s); }, wait_);
  // MIG turned on since the last listing shows first as a failed read.
  if (whole.status != nvml::kSuccess) g.list_due = true;
  whole.notes = std::move(out.notes);
  return whole;
}

}  // namespace eacgm::sample
