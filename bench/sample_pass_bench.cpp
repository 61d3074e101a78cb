// CPU cost of one GPU sampling pass (device metrics, and device + process metrics), and
// of a round of the expensive reads that the device sampler makes off the pass.
// The budget is 5 ms of CPU per pass over all GPUs; the fake NVML isolates eacgm's own cost.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "sample/gpu_sampler.h"

namespace {

// The fake unless EACGM_BENCH_REAL_NVML=1 asks for the driver's library (on a GPU
// machine) or EACGM_NVML_LIBRARY names one.
std::string choose_library() {
  const char* real = std::getenv("EACGM_BENCH_REAL_NVML");
  if (real && std::string(real) == "1") return "";
  const char* named = std::getenv(eacgm::sample::nvml::kLibraryEnv);
  return named != nullptr ? named : EACGM_FAKE_NVML_PATH;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void run_pass(benchmark::State& state, bool processes) {
  eacgm::sample::GpuSamplerOptions options;
  options.processes = processes;
  options.nvml_library = choose_library();
  auto sampler = eacgm::sample::GpuSampler::open(options);
  if (!sampler) {
    state.SkipWithError(sampler.error().c_str());
    return;
  }
  std::size_t devices = 0;
  const double cpu0 = thread_cpu_seconds();
  for (auto _ : state) {
    eacgm::GpuSnapshot snap = (*sampler)->sample();
    devices = snap.devices.size();
    benchmark::DoNotOptimize(snap);
  }
  const double cpu = thread_cpu_seconds() - cpu0;
  state.counters["gpus"] = static_cast<double>(devices);
  state.counters["cpu_us_per_pass"] = cpu * 1e6 / static_cast<double>(state.iterations());
  // The expensive fields are read off the pass by the device sampler's own thread (the
  // first round while the sampler is opened): their cost per round, apart.
  const auto rounds = (*sampler)->slow_read_rounds();
  state.counters["slow_rounds"] = static_cast<double>(rounds);
  if (rounds > 0) {
    const double slow_cpu = std::chrono::duration<double>((*sampler)->slow_read_cpu_time()).count();
    state.counters["slow_cpu_us_per_round"] = slow_cpu * 1e6 / static_cast<double>(rounds);
  }
}

void BM_DevicePass(benchmark::State& state) { run_pass(state, false); }
void BM_DeviceAndProcessPass(benchmark::State& state) { run_pass(state, true); }

}  // namespace

BENCHMARK(BM_DevicePass)->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime();
BENCHMARK(BM_DeviceAndProcessPass)->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime();

BENCHMARK_MAIN();
