/* Test program for run-time probe control and library churn.
 *
 *   churn_calls phases LIB CALLS PHASES DIR
 *     waits for DIR/start, dlopens LIB, prints "loaded"; then for each phase p waits
 *     for DIR/go<p>, calls churn_work CALLS times and prints "phase <p> done".
 *   churn_calls churn LIB ITERATIONS DIR
 *     waits for DIR/start; then ITERATIONS times: copies LIB to DIR/libeacgm_churn-<i>.so,
 *     dlopens the copy, calls its churn_work once, dlcloses it and unlinks it; prints
 *     "iteration <i>" after each and "churned <ITERATIONS>" at the end. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*work_fn)(int);

static void wait_for(const char *dir, const char *name) {
  char path[4096];
  struct stat st;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  while (stat(path, &st) != 0) usleep(1000);
}

static int copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb");
  if (!in) return -1;
  FILE *out = fopen(to, "wb");
  if (!out) {
    fclose(in);
    return -1;
  }
  char buf[65536];
  size_t n;
  int rc = 0;
  while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
    if (fwrite(buf, 1, n, out) != n) rc = -1;
  }
  fclose(in);
  if (fclose(out) != 0) rc = -1;
  return rc;
}

static work_fn load(const char *path, void **handle) {
  *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!*handle) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    exit(2);
  }
  work_fn fn = (work_fn)dlsym(*handle, "churn_work");
  if (!fn) {
    fprintf(stderr, "dlsym churn_work: %s\n", dlerror());
    exit(2);
  }
  return fn;
}

static int phases(const char *lib, int calls, int nphases, const char *dir) {
  void *handle;
  wait_for(dir, "start");
  work_fn fn = load(lib, &handle);
  printf("loaded\n");
  fflush(stdout);
  long sum = 0;
  for (int p = 0; p < nphases; ++p) {
    char go[32];
    snprintf(go, sizeof(go), "go%d", p);
    wait_for(dir, go);
    for (int k = 0; k < calls; ++k) sum += fn(k);
    printf("phase %d done\n", p);
    fflush(stdout);
  }
  printf("sum=%ld\n", sum);
  dlclose(handle);
  return 0;
}

static int churn(const char *lib, int iterations, const char *dir) {
  wait_for(dir, "start");
  long sum = 0;
  for (int i = 0; i < iterations; ++i) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/libeacgm_churn-%d.so", dir, i);
    if (copy_file(lib, path) != 0) {
      fprintf(stderr, "cannot copy %s to %s\n", lib, path);
      return 2;
    }
    void *handle;
    work_fn fn = load(path, &handle);
    sum += fn(i);
    dlclose(handle);
    unlink(path);
    printf("iteration %d\n", i);
    fflush(stdout);
    usleep(1000);
  }
  printf("churned %d sum=%ld\n", iterations, sum);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 6 && !strcmp(argv[1], "phases")) return phases(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5]);
  if (argc == 5 && !strcmp(argv[1], "churn")) return churn(argv[2], atoi(argv[3]), argv[4]);
  fprintf(stderr, "usage: churn_calls phases LIB CALLS PHASES DIR | churn LIB ITERATIONS DIR\n");
  return 64;
}
