// Test program: loads a libcudart with dlopen late (after the tracer is running),
// from a path the loader cache does not know (as in a conda/venv install), then waits
// for the go file and calls cudaMalloc/cudaFree through it.
//
// Usage: cuda_dlopen LIBCUDART_PATH GO_FILE [--go-before-load]
//   GO_FILE "-": no pause, call at once. --go-before-load: wait for GO_FILE before the
//   dlopen instead, then call at once (a running process, traced by --pid, that loads
//   a library and calls it straight away).
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <string_view>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: cuda_dlopen LIBCUDART_PATH GO_FILE\n");
    return 2;
  }
  const bool go_before = argc > 3 && std::string_view(argv[3]) == "--go-before-load";
  const bool at_once = go_before || std::string_view(argv[2]) == "-";
  std::printf("started %d\n", getpid());
  std::fflush(stdout);
  struct stat st;
  while (go_before && stat(argv[2], &st) != 0) usleep(2000);
  if (!at_once) usleep(300000);
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 3;
  }
  using MallocFn = int (*)(void**, std::size_t);
  using FreeFn = int (*)(void*);
  auto cuda_malloc = reinterpret_cast<MallocFn>(dlsym(lib, "cudaMalloc"));
  auto cuda_free = reinterpret_cast<FreeFn>(dlsym(lib, "cudaFree"));
  if (!cuda_malloc || !cuda_free) return 4;
  std::printf("loaded\n");
  std::fflush(stdout);
  while (!at_once && stat(argv[2], &st) != 0) usleep(2000);
  void* p = nullptr;
  std::printf("cudaMalloc ret=%d\n", cuda_malloc(&p, 12345));
  std::printf("cudaFree ret=%d\n", cuda_free(p));
  std::fflush(stdout);
  return 0;
}
