// Finds and loads libnvidia-ml, resolves the entry points eacgm uses, initialises NVML
// and turns every way that can fail into a sentence the user can act on.
#include "sample/nvml_api.h"

#include <dlfcn.h>
#include <fmt/format.h>

namespace eacgm::sample::nvml {
namespace {

constexpr const char* kSoname = "libnvidia-ml.so.1";

// Where drivers put the library when the dynamic loader's path does not include it:
// containers from the NVIDIA runtime mount it under /usr/local/nvidia.
constexpr const char* kDriverDirs[] = {
    "/usr/local/nvidia/lib64",
    "/usr/local/nvidia/lib",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
};

template <typename F>
void resolve(void* dl, const char* name, F& slot) {
  slot = reinterpret_cast<F>(dlsym(dl, name));
}

std::string init_hint(Return r) {
  switch (r) {
    case kErrorDriverNotLoaded:
      return "; load the nvidia kernel module (is the driver installed?)";
    case kErrorNoPermission:
      return "; eacgm needs read/write access to /dev/nvidiactl and /dev/nvidia*";
    case 18:  // NVML_ERROR_LIB_RM_VERSION_MISMATCH
      return "; the NVML library and the kernel driver differ in version, reload the driver or reboot";
    default:
      return "";
  }
}

}  // namespace

bool is_absent(Return r) {
  return r == kErrorNotSupported || r == kErrorFunctionNotFound || r == kErrorNoPermission ||
         r == kErrorNotFound || r == kErrorNoData || r == kErrorInvalidArgument;
}

bool is_gpu_lost(Return r) { return r == kErrorGpuIsLost || r == kErrorResetRequired; }

Result<std::shared_ptr<const Session>> Session::open(const std::string& library_path) {
  std::shared_ptr<Session> s(new Session());
  if (!library_path.empty()) {
    s->dl_ = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!s->dl_) {
      const char* why = dlerror();
      return make_error(fmt::format("NVML not available (cannot load {}={}: {})", kLibraryEnv, library_path,
                                    why ? why : "unknown dlopen error"));
    }
    s->path_ = library_path;
  } else {
    s->dl_ = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
    s->path_ = kSoname;
    for (const char* dir : kDriverDirs) {
      if (s->dl_) break;
      std::string candidate = fmt::format("{}/{}", dir, kSoname);
      s->dl_ = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      s->path_ = candidate;
    }
    if (!s->dl_) {
      return make_error(fmt::format("NVML not available ({} not found: install the NVIDIA driver)", kSoname));
    }
  }

  Functions& f = s->fn_;
  void* dl = s->dl_;
  resolve(dl, "nvmlInit_v2", f.Init_v2);
  resolve(dl, "nvmlShutdown", f.Shutdown);
  resolve(dl, "nvmlErrorString", f.ErrorString);
  resolve(dl, "nvmlDeviceGetCount_v2", f.DeviceGetCount_v2);
  resolve(dl, "nvmlDeviceGetHandleByIndex_v2", f.DeviceGetHandleByIndex_v2);
  for (auto [name, present] :
       {std::pair{"nvmlInit_v2", f.Init_v2 != nullptr}, std::pair{"nvmlShutdown", f.Shutdown != nullptr},
        std::pair{"nvmlErrorString", f.ErrorString != nullptr},
        std::pair{"nvmlDeviceGetCount_v2", f.DeviceGetCount_v2 != nullptr},
        std::pair{"nvmlDeviceGetHandleByIndex_v2", f.DeviceGetHandleByIndex_v2 != nullptr}}) {
    if (!present) {
      return make_error(fmt::format(
          "NVML not available ({} has no {}: the NVIDIA driver is too old, install R450 or newer)", s->path_,
          name));
    }
  }
  resolve(dl, "nvmlSystemGetDriverVersion", f.SystemGetDriverVersion);
  resolve(dl, "nvmlSystemGetCudaDriverVersion_v2", f.SystemGetCudaDriverVersion_v2);
  resolve(dl, "nvmlSystemGetProcessName", f.SystemGetProcessName);
  resolve(dl, "nvmlDeviceGetName", f.DeviceGetName);
  resolve(dl, "nvmlDeviceGetUUID", f.DeviceGetUUID);
  resolve(dl, "nvmlDeviceGetIndex", f.DeviceGetIndex);
  resolve(dl, "nvmlDeviceGetPciInfo_v3", f.DeviceGetPciInfo_v3);
  resolve(dl, "nvmlDeviceGetUtilizationRates", f.DeviceGetUtilizationRates);
  resolve(dl, "nvmlDeviceGetMemoryInfo_v2", f.DeviceGetMemoryInfo_v2);
  resolve(dl, "nvmlDeviceGetMemoryInfo", f.DeviceGetMemoryInfo);
  resolve(dl, "nvmlDeviceGetTemperature", f.DeviceGetTemperature);
  resolve(dl, "nvmlDeviceGetFieldValues", f.DeviceGetFieldValues);
  resolve(dl, "nvmlDeviceGetPowerUsage", f.DeviceGetPowerUsage);
  resolve(dl, "nvmlDeviceGetEnforcedPowerLimit", f.DeviceGetEnforcedPowerLimit);
  resolve(dl, "nvmlDeviceGetTotalEnergyConsumption", f.DeviceGetTotalEnergyConsumption);
  resolve(dl, "nvmlDeviceGetClockInfo", f.DeviceGetClockInfo);
  resolve(dl, "nvmlDeviceGetFanSpeed", f.DeviceGetFanSpeed);
  resolve(dl, "nvmlDeviceGetEncoderUtilization", f.DeviceGetEncoderUtilization);
  resolve(dl, "nvmlDeviceGetDecoderUtilization", f.DeviceGetDecoderUtilization);
  resolve(dl, "nvmlDeviceGetPcieThroughput", f.DeviceGetPcieThroughput);
  resolve(dl, "nvmlDeviceGetPcieReplayCounter", f.DeviceGetPcieReplayCounter);
  resolve(dl, "nvmlDeviceGetTotalEccErrors", f.DeviceGetTotalEccErrors);
  resolve(dl, "nvmlDeviceGetRemappedRows", f.DeviceGetRemappedRows);
  resolve(dl, "nvmlDeviceGetCurrentClocksEventReasons", f.DeviceGetCurrentClocksEventReasons);
  if (!f.DeviceGetCurrentClocksEventReasons) {
    resolve(dl, "nvmlDeviceGetCurrentClocksThrottleReasons", f.DeviceGetCurrentClocksEventReasons);
  }
  resolve(dl, "nvmlDeviceGetComputeRunningProcesses_v3", f.DeviceGetComputeRunningProcesses_v3);
  resolve(dl, "nvmlDeviceGetGraphicsRunningProcesses_v3", f.DeviceGetGraphicsRunningProcesses_v3);
  resolve(dl, "nvmlDeviceGetProcessUtilization", f.DeviceGetProcessUtilization);
  resolve(dl, "nvmlEventSetCreate", f.EventSetCreate);
  resolve(dl, "nvmlDeviceRegisterEvents", f.DeviceRegisterEvents);
  resolve(dl, "nvmlEventSetWait_v2", f.EventSetWait_v2);
  resolve(dl, "nvmlEventSetFree", f.EventSetFree);
  resolve(dl, "nvmlGpmQueryDeviceSupport", f.GpmQueryDeviceSupport);
  resolve(dl, "nvmlGpmSampleAlloc", f.GpmSampleAlloc);
  resolve(dl, "nvmlGpmSampleFree", f.GpmSampleFree);
  resolve(dl, "nvmlGpmSampleGet", f.GpmSampleGet);
  resolve(dl, "nvmlGpmMetricsGet", f.GpmMetricsGet);
  resolve(dl, "nvmlDeviceGetMigMode", f.DeviceGetMigMode);
  resolve(dl, "nvmlDeviceGetMaxMigDeviceCount", f.DeviceGetMaxMigDeviceCount);
  resolve(dl, "nvmlDeviceGetMigDeviceHandleByIndex", f.DeviceGetMigDeviceHandleByIndex);
  resolve(dl, "nvmlDeviceGetGpuInstanceId", f.DeviceGetGpuInstanceId);
  resolve(dl, "nvmlGpmMigSampleGet", f.GpmMigSampleGet);

  if (Return r = f.Init_v2(); r != kSuccess) {
    return make_error(
        fmt::format("NVML not available (nvmlInit_v2 failed: {}{})", s->error_string(r), init_hint(r)));
  }
  s->initialised_ = true;

  unsigned int count = 0;
  if (Return r = f.DeviceGetCount_v2(&count); r != kSuccess) {
    return make_error(
        fmt::format("NVML not available (nvmlDeviceGetCount_v2 failed: {})", s->error_string(r)));
  }
  s->devices_.assign(count, nullptr);
  s->handle_errors_.assign(count, std::string());
  for (unsigned int i = 0; i < count; ++i) {
    Device d = nullptr;
    if (Return r = f.DeviceGetHandleByIndex_v2(i, &d); r != kSuccess) {
      // e.g. a GPU this container may not open, or one that fell off the bus.
      s->handle_errors_[i] =
          fmt::format("nvmlDeviceGetHandleByIndex_v2({}) failed: {}", i, s->error_string(r));
      continue;
    }
    s->devices_[i] = d;
  }
  return std::shared_ptr<const Session>(std::move(s));
}

Session::~Session() {
  if (initialised_ && fn_.Shutdown) fn_.Shutdown();
  // The library stays mapped: NVML may leave helper threads or atexit handlers behind,
  // and unmapping their code under them would crash at exit.
}

std::string Session::error_string(Return r) const {
  if (r == kErrorFunctionNotFound) return "Function Not Found";
  const char* s = fn_.ErrorString ? fn_.ErrorString(r) : nullptr;
  if (s && *s) return s;
  return fmt::format("NVML error {}", r);
}

}  // namespace eacgm::sample::nvml
