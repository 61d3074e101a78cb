// Test program for the memory ledger: allocates through the CUDA driver API of the
// libcuda.so.1 named on the command line (the tests' FAKE one, whose allocations
// succeed), and on purpose leaks three allocations (1, 2 and 3 MiB), frees three
// others, frees one of them twice and makes one allocation that fails. Prints what it
// did ("leak ptr=0x... size=N", "double_free ptr=0x...", "failed ret=N") for the test
// to compare with eacgm's report.
//
// Usage: memory_leaks LIBCUDA_PATH [--wait-file PATH] [--hold-file PATH]
//   --wait-file: after the dlopen, print "ready PID" and wait until PATH exists
//   --hold-file: before exiting, print "holding" and wait until PATH exists
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void wait_for(const char* path) {
  struct stat st;
  while (stat(path, &st) != 0) usleep(2000);
}

typedef int (*init_fn)(unsigned);
typedef int (*alloc_fn)(uint64_t*, size_t);
typedef int (*alloc_async_fn)(uint64_t*, size_t, void*);
typedef int (*free_fn)(uint64_t);
typedef int (*free_async_fn)(uint64_t, void*);

#define MIB (1ull << 20)

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: memory_leaks LIBCUDA_PATH [--wait-file PATH] [--hold-file PATH]\n");
    return 2;
  }
  const char* wait_file = NULL;
  const char* hold_file = NULL;
  for (int i = 2; i + 1 < argc; ++i) {
    if (!strcmp(argv[i], "--wait-file"))
      wait_file = argv[++i];
    else if (!strcmp(argv[i], "--hold-file"))
      hold_file = argv[++i];
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  init_fn cu_init = (init_fn)dlsym(lib, "cuInit");
  alloc_fn cu_alloc = (alloc_fn)dlsym(lib, "cuMemAlloc_v2");
  alloc_async_fn cu_alloc_async = (alloc_async_fn)dlsym(lib, "cuMemAllocAsync");
  free_fn cu_free = (free_fn)dlsym(lib, "cuMemFree_v2");
  free_async_fn cu_free_async = (free_async_fn)dlsym(lib, "cuMemFreeAsync");
  if (!cu_init || !cu_alloc || !cu_alloc_async || !cu_free || !cu_free_async) {
    fprintf(stderr, "missing symbols\n");
    return 1;
  }
  if (wait_file) {
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    wait_for(wait_file);
  }
  void* stream = (void*)0x5000;
  int rc = 0;
  rc |= cu_init(0);

  // Leaked: never freed.
  uint64_t leak1 = 0, leak2 = 0, leak3 = 0;
  rc |= cu_alloc(&leak1, 1 * MIB);
  rc |= cu_alloc(&leak2, 2 * MIB);
  rc |= cu_alloc_async(&leak3, 3 * MIB, stream);
  printf("leak ptr=0x%llx size=%llu\n", (unsigned long long)leak1, 1 * MIB);
  printf("leak ptr=0x%llx size=%llu\n", (unsigned long long)leak2, 2 * MIB);
  printf("leak ptr=0x%llx size=%llu\n", (unsigned long long)leak3, 3 * MIB);

  // Freed: 4 and 6 MiB through cuMemFree_v2, 5 MiB stream-ordered.
  uint64_t a = 0, b = 0, c = 0;
  rc |= cu_alloc(&a, 4 * MIB);
  rc |= cu_free(a);
  rc |= cu_alloc_async(&b, 5 * MIB, stream);
  rc |= cu_free_async(b, stream);
  rc |= cu_alloc(&c, 6 * MIB);
  rc |= cu_free(c);
  // Freed again: a double free (the fake, unlike the driver, does not refuse it).
  rc |= cu_free(c);
  printf("double_free ptr=0x%llx\n", (unsigned long long)c);

  // Fails: the fake has no 2 TiB to give.
  uint64_t huge = 0;
  int failed = cu_alloc(&huge, 2ull << 40);
  printf("failed ret=%d\n", failed);
  printf("rc=%d\n", rc);
  fflush(stdout);
  if (hold_file) {
    printf("holding\n");
    fflush(stdout);
    wait_for(hold_file);
  }
  return rc == 0 && failed != 0 ? 0 : 1;
}
