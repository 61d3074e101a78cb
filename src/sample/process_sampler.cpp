// Joins NVML's compute and graphics process lists with per-process utilization, then
// names each process and finds its container from /proc.
#include "sample/process_sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "core/proc_file.h"
#include "sample/cgroup_ids.h"

namespace eacgm::sample {
namespace {

using nvml::Return;

std::string read_text(const std::string& path) { return read_small_file(path).value_or(""); }

unsigned long long now_us() {
  return static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::microseconds>(
                                             std::chrono::system_clock::now().time_since_epoch())
                                             .count());
}

struct Utilization {
  std::uint64_t sm = 0, mem = 0, enc = 0, dec = 0;
  unsigned samples = 0;
};

}  // namespace

std::string container_id_from_cgroup(std::string_view text) { return parse_cgroup_ids(text).container_id; }

ProcessSampler::ProcessSampler(std::shared_ptr<const nvml::Session> session,
                               std::chrono::microseconds first_window, std::string proc_root)
    : session_(std::move(session)), proc_root_(std::move(proc_root)) {
  const auto& handles = session_->devices();
  const nvml::Functions& f = session_->fn();
  uuids_.resize(handles.size());
  const unsigned long long start = now_us();
  const auto window = static_cast<unsigned long long>(std::max<std::int64_t>(first_window.count(), 0));
  last_seen_us_.assign(handles.size(), start > window ? start - window : 0);
  for (unsigned i = 0; i < handles.size(); ++i) {
    char uuid[nvml::kUuidBufferSize] = {};
    if (handles[i] && f.DeviceGetUUID &&
        f.DeviceGetUUID(handles[i], uuid, nvml::kUuidBufferSize) == nvml::kSuccess) {
      uuids_[i] = std::string(uuid, strnlen(uuid, sizeof uuid));
    }
  }
  infos_.resize(64);
}

void ProcessSampler::sample_gpu(unsigned index, ProcessPass& pass) {
  const nvml::Functions& f = session_->fn();
  nvml::Device d = session_->devices()[index];
  auto fail = [&](const char* what, Return r) {
    pass.errors.push_back(fmt::format("GPU {}: {}: {}", index, what, session_->error_string(r)));
  };

  std::map<std::uint32_t, ProcessSample> by_pid;
  // The same pid may appear once per MIG instance in one list (sum those) and in both
  // lists when it has compute and graphics contexts (the same memory: take the larger).
  auto list = [&](const char* what, auto fn, bool compute) -> bool {
    if (!fn) return true;
    Return r = nvml::kSuccess;
    unsigned int count = 0;
    for (int attempt = 0; attempt < 4; ++attempt) {
      count = static_cast<unsigned int>(infos_.size());
      r = fn(d, &count, infos_.data());
      if (r != nvml::kErrorInsufficientSize) break;
      // Processes may start between the calls: leave room for a few more.
      infos_.resize(std::max<std::size_t>(count + 16, infos_.size() * 2));
    }
    if (r != nvml::kSuccess) {
      if (nvml::is_absent(r)) return true;
      fail(what, r);
      return false;
    }
    std::map<std::uint32_t, std::uint64_t> mem;
    for (unsigned int i = 0; i < count && i < infos_.size(); ++i) {
      const nvml::ProcessInfo& p = infos_[i];
      ProcessSample& s = by_pid[p.pid];
      s.pid = p.pid;
      (compute ? s.compute : s.graphics) = true;
      if (p.usedGpuMemory != nvml::kValueNotAvailable) {
        mem[p.pid] += p.usedGpuMemory;
      }
    }
    for (auto& [pid, bytes] : mem) {
      ProcessSample& s = by_pid[pid];
      s.used_memory_bytes = std::max<std::uint64_t>(s.used_memory_bytes.value_or(0), bytes);
    }
    return true;
  };
  if (!list("nvmlDeviceGetComputeRunningProcesses_v3", f.DeviceGetComputeRunningProcesses_v3, true)) return;
  if (!list("nvmlDeviceGetGraphicsRunningProcesses_v3", f.DeviceGetGraphicsRunningProcesses_v3, false))
    return;
  if (by_pid.empty()) return;

  // Per-process utilization since the previous pass. The driver lists only processes
  // with non-zero utilization, so success means "absent from the list" is zero.
  bool util_known = false;
  std::map<std::uint32_t, Utilization> util;
  if (f.DeviceGetProcessUtilization) {
    unsigned int count = 0;
    Return r = f.DeviceGetProcessUtilization(d, nullptr, &count, last_seen_us_[index]);
    if (r == nvml::kErrorInsufficientSize && count > 0) {
      if (util_.size() < count) util_.resize(count + 16);
      count = static_cast<unsigned int>(util_.size());
      r = f.DeviceGetProcessUtilization(d, util_.data(), &count, last_seen_us_[index]);
    } else if (r == nvml::kErrorInsufficientSize) {
      r = nvml::kSuccess;  // nothing to read
    }
    if (r == nvml::kSuccess || r == nvml::kErrorNotFound) {
      util_known = true;
      unsigned long long newest = last_seen_us_[index];
      for (unsigned int i = 0; r == nvml::kSuccess && i < count && i < util_.size(); ++i) {
        const nvml::ProcessUtilizationSample& s = util_[i];
        Utilization& u = util[s.pid];
        u.sm += s.smUtil;
        u.mem += s.memUtil;
        u.enc += s.encUtil;
        u.dec += s.decUtil;
        ++u.samples;
        newest = std::max(newest, s.timeStamp);
      }
      last_seen_us_[index] = newest;
    } else if (nvml::is_gpu_lost(r)) {
      fail("nvmlDeviceGetProcessUtilization", r);
      return;
    } else if (!nvml::is_absent(r)) {
      fail("nvmlDeviceGetProcessUtilization", r);
    }
  }

  for (auto& [pid, s] : by_pid) {
    s.gpu_index = index;
    s.gpu_uuid = uuids_[index];
    if (util_known) {
      auto it = util.find(pid);
      const Utilization u = it == util.end() ? Utilization{} : it->second;
      const unsigned n = std::max(u.samples, 1u);
      s.sm_utilization_percent = static_cast<std::uint32_t>(u.sm / n);
      s.memory_utilization_percent = static_cast<std::uint32_t>(u.mem / n);
      s.encoder_utilization_percent = static_cast<std::uint32_t>(u.enc / n);
      s.decoder_utilization_percent = static_cast<std::uint32_t>(u.dec / n);
    }
    char name[nvml::kProcessNameBufferSize] = {};
    if (f.SystemGetProcessName && f.SystemGetProcessName(pid, name, sizeof name) == nvml::kSuccess &&
        name[0]) {
      s.name = std::string(name, strnlen(name, sizeof name));
    } else {
      // NVML cannot name processes of other users without privileges; /proc can.
      s.name = read_proc_comm(proc_root_, std::to_string(pid));
    }
    s.container_id = container_id_from_cgroup(read_text(fmt::format("{}/{}/cgroup", proc_root_, pid)));
    pass.processes.push_back(std::move(s));
  }
}

ProcessPass ProcessSampler::sample() {
  ProcessPass pass;
  const auto& handles = session_->devices();
  for (unsigned i = 0; i < handles.size(); ++i) {
    if (handles[i]) sample_gpu(i, pass);
  }
  return pass;
}

}  // namespace eacgm::sample
