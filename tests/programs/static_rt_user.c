// Loads the shared library with a static CUDA runtime (libeacgm_static_rt.so, next to
// this program) and runs its work against the libcuda.so.1 named on the command line.
// Usage: static_rt_user LIBRARY_PATH LIBCUDA_PATH
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: static_rt_user LIBRARY_PATH LIBCUDA_PATH\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (lib == NULL) {
    fprintf(stderr, "static_rt_user: %s\n", dlerror());
    return 2;
  }
  int (*work)(const char*) = (int (*)(const char*))dlsym(lib, "static_rt_work");
  if (work == NULL) return 2;
  int rc = work(argv[2]);
  fflush(stdout);
  return rc;
}
