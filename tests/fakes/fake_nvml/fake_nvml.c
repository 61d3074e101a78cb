/* A fake libnvidia-ml.so.1 for tests: the only stand-in for a GPU that the test suite uses.
 * Two fake GPUs with fixed values; $EACGM_FAKE_NVML_SCENARIO picks how they behave. */
/*
 * Scenarios (default "full"):
 *   full         every field present on both GPUs; one XID 31 pending on GPU 0
 *   unsupported  GPU 0: fan NOT_SUPPORTED (a data-centre GPU); GPU 1: most fields
 *                NOT_SUPPORTED, no NVLink (link count 0), no events, no process utilization
 *   gpu_lost     GPU 1 answers the first sampling pass, then NVML_ERROR_GPU_IS_LOST forever
 *   energy_error as full, but GPU 0's nvmlDeviceGetTotalEnergyConsumption always returns
 *                NVML_ERROR_UNKNOWN (an unexpected failure that must be reported)
 *   init_fail    nvmlInit_v2 returns NVML_ERROR_DRIVER_NOT_LOADED
 *   no_gpus      NVML works, zero devices
 *   health       as full, then GPU 0 turns faulty: once the file $EACGM_FAKE_NVML_HEALTH_FILE
 *                exists (unset: from its third sampling pass on) its uncorrected ECC count
 *                is 2 (was 0), its clock event reasons gain HwSlowdown and XID 79 follows
 *                the XID 31
 * GPM (profiling counters): every GPU has it but GPU 1 of "unsupported"; $EACGM_FAKE_NVML_GPM=0
 * takes it from all. Its metrics are fixed per GPU (gpm_value) and need two samples of
 * one GPU in time order, as the real library does.
 * MIG: $EACGM_FAKE_NVML_MIG=<n> (1 to 4) puts GPU 0 in MIG mode with the first n GPU
 * instances of k_mig_devices (ids 1, 5, 13, 14; instance 1 holds two compute instances,
 * so n instances are n + 1 MIG devices). As on the real driver, GPM then gives nothing for
 * the whole GPU (nvmlGpmSampleGet: NOT_SUPPORTED) and each GPU instance its own figures
 * through nvmlGpmMigSampleGet (gpm_instance_value); $EACGM_FAKE_NVML_MIG_NO_GPM=<id> makes
 * that instance answer NOT_SUPPORTED. Both are read at every call, so a test can create and
 * destroy instances between passes.
 * With $EACGM_FAKE_NVML_GPU_COMM set, GPU 0 also lists every live process of that name
 * (/proc/<pid>/comm) as a compute process holding 768 MiB with SM 70% / memory 30%, so
 * that tests can put a traced command "on the GPU".
 * Struct layouts and constants match NVIDIA's nvml.h (copied here, not included, so the
 * fake builds without the driver headers). Like the real library, per-device calls may
 * come from several threads at once (the device sampler reads its slow fields on a
 * thread of its own): the one flag they share across threads, a device's `lost`, is
 * read and written atomically.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;
enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_UNKNOWN = 999,
};

typedef struct nvmlDevice_st {
  unsigned index;
  unsigned utilization_calls;
  int lost;
  int events_registered;
} * nvmlDevice_t;

typedef struct nvmlEventSet_st {
  int xid_delivered;
  int fault_xid_delivered;
} * nvmlEventSet_t;

typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

typedef struct {
  unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  unsigned int version;
  unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
typedef struct {
  unsigned int pid;
  unsigned long long timeStamp;
  unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;
typedef struct {
  nvmlDevice_t device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;
typedef union {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;
typedef struct {
  unsigned int fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;

_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t layout");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t layout");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t layout");
_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "sample layout");
_Static_assert(sizeof(nvmlEventData_t) == 32, "nvmlEventData_t layout");
_Static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t layout");

#define MIB (1024ULL * 1024ULL)
#define GIB (1024ULL * MIB)
#define NOT_AVAILABLE (~0ULL)

enum scenario { FULL, UNSUPPORTED, GPU_LOST, ENERGY_ERROR, INIT_FAIL, NO_GPUS, HEALTH };
static enum scenario g_scenario = FULL;
static int g_initialised = 0;
/* $EACGM_FAKE_NVML_GPUS (1 to 16, default 2) GPUs; those past the second behave as the
 * second does, with their own index-derived values (the web UI's bench shows eight). */
#define MAX_FAKE_GPUS 16
static struct nvmlDevice_st g_devices[MAX_FAKE_GPUS];
static unsigned g_gpu_count = 2;

static unsigned device_count(void) { return g_scenario == NO_GPUS ? 0 : g_gpu_count; }

/* Common entry check for per-device calls: uninitialised, foreign handle, lost GPU. */
static nvmlReturn_t check(nvmlDevice_t d) {
  if (!g_initialised) return NVML_ERROR_UNINITIALIZED;
  if (d < &g_devices[0] || d >= &g_devices[g_gpu_count]) return NVML_ERROR_INVALID_ARGUMENT;
  if (__atomic_load_n(&d->lost, __ATOMIC_RELAXED)) return NVML_ERROR_GPU_IS_LOST;
  return NVML_SUCCESS;
}

/* GPU 0 of the "health" scenario once its fault began (it stays); read from the sampler's
 * threads and the event thread. */
static int g_faulty = 0;
static int faulty(nvmlDevice_t d) {
  if (g_scenario != HEALTH || d->index != 0) return 0;
  if (__atomic_load_n(&g_faulty, __ATOMIC_RELAXED)) return 1;
  const char* file = getenv("EACGM_FAKE_NVML_HEALTH_FILE");
  const int now =
      file && *file ? access(file, F_OK) == 0 : __atomic_load_n(&d->utilization_calls, __ATOMIC_RELAXED) >= 3;
  if (now) __atomic_store_n(&g_faulty, 1, __ATOMIC_RELAXED);
  return now;
}

/* GPU 1 of the "unsupported" scenario: a GPU without most optional features. */
static int bare(nvmlDevice_t d) { return g_scenario == UNSUPPORTED && d->index == 1; }

/* ---- MIG ---- */

/* The MIG devices (compute instances) GPU 0 can hold, in index order; `instance`: which of
 * the $EACGM_FAKE_NVML_MIG GPU instances each belongs to. */
static const struct {
  unsigned gpu_instance_id, instance;
  const char* profile; /* as the MIG device's name ends */
} k_mig_devices[] = {
    {1, 0, "2c.3g.40gb"}, {1, 0, "1c.3g.40gb"}, {5, 1, "2g.20gb"}, {13, 2, "1g.10gb"}, {14, 3, "1g.10gb"},
};
#define MIG_DEVICES (sizeof k_mig_devices / sizeof k_mig_devices[0])
static struct nvmlDevice_st g_mig_handles[MIG_DEVICES]; /* outside g_devices: check() refuses them */

static unsigned mig_instances(void) {
  const char* n = getenv("EACGM_FAKE_NVML_MIG");
  const int v = n ? atoi(n) : 0;
  return v >= 1 && v <= 4 ? (unsigned)v : 0;
}
static int in_mig_mode(nvmlDevice_t d) { return d->index == 0 && mig_instances() > 0; }
/* Which MIG device a handle is; -1 for any other. */
static int mig_slot(nvmlDevice_t d) {
  if (d < &g_mig_handles[0] || d >= &g_mig_handles[MIG_DEVICES]) return -1;
  const int k = (int)(d - &g_mig_handles[0]);
  return k_mig_devices[k].instance < mig_instances() ? k : -1;
}
/* Which of the GPU instances has NVML id `id`; -1 when none (never made, or destroyed). */
static int mig_instance_of(unsigned id) {
  for (unsigned k = 0; k < MIG_DEVICES; ++k) {
    if (k_mig_devices[k].gpu_instance_id == id && k_mig_devices[k].instance < mig_instances()) {
      return (int)k_mig_devices[k].instance;
    }
  }
  return -1;
}

#define CHECK(d)                       \
  do {                                 \
    nvmlReturn_t r_ = check(d);        \
    if (r_ != NVML_SUCCESS) return r_; \
  } while (0)

static void copy_string(char* dst, unsigned int len, const char* src) {
  if (len == 0) return;
  snprintf(dst, len, "%s", src);
}

EXPORT nvmlReturn_t nvmlInit_v2(void) {
  const char* s = getenv("EACGM_FAKE_NVML_SCENARIO");
  g_scenario = FULL;
  if (s && strcmp(s, "unsupported") == 0) g_scenario = UNSUPPORTED;
  if (s && strcmp(s, "gpu_lost") == 0) g_scenario = GPU_LOST;
  if (s && strcmp(s, "energy_error") == 0) g_scenario = ENERGY_ERROR;
  if (s && strcmp(s, "init_fail") == 0) g_scenario = INIT_FAIL;
  if (s && strcmp(s, "no_gpus") == 0) g_scenario = NO_GPUS;
  if (s && strcmp(s, "health") == 0) g_scenario = HEALTH;
  if (g_scenario == INIT_FAIL) return NVML_ERROR_DRIVER_NOT_LOADED;
  const char* n = getenv("EACGM_FAKE_NVML_GPUS");
  g_gpu_count = 2;
  if (n && atoi(n) >= 1 && atoi(n) <= MAX_FAKE_GPUS) g_gpu_count = (unsigned)atoi(n);
  /* Each init starts a fresh run: tests open several sessions in one process. */
  __atomic_store_n(&g_faulty, 0, __ATOMIC_RELAXED);
  for (unsigned i = 0; i < MAX_FAKE_GPUS; ++i) {
    g_devices[i].index = i;
    g_devices[i].utilization_calls = 0;
    __atomic_store_n(&g_devices[i].lost, 0, __ATOMIC_RELAXED);
    g_devices[i].events_registered = 0;
  }
  g_initialised = 1;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlShutdown(void) {
  if (!g_initialised) return NVML_ERROR_UNINITIALIZED;
  g_initialised = 0;
  return NVML_SUCCESS;
}

/* The strings the real library returns for these codes. */
EXPORT const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "Function Not Found";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (!g_initialised) return NVML_ERROR_UNINITIALIZED;
  copy_string(version, length, "999.99.99-fake");
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
  if (!g_initialised) return NVML_ERROR_UNINITIALIZED;
  *v = 12040;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char* name, unsigned int length) {
  if (!g_initialised) return NVML_ERROR_UNINITIALIZED;
  if (pid == 5000001)
    copy_string(name, length, "python3");
  else if (pid == 5000002)
    copy_string(name, length, "Xorg");
  else
    return NVML_ERROR_NOT_FOUND;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!g_initialised) return NVML_ERROR_UNINITIALIZED;
  *count = device_count();
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (!g_initialised) return NVML_ERROR_UNINITIALIZED;
  if (index >= device_count()) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &g_devices[index];
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned int length) {
  const int mig = g_initialised ? mig_slot(d) : -1;
  if (mig >= 0) {
    char buf[96];
    snprintf(buf, sizeof buf, "Fake NVML GPU (test stand-in) MIG %s", k_mig_devices[mig].profile);
    copy_string(name, length, buf);
    return NVML_SUCCESS;
  }
  CHECK(d);
  copy_string(name, length, "Fake NVML GPU (test stand-in)");
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int* current, unsigned int* pending) {
  CHECK(d);
  if (!current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
  if (bare(d)) return NVML_ERROR_NOT_SUPPORTED;
  *current = *pending = (unsigned)in_mig_mode(d); /* NVML_DEVICE_MIG_ENABLE = 1 */
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int* count) {
  CHECK(d);
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = in_mig_mode(d) ? 7 : 0; /* the most the GPU could hold, not how many there are */
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int index,
                                                        nvmlDevice_t* mig) {
  CHECK(d);
  if (!mig) return NVML_ERROR_INVALID_ARGUMENT;
  if (!in_mig_mode(d)) return NVML_ERROR_NOT_SUPPORTED;
  if (index >= MIG_DEVICES || mig_slot(&g_mig_handles[index]) < 0) return NVML_ERROR_NOT_FOUND;
  *mig = &g_mig_handles[index];
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int* id) {
  if (!g_initialised) return NVML_ERROR_UNINITIALIZED;
  if (!id) return NVML_ERROR_INVALID_ARGUMENT;
  const int k = mig_slot(d);
  if (k < 0) return check(d) == NVML_SUCCESS ? NVML_ERROR_NOT_SUPPORTED : check(d);
  *id = k_mig_devices[k].gpu_instance_id;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned int length) {
  CHECK(d);
  char buf[64];
  snprintf(buf, sizeof buf, "GPU-fa4e0000-0000-0000-0000-%012u", d->index);
  copy_string(uuid, length, buf);
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int* index) {
  CHECK(d);
  *index = d->index;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  CHECK(d);
  memset(pci, 0, sizeof *pci);
  pci->bus = d->index == 0 ? 0x19 : 0x3A + d->index;
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus);
  snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
  pci->pciDeviceId = 0x233010DE;
  return NVML_SUCCESS;
}

/* Called once per sampling pass, so it is where the "gpu_lost" GPU falls off the bus. */
EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  CHECK(d);
  __atomic_add_fetch(&d->utilization_calls, 1, __ATOMIC_RELAXED);
  if (g_scenario == GPU_LOST && d->index == 1 && d->utilization_calls >= 2) {
    __atomic_store_n(&d->lost, 1, __ATOMIC_RELAXED);
    return NVML_ERROR_GPU_IS_LOST;
  }
  u->gpu = (45 + 10 * d->index) % 100;
  u->memory = 12 + d->index;
  return NVML_SUCCESS;
}

static unsigned long long used_bytes(nvmlDevice_t d) { return (d->index + 1) * GIB; }

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t* m) {
  CHECK(d);
  if (m->version != (sizeof(nvmlMemory_v2_t) | (2u << 24))) return 25; /* ARGUMENT_VERSION_MISMATCH */
  m->total = 80 * GIB;
  m->reserved = 512 * MIB;
  m->used = used_bytes(d);
  m->free = m->total - m->reserved - m->used;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  CHECK(d);
  m->total = 80 * GIB;
  m->used = used_bytes(d) + 512 * MIB;
  m->free = m->total - m->used;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int* t) {
  CHECK(d);
  if (sensor != 0) return NVML_ERROR_INVALID_ARGUMENT;
  *t = 34 + d->index;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t* values) {
  CHECK(d);
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t* v = &values[i];
    v->nvmlReturn = NVML_SUCCESS;
    switch (v->fieldId) {
      case 82: /* NVML_FI_DEV_MEMORY_TEMP */
        if (bare(d)) {
          v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
          break;
        }
        v->valueType = 1;
        v->value.uiVal = 41 + d->index;
        break;
      case 91: /* NVML_FI_DEV_NVLINK_LINK_COUNT */
        v->valueType = 1;
        v->value.uiVal = bare(d) ? 0 : 18;
        break;
      case 138: /* NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, KiB */
      case 139: /* ..._RX */
        if (v->scopeId != 0xFFFFFFFFu) {
          v->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
          break;
        }
        v->valueType = 3;
        v->value.ullVal = bare(d) ? 0 : (v->fieldId == 138 ? 1048576ULL : 2097152ULL) + d->index;
        break;
      default:
        v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  }
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* mw) {
  CHECK(d);
  if (bare(d)) return NVML_ERROR_NOT_SUPPORTED;
  *mw = 123456 + 1000 * d->index;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int* mw) {
  CHECK(d);
  if (bare(d)) return NVML_ERROR_NOT_SUPPORTED;
  *mw = 700000;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long* mj) {
  CHECK(d);
  if (bare(d)) return NVML_ERROR_NOT_SUPPORTED;
  if (g_scenario == ENERGY_ERROR && d->index == 0) return NVML_ERROR_UNKNOWN;
  *mj = 987654321ULL + d->index;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int* mhz) {
  CHECK(d);
  if (type == 1)
    *mhz = 1980 - 100 * d->index; /* NVML_CLOCK_SM */
  else if (type == 2)
    *mhz = 2619; /* NVML_CLOCK_MEM */
  else
    return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t d, unsigned int* pct) {
  CHECK(d);
  if (g_scenario == UNSUPPORTED) return NVML_ERROR_NOT_SUPPORTED;
  *pct = 30 + d->index;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned int* u, unsigned int* period) {
  CHECK(d);
  if (bare(d)) return NVML_ERROR_NOT_SUPPORTED;
  *u = 5 + d->index;
  *period = 167000;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned int* u, unsigned int* period) {
  CHECK(d);
  if (bare(d)) return NVML_ERROR_NOT_SUPPORTED;
  *u = 7 + d->index;
  *period = 167000;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned int* kbps) {
  CHECK(d);
  if (bare(d)) return NVML_ERROR_NOT_SUPPORTED;
  if (counter == 0)
    *kbps = 1000 + d->index;
  else if (counter == 1)
    *kbps = 2000 + d->index;
  else
    return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned int* n) {
  CHECK(d);
  if (bare(d)) return NVML_ERROR_NOT_SUPPORTED;
  *n = 3 + d->index;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter,
                                                unsigned long long* n) {
  CHECK(d);
  if (bare(d)) return NVML_ERROR_NOT_SUPPORTED;
  if (counter != 0) return NVML_ERROR_INVALID_ARGUMENT;
  *n = type == 0 ? 2 + d->index : faulty(d) ? 2 : 0;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int* corr, unsigned int* unc,
                                              unsigned int* pending, unsigned int* failure) {
  CHECK(d);
  if (bare(d)) return NVML_ERROR_NOT_SUPPORTED;
  *corr = 1;
  *unc = 0;
  *pending = 0;
  *failure = 0;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long* reasons) {
  CHECK(d);
  if (bare(d)) return NVML_ERROR_NOT_SUPPORTED;
  *reasons = d->index == 0 ? 0x5ULL : 0x0ULL; /* GpuIdle | SwPowerCap on GPU 0 */
  if (faulty(d)) *reasons |= 0x8ULL;          /* HwSlowdown */
  return NVML_SUCCESS;
}

/* Live processes named $EACGM_FAKE_NVML_GPU_COMM, at most `max`. */
static unsigned named_processes(unsigned* pids, unsigned max) {
  const char* want = getenv("EACGM_FAKE_NVML_GPU_COMM");
  if (want == NULL || *want == 0) return 0;
  DIR* proc = opendir("/proc");
  if (proc == NULL) return 0;
  unsigned n = 0;
  struct dirent* e;
  while (n < max && (e = readdir(proc)) != NULL) {
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    char path[300], comm[64] = "";
    snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
    FILE* f = fopen(path, "r");
    if (f == NULL) continue;
    if (fgets(comm, sizeof comm, f) != NULL) comm[strcspn(comm, "\n")] = 0;
    fclose(f);
    if (strcmp(comm, want) == 0) pids[n++] = (unsigned)atoi(e->d_name);
  }
  closedir(proc);
  return n;
}

#define MAX_NAMED 8

/* Process tables: GPU 0 has a compute and a graphics process; GPU 1 has two compute
 * processes, one of which the driver cannot attribute memory to. */
static unsigned process_table(nvmlDevice_t d, int compute, nvmlProcessInfo_t* out) {
  unsigned n = 0;
  nvmlProcessInfo_t p = {0, 0, 0xFFFFFFFFu, 0xFFFFFFFFu};
  if (d->index == 0 && compute) {
    p.pid = 5000001;
    p.usedGpuMemory = 1 * GIB;
    out[n++] = p;
    unsigned pids[MAX_NAMED];
    unsigned k = named_processes(pids, MAX_NAMED);
    for (unsigned i = 0; i < k; ++i) {
      p.pid = pids[i];
      p.usedGpuMemory = 768 * MIB;
      out[n++] = p;
    }
  } else if (d->index == 0) {
    p.pid = 5000002;
    p.usedGpuMemory = 256 * MIB;
    out[n++] = p;
  } else if (compute) {
    p.pid = 5000001;
    p.usedGpuMemory = 512 * MIB;
    out[n++] = p;
    p.pid = 5000003;
    p.usedGpuMemory = NOT_AVAILABLE;
    out[n++] = p;
  }
  return n;
}

static nvmlReturn_t running_processes(nvmlDevice_t d, unsigned int* count, nvmlProcessInfo_t* infos,
                                      int compute) {
  CHECK(d);
  nvmlProcessInfo_t table[4 + MAX_NAMED];
  unsigned n = process_table(d, compute, table);
  if (*count < n || (n > 0 && infos == NULL)) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  memcpy(infos, table, n * sizeof table[0]);
  *count = n;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int* count,
                                                            nvmlProcessInfo_t* infos) {
  return running_processes(d, count, infos, 1);
}

EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int* count,
                                                             nvmlProcessInfo_t* infos) {
  return running_processes(d, count, infos, 0);
}

static unsigned long long now_us(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (unsigned long long)tv.tv_sec * 1000000ULL + (unsigned long long)tv.tv_usec;
}

/* Samples are stamped "just now", so every pass sees them as new. GPU 0's python3 has
 * two samples in the window (SM 40 and 60: the sampler reports their mean, 50). */
EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t* out,
                                                    unsigned int* count, unsigned long long last_seen) {
  CHECK(d);
  if (bare(d)) return NVML_ERROR_NOT_SUPPORTED;
  if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long t = now_us();
  nvmlProcessUtilizationSample_t table[2 + MAX_NAMED];
  unsigned n = 0;
  if (d->index == 0) {
    nvmlProcessUtilizationSample_t a = {5000001, t - 100, 40, 10, 0, 0};
    nvmlProcessUtilizationSample_t b = {5000001, t - 50, 60, 20, 0, 0};
    table[n++] = a;
    table[n++] = b;
    unsigned pids[MAX_NAMED];
    unsigned k = named_processes(pids, MAX_NAMED);
    for (unsigned i = 0; i < k; ++i) {
      nvmlProcessUtilizationSample_t c = {pids[i], t - 80, 70, 30, 0, 0};
      table[n++] = c;
    }
  } else {
    nvmlProcessUtilizationSample_t a = {5000001, t - 100, 20, 5, 1, 2};
    table[n++] = a;
  }
  unsigned fresh = 0;
  for (unsigned i = 0; i < n; ++i) fresh += table[i].timeStamp > last_seen;
  if (fresh == 0) return NVML_ERROR_NOT_FOUND;
  if (out == NULL || *count < fresh) {
    *count = fresh;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  unsigned k = 0;
  for (unsigned i = 0; i < n; ++i) {
    if (table[i].timeStamp > last_seen) out[k++] = table[i];
  }
  *count = k;
  return NVML_SUCCESS;
}

static struct nvmlEventSet_st g_event_set;

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  if (!g_initialised) return NVML_ERROR_UNINITIALIZED;
  g_event_set.xid_delivered = 0;
  g_event_set.fault_xid_delivered = 0;
  *set = &g_event_set;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set) {
  CHECK(d);
  if (set != &g_event_set) return NVML_ERROR_INVALID_ARGUMENT;
  if (bare(d)) return NVML_ERROR_NOT_SUPPORTED;
  if (types & 0x8ULL) d->events_registered = 1;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeout_ms) {
  (void)timeout_ms;
  if (!g_initialised) return NVML_ERROR_UNINITIALIZED;
  if (set != &g_event_set) return NVML_ERROR_INVALID_ARGUMENT;
  if (!set->xid_delivered && g_devices[0].events_registered) {
    set->xid_delivered = 1;
    memset(data, 0, sizeof *data);
    data->device = &g_devices[0];
    data->eventType = 0x8ULL; /* nvmlEventTypeXidCriticalError */
    data->eventData = 31;
    data->gpuInstanceId = 0xFFFFFFFFu;
    data->computeInstanceId = 0xFFFFFFFFu;
    return NVML_SUCCESS;
  }
  if (set->xid_delivered && !set->fault_xid_delivered && g_devices[0].events_registered &&
      faulty(&g_devices[0])) {
    set->fault_xid_delivered = 1;
    memset(data, 0, sizeof *data);
    data->device = &g_devices[0];
    data->eventType = 0x8ULL;
    data->eventData = 79; /* fell off the bus */
    data->gpuInstanceId = 0xFFFFFFFFu;
    data->computeInstanceId = 0xFFFFFFFFu;
    return NVML_SUCCESS;
  }
  return NVML_ERROR_TIMEOUT;
}

EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  if (set != &g_event_set) return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

/* ---- GPM ---- */

struct nvmlGpmSample_st {
  nvmlDevice_t device; /* NULL until taken */
  double taken_at;     /* CLOCK_MONOTONIC seconds */
  int gpu_instance;    /* the NVML GPU instance id sampled; -1: the whole GPU */
};
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;
typedef struct {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char *shortName, *longName, *unit;
  } metricInfo;
} nvmlGpmMetric_t;
typedef struct {
  unsigned int version, numMetrics;
  nvmlGpmSample_t sample1, sample2;
  nvmlGpmMetric_t metrics[98]; /* NVML_GPM_METRIC_MAX */
} nvmlGpmMetricsGet_t;
typedef struct {
  unsigned int version, isSupportedDevice;
} nvmlGpmSupport_t;
_Static_assert(sizeof(nvmlGpmMetric_t) == 40, "nvmlGpmMetric_t layout");

static int has_gpm(nvmlDevice_t d) {
  const char* off = getenv("EACGM_FAKE_NVML_GPM");
  if (off && strcmp(off, "0") == 0) return 0;
  return !bare(d);
}

EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t* s) {
  CHECK(d);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  if (s->version != 1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  s->isSupportedDevice = (unsigned)has_gpm(d);
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* out) {
  if (!g_initialised) return NVML_ERROR_UNINITIALIZED;
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  *out = calloc(1, sizeof **out);
  return *out ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s) {
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  free(s);
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t s) {
  CHECK(d);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  if (!has_gpm(d) || in_mig_mode(d)) return NVML_ERROR_NOT_SUPPORTED;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  s->device = d;
  s->taken_at = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
  s->gpu_instance = -1;
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t d, unsigned int gpu_instance_id, nvmlGpmSample_t s) {
  CHECK(d);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  if (!has_gpm(d) || !in_mig_mode(d)) return NVML_ERROR_NOT_SUPPORTED;
  if (mig_instance_of(gpu_instance_id) < 0) return NVML_ERROR_NOT_FOUND;
  const char* without = getenv("EACGM_FAKE_NVML_MIG_NO_GPM");
  if (without && *without && (unsigned)atoi(without) == gpu_instance_id) return NVML_ERROR_NOT_SUPPORTED;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  s->device = d;
  s->taken_at = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
  s->gpu_instance = (int)gpu_instance_id;
  return NVML_SUCCESS;
}

/* GPU i's value of metric `id` (percent, or MiB/s for traffic); NOT_SUPPORTED for the
 * links past the fourth and the metrics the fake GPUs lack (NVDEC, NVJPG, ...). */
static nvmlReturn_t gpm_value(unsigned i, unsigned id, double* v) {
  /* Each metric's value on GPU 0; `drops`: each GPU a little (5) less busy than the one before. */
  static const struct {
    unsigned id;
    double value;
    int drops;
  } metrics[] = {
      {1, 85.0, 1},      /* graphics */
      {2, 80.0, 1},      /* SM active */
      {3, 40.0, 0},      /* SM occupancy */
      {4, 5.0, 0},       /* integer */
      {5, 60.0, 1},      /* any tensor */
      {6, 0.0, 0},       /* DFMA */
      {7, 55.0, 1},      /* HMMA */
      {9, 5.0, 0},       /* IMMA */
      {10, 25.0, 0},     /* DRAM */
      {11, 1.0, 0},      /* FP64 */
      {12, 20.0, 0},     /* FP32 */
      {13, 10.0, 0},     /* FP16 */
      {20, 100.0, 0},    /* PCIe TX MiB/s */
      {21, 250.0, 0},    /* PCIe RX */
      {60, 4 * 32.0, 0}, /* NVLink RX, all links */
      {61, 4 * 64.0, 0}, /* NVLink TX */
  };
  for (size_t k = 0; k < sizeof metrics / sizeof metrics[0]; ++k) {
    if (metrics[k].id == id) {
      *v = metrics[k].value - (metrics[k].drops ? 5.0 * i : 0.0);
      return NVML_SUCCESS;
    }
  }
  if (id >= 62 && id < 62 + 2 * 4) { /* links 0-3 */
    *v = (id - 62) % 2 == 0 ? 32.0 : 64.0;
    return NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_SUPPORTED;
}

/* GPU instance k's value: GPU 0's, each instance a little less busy than the one before,
 * and no NVLink (MIG instances do not use it). */
static nvmlReturn_t gpm_instance_value(unsigned k, unsigned id, double* v) {
  if (id >= 60) return NVML_ERROR_NOT_SUPPORTED;
  const nvmlReturn_t r = gpm_value(0, id, v);
  if (r == NVML_SUCCESS && (id == 1 || id == 2 || id == 5 || id == 7)) *v -= 10.0 * (k + 1);
  return r;
}

EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* m) {
  if (!g_initialised) return NVML_ERROR_UNINITIALIZED;
  if (!m) return NVML_ERROR_INVALID_ARGUMENT;
  if (m->version != 1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (m->numMetrics > 98 || !m->sample1 || !m->sample2 || m->sample1 == m->sample2) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  /* Both taken, of one GPU, the first before the second. */
  if (!m->sample1->device || m->sample1->device != m->sample2->device ||
      m->sample1->gpu_instance != m->sample2->gpu_instance || m->sample2->taken_at <= m->sample1->taken_at) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  CHECK(m->sample1->device);
  const int instance =
      m->sample1->gpu_instance < 0 ? -1 : mig_instance_of((unsigned)m->sample1->gpu_instance);
  if (m->sample1->gpu_instance >= 0 && instance < 0) return NVML_ERROR_NOT_FOUND; /* destroyed */
  for (unsigned k = 0; k < m->numMetrics; ++k) {
    nvmlGpmMetric_t* x = &m->metrics[k];
    x->value = 0;
    x->nvmlReturn = instance >= 0 ? gpm_instance_value((unsigned)instance, x->metricId, &x->value)
                                  : gpm_value(m->sample1->device->index, x->metricId, &x->value);
    x->metricInfo.shortName = x->metricInfo.longName = x->metricInfo.unit = NULL;
  }
  return NVML_SUCCESS;
}
