/* CPU and wall time of single NVML queries on GPU 0, to choose how the sampler reads
 * expensive fields. Build: cc -O2 -o nvml_query_cost nvml_query_cost.c -ldl
 * Run on a machine with the NVIDIA driver: ./nvml_query_cost [reps] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int ret_t;
typedef void* dev_t_;
typedef struct {
  unsigned int fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  ret_t nvmlReturn;
  union {
    double d;
    unsigned int ui;
    unsigned long long ull;
    long long sll;
  } value;
} field_t;

static ret_t (*init)(void);
static ret_t (*get_handle)(unsigned, dev_t_*);
static ret_t (*energy)(dev_t_, unsigned long long*);
static ret_t (*replay)(dev_t_, unsigned*);
static ret_t (*power)(dev_t_, unsigned*);
static ret_t (*fields)(dev_t_, int, field_t*);
static dev_t_ dev;

static double now(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

enum { kEnergy, kEnergyField, kEnergyTempField, kReplay, kReplayField, kPower };
static const char* names[] = {"nvmlDeviceGetTotalEnergyConsumption",
                              "GetFieldValues{83 energy}",
                              "GetFieldValues{83 energy, 82 memtemp}",
                              "nvmlDeviceGetPcieReplayCounter",
                              "GetFieldValues{94 replay}",
                              "nvmlDeviceGetPowerUsage"};

static int call(int which, char* value, size_t n) {
  unsigned long long ull = 0;
  unsigned u = 0;
  field_t fv[2];
  memset(fv, 0, sizeof(fv));
  ret_t r = 0;
  switch (which) {
    case kEnergy:
      r = energy(dev, &ull);
      snprintf(value, n, "%llu mJ", ull);
      break;
    case kEnergyField:
    case kEnergyTempField:
      fv[0].fieldId = 83;
      fv[1].fieldId = 82;
      r = fields(dev, which == kEnergyField ? 1 : 2, fv);
      snprintf(value, n, "%llu mJ (ret %d)", fv[0].value.ull, fv[0].nvmlReturn);
      break;
    case kReplay:
      r = replay(dev, &u);
      snprintf(value, n, "%u", u);
      break;
    case kReplayField:
      fv[0].fieldId = 94;
      r = fields(dev, 1, fv);
      snprintf(value, n, "%llu (ret %d, type %d)", fv[0].value.ull, fv[0].nvmlReturn, fv[0].valueType);
      break;
    case kPower:
      r = power(dev, &u);
      snprintf(value, n, "%u mW", u);
      break;
  }
  return r;
}

int main(int argc, char** argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 15;
  if (reps < 1 || reps > 1000) reps = 15;
  void* dl = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!dl) {
    fprintf(stderr, "no NVML: %s\n", dlerror());
    return 2;
  }
  init = dlsym(dl, "nvmlInit_v2");
  get_handle = dlsym(dl, "nvmlDeviceGetHandleByIndex_v2");
  energy = dlsym(dl, "nvmlDeviceGetTotalEnergyConsumption");
  replay = dlsym(dl, "nvmlDeviceGetPcieReplayCounter");
  power = dlsym(dl, "nvmlDeviceGetPowerUsage");
  fields = dlsym(dl, "nvmlDeviceGetFieldValues");
  if (!init || !get_handle || !energy || !replay || !power || !fields || init() != 0 ||
      get_handle(0, &dev) != 0) {
    fprintf(stderr, "NVML init failed\n");
    return 2;
  }
  printf("%-40s %10s %10s %10s %10s  %s\n", "query", "cpu_med_us", "cpu_max_us", "wall_med", "wall_max",
         "value");
  for (int w = 0; w <= kPower; ++w) {
    double cpu[1000], wall[1000];
    char value[96] = "";
    int r = 0;
    for (int i = 0; i < reps; ++i) {
      double c0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
      r = call(w, value, sizeof(value));
      cpu[i] = now(CLOCK_THREAD_CPUTIME_ID) - c0;
      wall[i] = now(CLOCK_MONOTONIC) - w0;
    }
    double cmax = 0, wmax = 0;
    for (int i = 0; i < reps; ++i) {
      if (cpu[i] > cmax) cmax = cpu[i];
      if (wall[i] > wmax) wmax = wall[i];
    }
    qsort(cpu, reps, sizeof(double), cmp);
    qsort(wall, reps, sizeof(double), cmp);
    printf("%-40s %10.1f %10.1f %10.1f %10.1f  %s ret=%d\n", names[w], cpu[reps / 2], cmax, wall[reps / 2],
           wmax, value, r);
  }
  return 0;
}
