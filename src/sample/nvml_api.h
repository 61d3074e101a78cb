// The slice of NVML's C ABI that eacgm calls, loaded with dlopen so that the binary runs
// (with a notice) on machines without the NVIDIA driver. Layouts follow NVIDIA's nvml.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace eacgm::sample::nvml {

// nvml.h: nvmlReturn_t is a C enum; its values are stable across driver releases.
using Return = int;
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorTimeout = 10;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorResetRequired = 16;
inline constexpr Return kErrorNoData = 21;
inline constexpr Return kErrorUnknown = 999;

struct DeviceOpaque;
using Device = DeviceOpaque*;  // nvmlDevice_t
struct EventSetOpaque;
using EventSet = EventSetOpaque*;  // nvmlEventSet_t

// Buffer sizes from nvml.h (the _V2 sizes are the largest the driver writes).
inline constexpr unsigned kNameBufferSize = 96;           // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kUuidBufferSize = 96;           // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned kDriverVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
inline constexpr unsigned kProcessNameBufferSize = 256;

struct PciInfo {  // nvmlPciInfo_t, filled by nvmlDeviceGetPciInfo_v3
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
};
static_assert(sizeof(PciInfo) == 68);

struct Utilization {  // nvmlUtilization_t
  unsigned int gpu;
  unsigned int memory;
};

struct Memory {  // nvmlMemory_t (v1), for drivers older than R510
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct MemoryV2 {  // nvmlMemory_v2_t
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(MemoryV2) == 40);
// NVML_STRUCT_VERSION(Memory, 2): the receiver checks size and version.
inline constexpr unsigned int kMemoryV2Version = sizeof(MemoryV2) | (2u << 24);

struct ProcessInfo {  // nvmlProcessInfo_v2_t, the element type of the _v3 process queries
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
static_assert(sizeof(ProcessInfo) == 24);
// NVML_VALUE_NOT_AVAILABLE: usedGpuMemory when the driver cannot attribute memory.
inline constexpr unsigned long long kValueNotAvailable = ~0ULL;

struct ProcessUtilizationSample {  // nvmlProcessUtilizationSample_t
  unsigned int pid;
  unsigned long long timeStamp;  // CPU time, microseconds since the epoch
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};
static_assert(sizeof(ProcessUtilizationSample) == 32);

struct EventData {  // nvmlEventData_t
  Device device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID for nvmlEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
static_assert(sizeof(EventData) == 32);

union Value {  // nvmlValue_t
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
};

struct FieldValue {  // nvmlFieldValue_t
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;  // nvmlValueType_t
  Return nvmlReturn;
  Value value;
};
static_assert(sizeof(FieldValue) == 40);

// nvmlValueType_t
inline constexpr int kValueDouble = 0;
inline constexpr int kValueUnsignedInt = 1;
inline constexpr int kValueUnsignedLong = 2;
inline constexpr int kValueUnsignedLongLong = 3;
inline constexpr int kValueSignedLongLong = 4;
inline constexpr int kValueSignedInt = 5;
inline constexpr int kValueUnsignedShort = 6;

// Field ids (NVML_FI_*). NVLink throughput takes scopeId = UINT_MAX for the sum of links.
inline constexpr unsigned int kFieldMemoryTemp = 82;
inline constexpr unsigned int kFieldNvlinkThroughputDataTx = 138;  // KiB, cumulative
inline constexpr unsigned int kFieldNvlinkThroughputDataRx = 139;
inline constexpr unsigned int kScopeAllLinks = 0xFFFFFFFFu;

inline constexpr int kTemperatureGpu = 0;          // NVML_TEMPERATURE_GPU
inline constexpr int kClockSm = 1;                 // NVML_CLOCK_SM
inline constexpr int kClockMem = 2;                // NVML_CLOCK_MEM
inline constexpr int kPcieUtilTxBytes = 0;         // NVML_PCIE_UTIL_TX_BYTES (KB/s)
inline constexpr int kPcieUtilRxBytes = 1;         // NVML_PCIE_UTIL_RX_BYTES
inline constexpr int kMemoryErrorCorrected = 0;    // NVML_MEMORY_ERROR_TYPE_CORRECTED
inline constexpr int kMemoryErrorUncorrected = 1;  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
inline constexpr int kVolatileEcc = 0;             // NVML_VOLATILE_ECC
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8;

// GPM (GPU Performance Monitoring, Hopper and newer, R520+): profiling counters read as
// the difference of two samples. A sample is an opaque handle the library allocates.
struct GpmSampleOpaque;
using GpmSample = GpmSampleOpaque*;  // nvmlGpmSample_t

struct GpmMetric {  // nvmlGpmMetric_t
  unsigned int metricId;
  Return nvmlReturn;  // per metric: "not supported" on a GPU without that unit
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
};
static_assert(sizeof(GpmMetric) == 40);

// nvmlGpmMetricsGet_t with room for the metrics eacgm asks for: the library reads and
// writes only the first numMetrics entries (nvml.h sizes the array NVML_GPM_METRIC_MAX).
inline constexpr unsigned kGpmMaxAsked = 64;
struct GpmMetricsGet {
  unsigned int version;  // kGpmMetricsGetVersion
  unsigned int numMetrics;
  GpmSample sample1;
  GpmSample sample2;
  GpmMetric metrics[kGpmMaxAsked];
};
static_assert(offsetof(GpmMetricsGet, metrics) == 24);
inline constexpr unsigned int kGpmMetricsGetVersion = 1;  // NVML_GPM_METRICS_GET_VERSION

struct GpmSupport {      // nvmlGpmSupport_t
  unsigned int version;  // kGpmSupportVersion
  unsigned int isSupportedDevice;
};
inline constexpr unsigned int kGpmSupportVersion = 1;  // NVML_GPM_SUPPORT_VERSION

// nvmlGpmMetricId_t: activities are percentages 0-100, traffic MiB per second.
inline constexpr unsigned int kGpmGraphicsUtil = 1;
inline constexpr unsigned int kGpmSmUtil = 2;
inline constexpr unsigned int kGpmSmOccupancy = 3;
inline constexpr unsigned int kGpmIntegerUtil = 4;
inline constexpr unsigned int kGpmAnyTensorUtil = 5;
inline constexpr unsigned int kGpmDfmaTensorUtil = 6;
inline constexpr unsigned int kGpmHmmaTensorUtil = 7;
inline constexpr unsigned int kGpmImmaTensorUtil = 9;
inline constexpr unsigned int kGpmDramBwUtil = 10;
inline constexpr unsigned int kGpmFp64Util = 11;
inline constexpr unsigned int kGpmFp32Util = 12;
inline constexpr unsigned int kGpmFp16Util = 13;
inline constexpr unsigned int kGpmPcieTxPerSec = 20;
inline constexpr unsigned int kGpmPcieRxPerSec = 21;
inline constexpr unsigned int kGpmNvlinkTotalRxPerSec = 60;
inline constexpr unsigned int kGpmNvlinkTotalTxPerSec = 61;
// Link n: RX = kGpmNvlinkL0RxPerSec + 2n, TX = RX + 1, for n < kGpmNvlinkLinks.
inline constexpr unsigned int kGpmNvlinkL0RxPerSec = 62;
inline constexpr unsigned int kGpmNvlinkLinks = 18;

// MIG (Ampere and newer): nvmlDeviceGetMigMode's current mode, NVML_DEVICE_MIG_ENABLE. A
// MIG device handle (nvmlDeviceGetMigDeviceHandleByIndex) is one compute instance; GPM
// samples a whole GPU instance through its parent's handle (nvmlGpmMigSampleGet).
inline constexpr unsigned int kDeviceMigEnable = 1;

// Entry points. Only those marked required must exist; a missing optional one reads as
// NVML_ERROR_FUNCTION_NOT_FOUND, i.e. an absent field, so older drivers still work.
struct Functions {
  Return (*Init_v2)() = nullptr;
  Return (*Shutdown)() = nullptr;
  const char* (*ErrorString)(Return) = nullptr;
  Return (*DeviceGetCount_v2)(unsigned int*) = nullptr;
  Return (*DeviceGetHandleByIndex_v2)(unsigned int, Device*) = nullptr;
  // optional from here on
  Return (*SystemGetDriverVersion)(char*, unsigned int) = nullptr;
  Return (*SystemGetCudaDriverVersion_v2)(int*) = nullptr;
  Return (*SystemGetProcessName)(unsigned int, char*, unsigned int) = nullptr;
  Return (*DeviceGetName)(Device, char*, unsigned int) = nullptr;
  Return (*DeviceGetUUID)(Device, char*, unsigned int) = nullptr;
  Return (*DeviceGetIndex)(Device, unsigned int*) = nullptr;
  Return (*DeviceGetPciInfo_v3)(Device, PciInfo*) = nullptr;
  Return (*DeviceGetUtilizationRates)(Device, Utilization*) = nullptr;
  Return (*DeviceGetMemoryInfo_v2)(Device, MemoryV2*) = nullptr;
  Return (*DeviceGetMemoryInfo)(Device, Memory*) = nullptr;
  Return (*DeviceGetTemperature)(Device, int, unsigned int*) = nullptr;
  Return (*DeviceGetFieldValues)(Device, int, FieldValue*) = nullptr;
  Return (*DeviceGetPowerUsage)(Device, unsigned int*) = nullptr;
  Return (*DeviceGetEnforcedPowerLimit)(Device, unsigned int*) = nullptr;
  Return (*DeviceGetTotalEnergyConsumption)(Device, unsigned long long*) = nullptr;
  Return (*DeviceGetClockInfo)(Device, int, unsigned int*) = nullptr;
  Return (*DeviceGetFanSpeed)(Device, unsigned int*) = nullptr;
  Return (*DeviceGetEncoderUtilization)(Device, unsigned int*, unsigned int*) = nullptr;
  Return (*DeviceGetDecoderUtilization)(Device, unsigned int*, unsigned int*) = nullptr;
  Return (*DeviceGetPcieThroughput)(Device, int, unsigned int*) = nullptr;
  Return (*DeviceGetPcieReplayCounter)(Device, unsigned int*) = nullptr;
  Return (*DeviceGetTotalEccErrors)(Device, int, int, unsigned long long*) = nullptr;
  Return (*DeviceGetRemappedRows)(Device, unsigned int*, unsigned int*, unsigned int*,
                                  unsigned int*) = nullptr;
  // nvmlDeviceGetCurrentClocksEventReasons; the loader falls back to the older name
  // nvmlDeviceGetCurrentClocksThrottleReasons (same ABI) on drivers before R535.
  Return (*DeviceGetCurrentClocksEventReasons)(Device, unsigned long long*) = nullptr;
  Return (*DeviceGetComputeRunningProcesses_v3)(Device, unsigned int*, ProcessInfo*) = nullptr;
  Return (*DeviceGetGraphicsRunningProcesses_v3)(Device, unsigned int*, ProcessInfo*) = nullptr;
  Return (*DeviceGetProcessUtilization)(Device, ProcessUtilizationSample*, unsigned int*,
                                        unsigned long long) = nullptr;
  Return (*EventSetCreate)(EventSet*) = nullptr;
  Return (*DeviceRegisterEvents)(Device, unsigned long long, EventSet) = nullptr;
  Return (*EventSetWait_v2)(EventSet, EventData*, unsigned int) = nullptr;
  Return (*EventSetFree)(EventSet) = nullptr;
  Return (*GpmQueryDeviceSupport)(Device, GpmSupport*) = nullptr;
  Return (*GpmSampleAlloc)(GpmSample*) = nullptr;
  Return (*GpmSampleFree)(GpmSample) = nullptr;
  Return (*GpmSampleGet)(Device, GpmSample) = nullptr;
  Return (*GpmMetricsGet)(GpmMetricsGet*) = nullptr;
  Return (*DeviceGetMigMode)(Device, unsigned int* current, unsigned int* pending) = nullptr;
  Return (*DeviceGetMaxMigDeviceCount)(Device, unsigned int*) = nullptr;
  Return (*DeviceGetMigDeviceHandleByIndex)(Device, unsigned int, Device*) = nullptr;
  Return (*DeviceGetGpuInstanceId)(Device, unsigned int*) = nullptr;
  Return (*GpmMigSampleGet)(Device, unsigned int gpu_instance_id, GpmSample) = nullptr;
};

// Environment variable naming the exact library to load instead of searching; the
// program's edge reads it and passes its value to Session::open.
inline constexpr const char* kLibraryEnv = "EACGM_NVML_LIBRARY";

// A loaded and initialised NVML with its device handles. Shared (read-only) by the
// device and process samplers; NVML itself is thread-safe. Shuts NVML down and closes
// the library when the last owner goes.
class Session {
 public:
  // Loads `library_path` (the value of $EACGM_NVML_LIBRARY; empty: libnvidia-ml.so.1 from
  // the dlopen search path, then the usual driver directories), calls nvmlInit_v2 and
  // enumerates the devices. The error is one sentence for the user: what failed and what
  // to do.
  static Result<std::shared_ptr<const Session>> open(const std::string& library_path);

  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const Functions& fn() const { return fn_; }
  const std::string& library_path() const { return path_; }
  // Handles by NVML index; a device whose handle could not be obtained holds nullptr
  // and the reason in handle_errors()[index].
  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<std::string>& handle_errors() const { return handle_errors_; }

  // nvmlErrorString, or a fallback naming the code.
  std::string error_string(Return r) const;

 private:
  Session() = default;
  void* dl_ = nullptr;
  bool initialised_ = false;
  std::string path_;
  Functions fn_;
  std::vector<Device> devices_;
  std::vector<std::string> handle_errors_;
};

// Whether an NVML error means "this field is not available here" (reported as absent)
// rather than a fault worth a message.
bool is_absent(Return r);
// Whether an NVML error means the whole GPU is gone until reset.
bool is_gpu_lost(Return r);

}  // namespace eacgm::sample::nvml
