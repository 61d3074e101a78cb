// The captured program of the capture tests: a loop of cuLaunchKernel and
// cuStreamSynchronize on the toolkit's stub libcuda (the calls fail, the probes fire)
// for `--seconds S`, a short sleep between rounds, that logs each call it made:
// "<function> <before_ns> <after_ns>" (CLOCK_MONOTONIC, read just before and just after
// the call) to `--log PATH` at the end. Prints "ready PID" and waits for `--wait-file`.
//
// Usage: capture_calls --seconds S --log PATH [--wait-file PATH] [--sleep-us U]
#include <cuda.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

std::uint64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

struct Logged {
  char function;  // 'L' cuLaunchKernel, 'S' cuStreamSynchronize
  std::uint64_t before, after;
};

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  const char* log_path = nullptr;
  const char* wait_file = nullptr;
  long sleep_us = 200;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--log") && i + 1 < argc) {
      log_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--wait-file") && i + 1 < argc) {
      wait_file = argv[++i];
    } else if (!std::strcmp(argv[i], "--sleep-us") && i + 1 < argc) {
      sleep_us = std::atol(argv[++i]);
    } else {
      std::fprintf(stderr, "capture_calls: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (log_path == nullptr) {
    std::fprintf(stderr, "capture_calls: --log PATH is required\n");
    return 2;
  }
  std::printf("ready %d\n", getpid());
  std::fflush(stdout);
  if (wait_file) {
    struct stat st;
    while (stat(wait_file, &st) != 0) usleep(1000);
  }
  auto f = reinterpret_cast<CUfunction>(static_cast<std::uintptr_t>(0xcafe));
  auto s = reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(0x5000));
  void* params[] = {nullptr};
  std::vector<Logged> calls;
  calls.reserve(static_cast<std::size_t>(seconds * 2e6 / static_cast<double>(sleep_us + 1)) + 1024);
  const std::uint64_t end = mono_ns() + static_cast<std::uint64_t>(seconds * 1e9);
  while (mono_ns() < end) {
    std::uint64_t t0 = mono_ns();
    cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, nullptr);
    std::uint64_t t1 = mono_ns();
    calls.push_back({'L', t0, t1});
    t0 = mono_ns();
    cuStreamSynchronize(s);
    t1 = mono_ns();
    calls.push_back({'S', t0, t1});
    if (sleep_us > 0) usleep(static_cast<useconds_t>(sleep_us));
  }
  FILE* out = std::fopen(log_path, "w");
  if (out == nullptr) {
    std::perror(log_path);
    return 1;
  }
  for (const auto& c : calls) {
    std::fprintf(out, "%s %llu %llu\n", c.function == 'L' ? "cuLaunchKernel" : "cuStreamSynchronize",
                 static_cast<unsigned long long>(c.before), static_cast<unsigned long long>(c.after));
  }
  std::fclose(out);
  std::printf("calls %zu\n", calls.size());
  return 0;
}
