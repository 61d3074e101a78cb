// Tight-loop load on the driver API for the always-on tests and benchmarks: T threads
// each make N rounds of cuLaunchKernel (handle 0xf00d + thread), cuMemsetD32Async
// (1000 words) and cuStreamSynchronize on the toolkit's stub libcuda, whose functions
// only return an error: the calls still enter libcuda, so the probes fire. Prints the
// mean cost per call. `--work-us W`: each round also spins W microseconds first, the
// work of a thread that launches between computations (the probes' share of its time
// is then small, as in a training loop's launching thread). `--burst B --idle-us I`: a
// GPU-bound step instead: each round launches and memsets B times in a row, then
// synchronises and spins I microseconds (the wait for the GPU), so the calls come in
// bursts with quiet gaps between them. `--step-log PATH`: the first thread's rounds'
// start and end (CLOCK_MONOTONIC nanoseconds), a line "start_ns end_ns" each, written at
// the end (bench/gpu/window_cost.py reads them). `--touch-kib K`: before each launch and
// memset, 64 reads at random places in a K KiB buffer of the thread's own, so that the
// caches hold little of what the probes' path touches (bench/always_on_floor.sh).
// `--warm-up W`: W rounds before those, without the synchronisation (a training
// loop's warm-up steps, which launch without being timed), each spinning I
// microseconds too. `--sleep-us S`: each round ends with S microseconds asleep (many
// quiet processes at little CPU: the web UI's bench runs 200).
//
// Usage: driver_loop [--threads T] [--iters N] [--work-us W] [--burst B] [--idle-us I]
//                    [--touch-kib K] [--warm-up W] [--sleep-us S] [--wait-file PATH]
//                    [--step-log PATH]
#include <cuda.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  int threads = 1;
  long iters = 100000;
  const char* wait_file = nullptr;
  const char* step_log = nullptr;
  long work_us = 0;
  long burst = 1;
  long idle_us = 0;
  long touch_kib = 0;
  long warm_up = 0;
  long sleep_us = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) {
      iters = std::atol(argv[++i]);
    } else if (!std::strcmp(argv[i], "--work-us") && i + 1 < argc) {
      work_us = std::atol(argv[++i]);
    } else if (!std::strcmp(argv[i], "--burst") && i + 1 < argc) {
      burst = std::max(1L, std::atol(argv[++i]));
    } else if (!std::strcmp(argv[i], "--idle-us") && i + 1 < argc) {
      idle_us = std::atol(argv[++i]);
    } else if (!std::strcmp(argv[i], "--touch-kib") && i + 1 < argc) {
      touch_kib = std::max(0L, std::atol(argv[++i]));
    } else if (!std::strcmp(argv[i], "--warm-up") && i + 1 < argc) {
      warm_up = std::max(0L, std::atol(argv[++i]));
    } else if (!std::strcmp(argv[i], "--sleep-us") && i + 1 < argc) {
      sleep_us = std::max(0L, std::atol(argv[++i]));
    } else if (!std::strcmp(argv[i], "--wait-file") && i + 1 < argc) {
      wait_file = argv[++i];
    } else if (!std::strcmp(argv[i], "--step-log") && i + 1 < argc) {
      step_log = argv[++i];
    }
  }
  if (wait_file) {
    std::printf("ready %d\n", getpid());
    std::fflush(stdout);
    struct stat st;
    while (stat(wait_file, &st) != 0) usleep(1000);
  }
  std::atomic<bool> go{false};
  std::vector<double> ns(static_cast<std::size_t>(threads));
  std::vector<std::pair<long long, long long>> steps;  // the first thread's rounds
  if (step_log) steps.reserve(static_cast<std::size_t>(iters));
  const auto mono_ns = [] {
    return static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      std::chrono::steady_clock::now().time_since_epoch())
                                      .count());
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      while (!go.load()) {
      }
      auto f = reinterpret_cast<CUfunction>(static_cast<std::uintptr_t>(0xf00d + t));
      auto s = reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(0x5000));
      void* params[] = {nullptr};
      auto t0 = std::chrono::steady_clock::now();
      const auto spin = [](long us) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
        while (std::chrono::steady_clock::now() < until) {
        }
      };
      const bool log_steps = step_log != nullptr && t == 0;
      // 64 reads per call at random lines of the buffer (fixed sequences, made before).
      constexpr std::size_t kReads = 64;
      const std::size_t lines = static_cast<std::size_t>(touch_kib) * 1024 / 64;
      std::vector<char> buffer(std::max<std::size_t>(lines, 1) * 64, 1);
      std::vector<std::uint32_t> at(lines > 0 ? kReads * 64 : 0);
      std::uint32_t seed = 12345u + static_cast<std::uint32_t>(t);
      for (auto& a : at) {
        seed = seed * 1103515245u + 12345u;
        a = static_cast<std::uint32_t>((seed >> 8) % lines);
      }
      volatile long sink = 0;
      std::size_t next = 0;
      const auto touch = [&] {
        if (at.empty()) return;
        long sum = 0;
        for (std::size_t j = 0; j < kReads; ++j) sum += buffer[static_cast<std::size_t>(at[next + j]) * 64];
        next = (next + kReads) % at.size();
        sink = sink + sum;
      };
      for (long i = 0; i < warm_up; ++i) {
        for (long b = 0; b < burst; ++b) {
          cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, nullptr);
          cuMemsetD32Async(0x1000, 0, 1000, s);
        }
        if (idle_us > 0) spin(idle_us);
      }
      t0 = std::chrono::steady_clock::now();  // the rounds' cost per call, without the warm-up
      for (long i = 0; i < iters; ++i) {
        const long long began = log_steps ? mono_ns() : 0;
        if (work_us > 0) spin(work_us);
        for (long b = 0; b < burst; ++b) {
          touch();
          cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, nullptr);
          touch();
          cuMemsetD32Async(0x1000, 0, 1000, s);
        }
        cuStreamSynchronize(s);
        if (idle_us > 0) spin(idle_us);
        if (sleep_us > 0) usleep(static_cast<useconds_t>(sleep_us));
        if (log_steps) steps.emplace_back(began, mono_ns());
      }
      const auto t1 = std::chrono::steady_clock::now();
      ns[static_cast<std::size_t>(t)] = std::chrono::duration<double, std::nano>(t1 - t0).count() /
                                        (static_cast<double>(2 * burst + 1) * static_cast<double>(iters));
    });
  }
  go.store(true);
  for (auto& th : pool) th.join();
  if (step_log) {
    std::FILE* f = std::fopen(step_log, "we");
    if (!f) {
      std::perror(step_log);
      return 1;
    }
    for (const auto& [a, b] : steps) std::fprintf(f, "%lld %lld\n", a, b);
    std::fclose(f);
  }
  double mean = 0;
  for (double v : ns) mean += v / static_cast<double>(threads);
  std::printf("threads=%d iters=%ld ns_per_call=%.1f\n", threads, iters, mean);
  return 0;
}
