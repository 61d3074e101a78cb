// One pass over every GPU: each NVML query fills one field or leaves it absent; a lost
// GPU stops its own queries for the pass and says so, the other GPUs carry on. The
// expensive fields are read in rounds on a thread of their own (see the header).
#include "sample/device_sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/clock.h"
#include "core/signal_mask.h"

namespace eacgm::sample {
namespace {

using nvml::Return;

// Classifies each NVML return for one GPU: success fills the field, "not supported"
// and friends leave it absent, a lost GPU ends the pass for that GPU, anything else is
// kept as a field error so that it is seen, never swallowed.
class GpuQuery {
 public:
  GpuQuery(const nvml::Session& s, DeviceSample& out, std::bitset<32>* unsupported = nullptr)
      : s_(s), out_(out), unsupported_(unsupported) {}

  template <typename Fn, typename... Args>
  bool operator()(const char* name, Fn fn, Args... args) {
    if (out_.lost || fn == nullptr) return false;
    return check(name, fn(args...));
  }

  // The same, remembering "not supported" under `id` so the GPU is not asked again.
  template <typename Fn, typename... Args>
  bool cached(int id, const char* name, Fn fn, Args... args) {
    if (out_.lost || fn == nullptr || (unsupported_ && unsupported_->test(id))) return false;
    Return r = fn(args...);
    if ((r == nvml::kErrorNotSupported || r == nvml::kErrorFunctionNotFound) && unsupported_)
      unsupported_->set(id);
    return check(name, r);
  }

  bool check(const char* name, Return r) {
    if (r == nvml::kSuccess) return true;
    if (nvml::is_gpu_lost(r)) {
      out_.lost = true;
      out_.error = fmt::format("{} failed: {}", name, s_.error_string(r));
    } else if (!nvml::is_absent(r)) {
      out_.field_errors.push_back(fmt::format("{}: {}", name, s_.error_string(r)));
    }
    return false;
  }

 private:
  const nvml::Session& s_;
  DeviceSample& out_;
  std::bitset<32>* unsupported_;
};

// Ids for the support cache.
enum QueryId {
  kQTemperature,
  kQPower,
  kQPowerLimit,
  kQEnergy,
  kQFan,
  kQEncoder,
  kQDecoder,
  kQPcieThroughput,
  kQPcieReplay,
  kQEccCorrected,
  kQEccUncorrected,
  kQRemappedRows,
  kQClockEventReasons,
  kQFieldValues,
};

// NVML_FI_DEV_PCIE_COUNT_TX_BYTES / _RX_BYTES: cumulative and cheap (0.3 ms for both),
// where nvmlDeviceGetPcieThroughput blocks for 20 ms per direction. nvml.h warns that
// they wrap; observed values are 32-bit.
constexpr unsigned int kFieldPcieTxBytes = 197;
constexpr unsigned int kFieldPcieRxBytes = 198;

std::optional<std::uint64_t> counter_rate(std::optional<std::uint64_t> before, std::uint64_t now,
                                          double seconds) {
  if (!before || seconds <= 0) return std::nullopt;
  std::uint64_t delta;
  if (now >= *before) {
    delta = now - *before;
  } else if (*before <= 0xFFFFFFFFull) {
    delta = now + (1ull << 32) - *before;  // one 32-bit wrap
  } else {
    return std::nullopt;  // reset: no rate this pass
  }
  return static_cast<std::uint64_t>(static_cast<double>(delta) / seconds);
}

std::string c_string(const char* buf, std::size_t cap) { return std::string(buf, strnlen(buf, cap)); }

std::optional<std::uint64_t> field_u64(const nvml::FieldValue& v) {
  if (v.nvmlReturn != nvml::kSuccess) return std::nullopt;
  switch (v.valueType) {
    case nvml::kValueUnsignedInt:
      return v.value.uiVal;
    case nvml::kValueUnsignedLong:
      return v.value.ulVal;
    case nvml::kValueUnsignedLongLong:
      return v.value.ullVal;
    case nvml::kValueUnsignedShort:
      return v.value.usVal;
    case nvml::kValueSignedInt:
      return v.value.siVal >= 0 ? std::optional<std::uint64_t>(v.value.siVal) : std::nullopt;
    case nvml::kValueSignedLongLong:
      return v.value.sllVal >= 0 ? std::optional<std::uint64_t>(v.value.sllVal) : std::nullopt;
    case nvml::kValueDouble:
      return v.value.dVal >= 0 ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(v.value.dVal))
                               : std::nullopt;
    default:
      return std::nullopt;
  }
}

// NVML_FI_DEV_NVLINK_LINK_COUNT: asked alongside the throughput counters so that a GPU
// without NVLink reports them as absent rather than as zero traffic.
constexpr unsigned int kFieldNvlinkLinkCount = 91;

// Round failures waiting for a pass, per GPU: a sampler that is never asked for a pass
// keeps the first few rather than growing without bound.
constexpr std::size_t kMaxQueuedSlowErrors = 8;

// Waits longer than this are cut to it: a period of "forever" must not overflow the
// deadline, and a round a day is as good as none.
constexpr std::chrono::nanoseconds kMaxSlowWait = std::chrono::hours(24);

}  // namespace

DeviceSampler::DeviceSampler(std::shared_ptr<const nvml::Session> session, DeviceSamplerOptions options)
    : session_(std::move(session)), options_(options) {
  const nvml::Functions& f = session_->fn();
  if (f.SystemGetDriverVersion) {
    char buf[nvml::kDriverVersionBufferSize] = {};
    if (f.SystemGetDriverVersion(buf, sizeof buf) == nvml::kSuccess) {
      system_.driver_version = c_string(buf, sizeof buf);
    }
  }
  if (f.SystemGetCudaDriverVersion_v2) {
    int v = 0;
    if (f.SystemGetCudaDriverVersion_v2(&v) == nvml::kSuccess) system_.cuda_driver_version = v;
  }

  if (f.EventSetCreate && f.DeviceRegisterEvents && f.EventSetWait_v2 &&
      f.EventSetCreate(&events_) != nvml::kSuccess) {
    events_ = nullptr;
  }

  const auto& handles = session_->devices();
  gpus_.resize(handles.size());
  for (unsigned i = 0; i < handles.size(); ++i) {
    Gpu& g = gpus_[i];
    g.handle = handles[i];
    g.identity.index = i;
    if (!g.handle) {
      g.identity.error = session_->handle_errors()[i];
      continue;
    }
    GpuQuery q(*session_, g.identity);
    char name[nvml::kNameBufferSize] = {};
    if (q("nvmlDeviceGetName", f.DeviceGetName, g.handle, name, nvml::kNameBufferSize)) {
      g.identity.name = c_string(name, sizeof name);
    }
    char uuid[nvml::kUuidBufferSize] = {};
    if (q("nvmlDeviceGetUUID", f.DeviceGetUUID, g.handle, uuid, nvml::kUuidBufferSize)) {
      g.identity.uuid = c_string(uuid, sizeof uuid);
    }
    nvml::PciInfo pci{};
    if (q("nvmlDeviceGetPciInfo_v3", f.DeviceGetPciInfo_v3, g.handle, &pci)) {
      g.identity.pci_bus_id = c_string(pci.busId, sizeof pci.busId);
    }
    // XIDs are counted from now on; a GPU that cannot deliver them reports them absent.
    if (events_ && !g.identity.lost) {
      g.xid_registered =
          f.DeviceRegisterEvents(g.handle, nvml::kEventTypeXidCriticalError, events_) == nvml::kSuccess;
    }
    // Identity queries that failed are retried by nobody: keep them out of every pass.
    g.identity.field_errors.clear();
    g.identity.lost = false;
    g.identity.error.clear();
  }

  // Turned off, the reader is given no GPU: none is asked for support or sampled.
  gpm_ = std::make_unique<GpmReader>(session_, options_.gpm ? handles : std::vector<nvml::Device>{},
                                     options_.gpm_wait);
  system_.gpm_off = !options_.gpm;
  for (std::size_t i = 0; i < gpus_.size(); ++i) gpus_[i].identity.gpm_supported = gpm_->supported(i);

  slow_readers_.resize(gpus_.size());
  slow_fields_.resize(gpus_.size());
  if (!slow_inline()) {
    slow_round();  // the first pass, and a one-shot `eacgm gpu`, report these fields too
    start_slow_thread();
  }
}

DeviceSampler::~DeviceSampler() {
  stop_slow_thread();
  if (events_ && session_->fn().EventSetFree) session_->fn().EventSetFree(events_);
}

std::size_t DeviceSampler::gpm_count() const {
  std::size_t n = 0;
  for (const Gpu& g : gpus_) n += g.identity.gpm_supported ? 1 : 0;
  return n;
}

// The thread inherits a full signal mask, so signals go to the program's own threads.
void DeviceSampler::start_slow_thread() {
  AllSignalsBlocked blocked;
  slow_thread_ = std::thread([this] { slow_loop(); });
}

void DeviceSampler::stop_slow_thread() {
  {
    std::lock_guard<std::mutex> lock(slow_mu_);
    slow_stop_.store(true);
  }
  slow_cv_.notify_all();
  if (slow_thread_.joinable()) slow_thread_.join();
}

void DeviceSampler::slow_loop() {
  const auto wait = std::min(options_.slow_field_period, kMaxSlowWait);
  std::unique_lock<std::mutex> lock(slow_mu_);
  while (!slow_cv_.wait_for(lock, wait, [this] { return slow_stop_.load(); })) {
    lock.unlock();
    slow_round();
    lock.lock();
  }
}

// One round over every GPU, off the pass. A stop request ends it between two GPUs, so
// stopping waits for one NVML read at most.
void DeviceSampler::slow_round() {
  const std::uint64_t cpu_start = thread_cpu_ns();
  for (std::size_t i = 0; i < gpus_.size() && !slow_stop_.load(); ++i) {
    if (!gpus_[i].handle || slow_readers_[i].lost) continue;
    DeviceSample status;
    read_slow_gpu(i, status);
    // A lost GPU is reported by the pass's own queries; this reader just stops asking.
    if (status.lost) slow_readers_[i].lost = true;
    if (status.field_errors.empty()) continue;
    std::lock_guard<std::mutex> lock(slow_mu_);
    std::vector<std::string>& queued = slow_fields_[i].errors;
    for (std::string& e : status.field_errors) {
      if (queued.size() < kMaxQueuedSlowErrors) queued.push_back(std::move(e));
    }
  }
  slow_cpu_ns_.fetch_add(static_cast<std::int64_t>(thread_cpu_ns() - cpu_start), std::memory_order_relaxed);
  slow_rounds_.fetch_add(1, std::memory_order_relaxed);
}

// Reads GPU i's slow fields and publishes what succeeded; failures and loss land in
// `status` as GpuQuery records them. Only the slow reader calls this.
void DeviceSampler::read_slow_gpu(std::size_t i, DeviceSample& status) {
  const nvml::Functions& f = session_->fn();
  const nvml::Device d = gpus_[i].handle;
  GpuQuery q(*session_, status, &slow_readers_[i].unsupported);
  unsigned long long energy = 0;
  const bool has_energy = q.cached(kQEnergy, "nvmlDeviceGetTotalEnergyConsumption",
                                   f.DeviceGetTotalEnergyConsumption, d, &energy);
  unsigned int replay = 0;
  const bool has_replay = !slow_stop_.load() && q.cached(kQPcieReplay, "nvmlDeviceGetPcieReplayCounter",
                                                         f.DeviceGetPcieReplayCounter, d, &replay);
  if (!has_energy && !has_replay) return;
  std::lock_guard<std::mutex> lock(slow_mu_);
  SlowFields& out = slow_fields_[i];
  if (has_energy) out.energy_millijoules = energy;
  if (has_replay) out.pcie_replay = replay;
}

// Copies GPU i's latest slow fields into the pass, with the failures queued since.
void DeviceSampler::take_slow_fields(std::size_t i, DeviceSample& out) {
  std::lock_guard<std::mutex> lock(slow_mu_);
  SlowFields& slow = slow_fields_[i];
  if (slow.energy_millijoules) out.energy_total_millijoules = slow.energy_millijoules;
  if (slow.pcie_replay) out.pcie_replay_total = slow.pcie_replay;
  for (std::string& e : slow.errors) out.field_errors.push_back(std::move(e));
  slow.errors.clear();
}

void DeviceSampler::poll_events(std::vector<std::string>& errors) {
  if (!events_) return;
  const nvml::Functions& f = session_->fn();
  // Bounded so that an event storm cannot stall the pass; the rest wait for the next.
  for (int i = 0; i < 256; ++i) {
    nvml::EventData e{};
    Return r = f.EventSetWait_v2(events_, &e, 0);
    if (r == nvml::kErrorTimeout) return;
    if (r != nvml::kSuccess) {
      // A lost GPU is reported by its own queries; other failures are worth a line.
      if (!nvml::is_gpu_lost(r)) {
        errors.push_back(fmt::format("nvmlEventSetWait_v2 failed: {}", session_->error_string(r)));
      }
      return;
    }
    if (!(e.eventType & nvml::kEventTypeXidCriticalError)) continue;
    for (Gpu& g : gpus_) {
      if (g.handle == e.device && g.xid_registered) {
        ++g.xid_total;
        g.last_xid = e.eventData;
      }
    }
  }
}

namespace {

// Memory totals: the v2 struct (with the reserved figure), else v1 on drivers before R510.
void read_memory(GpuQuery& q, const nvml::Functions& f, nvml::Device d, DeviceSample& out) {
  nvml::MemoryV2 mem{};
  mem.version = nvml::kMemoryV2Version;
  Return mr = f.DeviceGetMemoryInfo_v2 ? f.DeviceGetMemoryInfo_v2(d, &mem) : nvml::kErrorFunctionNotFound;
  if (mr == nvml::kSuccess) {
    out.memory_total_bytes = mem.total;
    out.memory_reserved_bytes = mem.reserved;
    out.memory_free_bytes = mem.free;
    out.memory_used_bytes = mem.used;
  } else if (nvml::is_gpu_lost(mr) || !f.DeviceGetMemoryInfo) {
    q.check("nvmlDeviceGetMemoryInfo_v2", mr);
  } else {
    // Drivers before R510 have only the v1 struct (no reserved figure).
    nvml::Memory m1{};
    if (q("nvmlDeviceGetMemoryInfo", f.DeviceGetMemoryInfo, d, &m1)) {
      out.memory_total_bytes = m1.total;
      out.memory_free_bytes = m1.free;
      out.memory_used_bytes = m1.used;
    }
  }
}

void read_temperature_and_power(GpuQuery& q, const nvml::Functions& f, nvml::Device d, DeviceSample& out) {
  unsigned int u = 0;
  if (q.cached(kQTemperature, "nvmlDeviceGetTemperature", f.DeviceGetTemperature, d, nvml::kTemperatureGpu,
               &u)) {
    out.temperature_gpu_celsius = u;
  }
  if (q.cached(kQPower, "nvmlDeviceGetPowerUsage", f.DeviceGetPowerUsage, d, &u))
    out.power_usage_milliwatts = u;
  if (q.cached(kQPowerLimit, "nvmlDeviceGetEnforcedPowerLimit", f.DeviceGetEnforcedPowerLimit, d, &u)) {
    out.power_limit_milliwatts = u;
  }
}

void read_clocks_and_codecs(GpuQuery& q, const nvml::Functions& f, nvml::Device d, DeviceSample& out) {
  unsigned int u = 0;
  if (q("nvmlDeviceGetClockInfo", f.DeviceGetClockInfo, d, nvml::kClockSm, &u)) out.clock_sm_mhz = u;
  if (q("nvmlDeviceGetClockInfo", f.DeviceGetClockInfo, d, nvml::kClockMem, &u)) {
    out.clock_memory_mhz = u;
  }
  if (q.cached(kQFan, "nvmlDeviceGetFanSpeed", f.DeviceGetFanSpeed, d, &u)) out.fan_speed_percent = u;
  unsigned int period_us = 0;
  if (q.cached(kQEncoder, "nvmlDeviceGetEncoderUtilization", f.DeviceGetEncoderUtilization, d, &u,
               &period_us)) {
    out.encoder_utilization_percent = u;
  }
  if (q.cached(kQDecoder, "nvmlDeviceGetDecoderUtilization", f.DeviceGetDecoderUtilization, d, &u,
               &period_us)) {
    out.decoder_utilization_percent = u;
  }
}

// PCIe byte counters (cumulative) as one reading.
struct PcieBytes {
  std::uint64_t tx = 0;
  std::uint64_t rx = 0;
};

// One call for the fields that have no cheap getter of their own: memory temperature,
// NVLink traffic (on GPUs with links) and the PCIe byte counters, returned when both
// were read. A lost GPU sets out.lost.
std::optional<PcieBytes> read_field_values(GpuQuery& q, const nvml::Functions& f, nvml::Device d,
                                           DeviceSample& out) {
  nvml::FieldValue fv[6] = {};
  fv[0].fieldId = nvml::kFieldMemoryTemp;
  fv[1].fieldId = kFieldNvlinkLinkCount;
  fv[2].fieldId = nvml::kFieldNvlinkThroughputDataTx;
  fv[2].scopeId = nvml::kScopeAllLinks;
  fv[3].fieldId = nvml::kFieldNvlinkThroughputDataRx;
  fv[3].scopeId = nvml::kScopeAllLinks;
  fv[4].fieldId = kFieldPcieTxBytes;
  fv[5].fieldId = kFieldPcieRxBytes;
  if (!q.cached(kQFieldValues, "nvmlDeviceGetFieldValues", f.DeviceGetFieldValues, d, 6, fv)) {
    return std::nullopt;
  }
  for (const auto& v : fv) {
    if (nvml::is_gpu_lost(v.nvmlReturn)) {
      q.check("nvmlDeviceGetFieldValues", v.nvmlReturn);
      return std::nullopt;
    }
  }
  if (auto t = field_u64(fv[0])) out.temperature_memory_celsius = static_cast<std::uint32_t>(*t);
  auto links = field_u64(fv[1]);
  if (!links || *links > 0) {
    if (auto tx = field_u64(fv[2])) out.nvlink_tx_bytes_total = *tx * 1024;
    if (auto rx = field_u64(fv[3])) out.nvlink_rx_bytes_total = *rx * 1024;
  }
  auto tx = field_u64(fv[4]);
  auto rx = field_u64(fv[5]);
  if (!tx || !rx) return std::nullopt;
  return PcieBytes{*tx, *rx};
}

// NVML's own PCIe throughput: a 20 ms window per direction.
void read_pcie_throughput(GpuQuery& q, const nvml::Functions& f, nvml::Device d, DeviceSample& out) {
  unsigned int u = 0;
  // NVML reports PCIe throughput in KB/s (1 KB = 1024 bytes).
  if (q.cached(kQPcieThroughput, "nvmlDeviceGetPcieThroughput", f.DeviceGetPcieThroughput, d,
               nvml::kPcieUtilTxBytes, &u)) {
    out.pcie_tx_bytes_per_second = std::uint64_t{u} * 1024;
  }
  if (q.cached(kQPcieThroughput, "nvmlDeviceGetPcieThroughput", f.DeviceGetPcieThroughput, d,
               nvml::kPcieUtilRxBytes, &u)) {
    out.pcie_rx_bytes_per_second = std::uint64_t{u} * 1024;
  }
}

// ECC error totals, remapped rows and the reasons clocks are held down.
void read_error_counts(GpuQuery& q, const nvml::Functions& f, nvml::Device d, DeviceSample& out) {
  unsigned long long ull = 0;
  if (q.cached(kQEccCorrected, "nvmlDeviceGetTotalEccErrors", f.DeviceGetTotalEccErrors, d,
               nvml::kMemoryErrorCorrected, nvml::kVolatileEcc, &ull)) {
    out.ecc_corrected_volatile_total = ull;
  }
  if (q.cached(kQEccUncorrected, "nvmlDeviceGetTotalEccErrors", f.DeviceGetTotalEccErrors, d,
               nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc, &ull)) {
    out.ecc_uncorrected_volatile_total = ull;
  }
  unsigned int corr = 0, unc = 0, pending = 0, failure = 0;
  if (q.cached(kQRemappedRows, "nvmlDeviceGetRemappedRows", f.DeviceGetRemappedRows, d, &corr, &unc, &pending,
               &failure)) {
    out.remapped_rows_correctable = corr;
    out.remapped_rows_uncorrectable = unc;
    out.remapped_rows_pending = pending != 0;
    out.remapped_rows_failure = failure != 0;
  }
  if (q.cached(kQClockEventReasons, "nvmlDeviceGetCurrentClocksEventReasons",
               f.DeviceGetCurrentClocksEventReasons, d, &ull)) {
    out.clock_event_reasons = ull;
  }
}

}  // namespace

void DeviceSampler::sample_gpu(std::size_t i, DeviceSample& out) {
  Gpu& gpu = gpus_[i];
  const nvml::Functions& f = session_->fn();
  nvml::Device d = gpu.handle;
  GpuQuery q(*session_, out, &gpu.unsupported);
  const auto now = std::chrono::steady_clock::now();

  nvml::Utilization util{};
  if (q("nvmlDeviceGetUtilizationRates", f.DeviceGetUtilizationRates, d, &util)) {
    out.utilization_gpu_percent = util.gpu;
    out.utilization_memory_percent = util.memory;
  }

  if (out.lost) return;
  read_memory(q, f, d, out);
  read_temperature_and_power(q, f, d, out);
  if (slow_inline()) read_slow_gpu(i, out);  // failures and loss go straight into this pass
  if (out.lost) return;
  take_slow_fields(i, out);
  read_clocks_and_codecs(q, f, d, out);

  const std::optional<PcieBytes> pcie = read_field_values(q, f, d, out);
  if (out.lost) return;
  bool pcie_from_counters = false;
  if (pcie) {
    const double dt = std::chrono::duration<double>(now - gpu.pcie_read_at).count();
    out.pcie_tx_bytes_per_second = counter_rate(gpu.pcie_tx_bytes, pcie->tx, dt);
    out.pcie_rx_bytes_per_second = counter_rate(gpu.pcie_rx_bytes, pcie->rx, dt);
    const bool first = !gpu.pcie_tx_bytes;
    gpu.pcie_tx_bytes = pcie->tx;
    gpu.pcie_rx_bytes = pcie->rx;
    gpu.pcie_read_at = now;
    // The first pass has no previous reading: take NVML's own 20 ms window once.
    pcie_from_counters = !first;
  }
  if (!pcie_from_counters) read_pcie_throughput(q, f, d, out);
  read_error_counts(q, f, d, out);
  if (out.lost || !out.gpm_supported) return;
  GpmRead gpm = gpm_->read(i);
  for (std::string& note : gpm.notes) out.field_errors.push_back(std::move(note));
  out.gpm_mig = gpm.mig;
  out.gpm_instances = std::move(gpm.instances);
  if (gpm.counters) {
    out.gpm = std::move(gpm.counters);
  } else {
    q.check(gpm.call, gpm.status);
  }
}

DevicePass DeviceSampler::sample() {
  DevicePass pass;
  poll_events(pass.errors);
  pass.devices.reserve(gpus_.size());
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    Gpu& g = gpus_[i];
    DeviceSample& out = pass.devices.emplace_back(g.identity);
    if (!g.handle) continue;
    sample_gpu(i, out);
    if (out.lost) {
      // Whatever was read before the GPU vanished is not trustworthy as a whole.
      DeviceSample lost = g.identity;
      lost.lost = true;
      lost.error = std::move(out.error);
      out = std::move(lost);
      continue;
    }
    if (g.xid_registered) {
      out.xid_errors_total = g.xid_total;
      out.last_xid = g.last_xid;
    }
  }
  return pass;
}

}  // namespace eacgm::sample
