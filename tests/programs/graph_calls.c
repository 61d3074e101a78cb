// Test program for GPU work counting, CUDA graphs and long kernel names, through the
// CUDA driver API of the libcuda.so.1 named on the command line (the tests' FAKE one,
// whose calls succeed; nothing runs on a GPU).
//
// It names two kernels with cuModuleGetFunction: one with a 200-byte name given in a
// heap buffer freed right after the call (the allocator then writes its free-list links
// over the buffer's first bytes), one short. Then:
//   stream 0x1000: 3 launches of the long kernel, memsets of 1024 (D32, async), 100 (D8)
//                  and 64 bytes (D2D16: 8 x 4 elements of 2 bytes), a 4096-byte HtoD copy;
//   no stream:     a 512-byte DtoH copy;
//   stream 0x2000: captured: 2 launches of the short kernel, 1 of the long one, a 256-byte
//                  memset (D32 of 64), a 128-byte HtoD copy; the graph is instantiated
//   stream 0x3000: the graph launched 10 times.
// Prints "long_name=NAME" and "NAME ret=N" lines for the test to compare with.
//
// Usage: graph_calls LIBCUDA_PATH [--hold-file PATH]
//   --hold-file: before exiting, print "holding" and wait until PATH exists
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*get_function_fn)(void**, void*, const char*);
typedef int (*launch_fn)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                         void**, void**);
typedef int (*memset_d32_async_fn)(uint64_t, unsigned, size_t, void*);
typedef int (*memset_d8_fn)(uint64_t, unsigned char, size_t);
typedef int (*memset_d2d16_async_fn)(uint64_t, size_t, unsigned short, size_t, size_t, void*);
typedef int (*htod_async_fn)(uint64_t, const void*, size_t, void*);
typedef int (*dtoh_fn)(void*, uint64_t, size_t);
typedef int (*begin_capture_fn)(void*, int);
typedef int (*end_capture_fn)(void*, void**);
typedef int (*instantiate_fn)(void**, void*, unsigned long long);
typedef int (*graph_launch_fn)(void*, void*);
typedef int (*destroy_fn)(void*);

static void* must(void* lib, const char* name) {
  void* f = dlsym(lib, name);
  if (f == NULL) {
    fprintf(stderr, "graph_calls: %s missing from the libcuda given\n", name);
    exit(2);
  }
  return f;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: graph_calls LIBCUDA_PATH [--hold-file PATH]\n");
    return 2;
  }
  const char* hold_file = argc > 3 && strcmp(argv[2], "--hold-file") == 0 ? argv[3] : NULL;
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (lib == NULL) {
    fprintf(stderr, "graph_calls: %s\n", dlerror());
    return 2;
  }
  get_function_fn get_function = (get_function_fn)must(lib, "cuModuleGetFunction");
  launch_fn launch = (launch_fn)must(lib, "cuLaunchKernel");
  memset_d32_async_fn memset_d32 = (memset_d32_async_fn)must(lib, "cuMemsetD32Async");
  memset_d8_fn memset_d8 = (memset_d8_fn)must(lib, "cuMemsetD8_v2");
  memset_d2d16_async_fn memset_2d = (memset_d2d16_async_fn)must(lib, "cuMemsetD2D16Async");
  htod_async_fn htod = (htod_async_fn)must(lib, "cuMemcpyHtoDAsync_v2");
  dtoh_fn dtoh = (dtoh_fn)must(lib, "cuMemcpyDtoH_v2");
  begin_capture_fn begin = (begin_capture_fn)must(lib, "cuStreamBeginCapture_v2");
  end_capture_fn end = (end_capture_fn)must(lib, "cuStreamEndCapture");
  instantiate_fn instantiate = (instantiate_fn)must(lib, "cuGraphInstantiateWithFlags");
  graph_launch_fn graph_launch = (graph_launch_fn)must(lib, "cuGraphLaunch");
  destroy_fn exec_destroy = (destroy_fn)must(lib, "cuGraphExecDestroy");
  destroy_fn graph_destroy = (destroy_fn)must(lib, "cuGraphDestroy");

  // A 200-byte name (Triton's fused kernels are this long) in a buffer freed at once:
  // its first bytes are the allocator's from then on.
  char* name = malloc(201);
  const char* part = "triton_red_fused_add_native_layer_norm_native_layer_norm_backward_";
  for (size_t i = 0; i < 200; ++i) name[i] = part[i % strlen(part)];
  name[200] = '\0';
  printf("long_name=%s\n", name);
  void* long_kernel = NULL;
  void* short_kernel = NULL;
  void* module = (void*)0x4d00;
  printf("cuModuleGetFunction ret=%d\n", get_function(&long_kernel, module, name));
  free(name);
  printf("cuModuleGetFunction ret=%d\n", get_function(&short_kernel, module, "short_kernel"));

  void* s1 = (void*)0x1000;
  void* s2 = (void*)0x2000;
  void* s3 = (void*)0x3000;
  static char host[4096];
  for (int i = 0; i < 3; ++i)
    printf("cuLaunchKernel ret=%d\n", launch(long_kernel, 4, 1, 1, 128, 1, 1, 0, s1, NULL, NULL));
  printf("cuMemsetD32Async ret=%d\n", memset_d32(0x7e0000000000ull, 0, 256, s1));
  printf("cuMemsetD8_v2 ret=%d\n", memset_d8(0x7e0000000000ull, 1, 100));
  printf("cuMemsetD2D16Async ret=%d\n", memset_2d(0x7e0000000000ull, 64, 2, 8, 4, s1));
  printf("cuMemcpyHtoDAsync_v2 ret=%d\n", htod(0x7e0000000000ull, host, 4096, s1));
  printf("cuMemcpyDtoH_v2 ret=%d\n", dtoh(host, 0x7e0000000000ull, 512));

  void* graph = NULL;
  void* exec = NULL;
  printf("cuStreamBeginCapture_v2 ret=%d\n", begin(s2, 0));
  for (int i = 0; i < 2; ++i)
    printf("cuLaunchKernel ret=%d\n", launch(short_kernel, 1, 1, 1, 32, 1, 1, 0, s2, NULL, NULL));
  printf("cuLaunchKernel ret=%d\n", launch(long_kernel, 2, 1, 1, 64, 1, 1, 0, s2, NULL, NULL));
  printf("cuMemsetD32Async ret=%d\n", memset_d32(0x7e0000000000ull, 0, 64, s2));
  printf("cuMemcpyHtoDAsync_v2 ret=%d\n", htod(0x7e0000000000ull, host, 128, s2));
  printf("cuStreamEndCapture ret=%d\n", end(s2, &graph));
  printf("cuGraphInstantiateWithFlags ret=%d\n", instantiate(&exec, graph, 0));
  for (int i = 0; i < 10; ++i) printf("cuGraphLaunch ret=%d\n", graph_launch(exec, s3));
  printf("cuGraphExecDestroy ret=%d\n", exec_destroy(exec));
  printf("cuGraphDestroy ret=%d\n", graph_destroy(graph));
  fflush(stdout);
  if (hold_file != NULL) {
    printf("holding\n");
    fflush(stdout);
    struct stat st;
    while (stat(hold_file, &st) != 0) usleep(2000);
  }
  return 0;
}
