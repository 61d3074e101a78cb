// What each driver call of the hook's timed-launch path (govern/hook/gpu_timer.cpp) costs
// when, as in a program timed at its budget, it runs once every few milliseconds: after a
// 2 ms sleep, and after 8 MiB of other memory traffic. Per call, the mean over ROUNDS
// (default 300): cuStreamIsCapturing, cuCtxGetCurrent, two cuEventCreate (what a launch paid
// when its context's pool was empty), cuEventRecord of a just-made event, of one made and
// recorded once on another stream (as the hook's timing thread stocks its pools) and of a
// reused one, cuEventQuery, and a gettid system call. On a GPU machine; needs only
// libcuda.so.1.
//
// Usage: event_call_cost [ROUNDS]
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int (*Fn)();  // every driver call here returns a CUresult (0: success)

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static Fn must(void* lib, const char* name) {
  Fn f = (Fn)(uintptr_t)dlsym(lib, name);
  if (f == NULL) {
    fprintf(stderr, "event_call_cost: libcuda lacks %s\n", name);
    exit(1);
  }
  return f;
}

static volatile char traffic[8 << 20];

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 300;
  if (rounds <= 0) {
    fprintf(stderr, "usage: event_call_cost [ROUNDS]\n");
    return 2;
  }
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == NULL) {
    fprintf(stderr, "event_call_cost: %s\n", dlerror());
    return 1;
  }
  Fn init = must(lib, "cuInit"), device_get = must(lib, "cuDeviceGet"),
     retain = must(lib, "cuDevicePrimaryCtxRetain"), set_current = must(lib, "cuCtxSetCurrent"),
     get_current = must(lib, "cuCtxGetCurrent"), create = must(lib, "cuEventCreate"),
     record = must(lib, "cuEventRecord"), query = must(lib, "cuEventQuery"),
     capturing = must(lib, "cuStreamIsCapturing"), sync = must(lib, "cuCtxSynchronize"),
     stream_create = must(lib, "cuStreamCreate");
  int device = 0;
  void* ctx = NULL;
  if (init(0) != 0 || device_get(&device, 0) != 0 || retain(&ctx, device) != 0 || set_current(ctx) != 0) {
    fprintf(stderr, "event_call_cost: no CUDA context\n");
    return 1;
  }
  void* reused = NULL;
  void* other = NULL;
  if (create(&reused, 0) != 0 || stream_create(&other, 1) != 0) return 1;  // CU_STREAM_NON_BLOCKING
  enum { kCapturing, kCurrent, kCreate2, kRecordNew, kRecordWarmed, kRecordReused, kQuery, kGettid, kParts };
  static const char* const names[kParts] = {
      "cuStreamIsCapturing",    "cuCtxGetCurrent",        "2 x cuEventCreate", "cuEventRecord (new)",
      "cuEventRecord (warmed)", "cuEventRecord (reused)", "cuEventQuery",      "gettid"};
  for (int mode = 0; mode < 2; ++mode) {
    double sum[kParts] = {0};
    for (int r = 0; r < rounds; ++r) {
      if (mode == 0) {
        struct timespec nap = {0, 2000000};
        nanosleep(&nap, NULL);
      } else {
        for (int i = 0; i < (int)sizeof traffic; i += 64) traffic[i]++;
      }
      void *got = NULL, *start = NULL, *end = NULL, *warmed = NULL;
      int status = 0;
      if (create(&warmed, 0) != 0 || record(warmed, other) != 0) return 1;
      uint64_t t[kParts + 1];
      t[0] = now_ns();
      capturing(NULL, &status);
      t[1] = now_ns();
      get_current(&got);
      t[2] = now_ns();
      create(&start, 0);
      create(&end, 0);
      t[3] = now_ns();
      record(start, NULL);
      t[4] = now_ns();
      record(warmed, NULL);
      t[5] = now_ns();
      record(reused, NULL);
      t[6] = now_ns();
      query(start);
      t[7] = now_ns();
      syscall(SYS_gettid);
      t[8] = now_ns();
      for (int p = 0; p < kParts; ++p) sum[p] += (double)(t[p + 1] - t[p]);
      record(end, NULL);
    }
    sync();
    printf("%s:", mode == 0 ? "after a 2 ms sleep" : "after 8 MiB of other traffic");
    for (int p = 0; p < kParts; ++p)
      printf(" %s %.0f ns%s", names[p], sum[p] / rounds, p + 1 < kParts ? "," : "\n");
  }
  return 0;
}
