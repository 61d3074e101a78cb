// Symbol-table load of a large library (tens of thousands of symbols): the part of
// start-up that grows with library size. Uses the first library present of the list.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "probe/elf_symbols.h"

namespace {

const char* large_library() {
  for (const char* p :
       {"/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
        "/usr/local/cuda/lib64/libcublasLt.so.13"}) {
    if (std::filesystem::exists(p)) return p;
  }
  return nullptr;
}

void BM_LoadLargeSymbolTable(benchmark::State& state) {
  const char* path = large_library();
  if (path == nullptr) {
    state.SkipWithError("no large library on this machine");
    return;
  }
  std::size_t symbols = 0;
  for (auto _ : state) {
    auto t = eacgm::probe::ElfSymbolTable::load(path);
    if (!t) {
      state.SkipWithError(t.error().c_str());
      return;
    }
    symbols = t->symbols().size();
    benchmark::DoNotOptimize(symbols);
  }
  state.SetLabel(path);
  state.counters["symbols"] = static_cast<double>(symbols);
}
BENCHMARK(BM_LoadLargeSymbolTable)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
