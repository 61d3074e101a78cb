// The daemon's Python profile filled to its default caps with the worst kind of samples
// (every function, line and stack distinct: 16 processes, 5,000 functions, stacks 5 to
// 30 frames deep, 300 s of samples), then read out as the snapshot does (hot_spots);
// with the heap the profile holds and the heap its read-out holds.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "analysis/python_profile.h"

namespace {

using eacgm::PythonCode;
using eacgm::PythonStack;
using eacgm::analysis::PythonProfile;

std::size_t heap_bytes() { return mallinfo2().uordblks; }

void fill(PythonProfile& p) {
  std::vector<std::shared_ptr<const PythonCode>> codes;
  codes.reserve(5000);
  for (int i = 0; i < 5000; ++i) {
    codes.push_back(std::make_shared<const PythonCode>(
        PythonCode{"function_" + std::to_string(i), "/srv/app/module_" + std::to_string(i % 50) + ".py", i}));
  }
  std::mt19937 rng(1);
  PythonStack s;
  s.comm = "python3";
  for (std::uint64_t n = 0; n < 2'000'000; ++n) {
    s.pid = 100 + rng() % 16;
    s.tid = s.pid;
    s.ts_ns = n * 150'000;  // 300 s
    s.frames.resize(5 + rng() % 26);
    for (auto& f : s.frames) f = {codes[rng() % codes.size()], static_cast<int>(rng() % 100)};
    p.add(s);
  }
}

void BM_PythonProfileReadOut(benchmark::State& state) {
  // [python]'s defaults: a 300 s window, 100,000 rows, 20,000 stacks.
  const std::size_t before = heap_bytes();
  PythonProfile p(99, eacgm::analysis::python_profile_limits(300, 100000, 20000, true));
  fill(p);
  const std::size_t held = heap_bytes() - before;
  std::size_t out = 0;
  for (auto _ : state) {
    const std::size_t start = heap_bytes();
    auto hot = p.hot_spots();
    out = heap_bytes() - start;
    benchmark::DoNotOptimize(hot);
  }
  state.counters["rows"] = static_cast<double>(p.rows());
  state.counters["stacks"] = static_cast<double>(p.stacks());
  state.counters["profile_MiB"] = static_cast<double>(held) / (1 << 20);
  state.counters["read_out_MiB"] = static_cast<double>(out) / (1 << 20);
}
BENCHMARK(BM_PythonProfileReadOut)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

BENCHMARK_MAIN();
