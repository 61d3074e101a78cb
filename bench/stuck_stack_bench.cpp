// What reading one stuck thread's Python stack costs (BENCHMARKS.md, "Stuck threads' Python
// stacks"): a real CPython child (EACGM_BENCH_PYTHON, default python3) sleeps N Python
// frames deep, off the CPU as a thread in a collective is; its interpreter is found as the
// agent finds it (PythonProcessFinder), and each iteration reads its main thread's stack
// from its memory (read_thread_stack over process_vm_readv): the walk alone (BM_Walk), the
// walk and the naming by a decoder that knows the code objects already (BM_WalkAndName, the
// usual case: the sampler has seen them) or by a new decoder that reads each one
// (BM_WalkAndNameCold). The agent reads each stuck call once, at most 16 a scan.
#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "ingest/python_process.h"
#include "ingest/python_stacks.h"
#include "ingest/python_thread_stack.h"

namespace {

using namespace eacgm;

struct Child {
  pid_t pid = -1;
  eacgm_py_proc proc{};
  bool ok = false;
};

std::map<int, Child>& children() {
  static std::map<int, Child> all;
  return all;
}

// A python child sleeping `depth` frames deep, found by the agent's finder.
Child& child(int depth) {
  auto [it, fresh] = children().try_emplace(depth);
  Child& c = it->second;
  if (!fresh) return c;
  const char* python = std::getenv("EACGM_BENCH_PYTHON");
  const std::string script =
      "import sys, time\n"
      "def down(n):\n"
      "    if n <= 1:\n"
      "        sys.stdout.write('ready\\n'); sys.stdout.flush(); time.sleep(3600)\n"
      "    return down(n - 1)\n"
      "down(" +
      std::to_string(depth) + ")\n";
  int out[2];
  if (pipe(out) != 0) return c;
  c.pid = fork();
  if (c.pid == 0) {
    dup2(out[1], 1);
    execlp(python ? python : "python3", python ? python : "python3", "-c", script.c_str(), nullptr);
    _exit(127);
  }
  close(out[1]);
  char buf[8] = {};
  if (read(out[0], buf, sizeof(buf)) <= 0) return c;  // ready: sleeping at full depth
  close(out[0]);
  ingest::PythonProcessFinder finder;
  auto found = finder.find(static_cast<std::uint32_t>(c.pid));
  if (!found || !found->has_value()) {
    std::fprintf(stderr, "no CPython interpreter found in pid %d\n", c.pid);
    return c;
  }
  c.proc = (*found)->proc;
  c.ok = true;
  return c;
}

void walk(benchmark::State& state, int naming) {
  Child& c = child(static_cast<int>(state.range(0)));
  if (!c.ok) {
    state.SkipWithError("no python child (EACGM_BENCH_PYTHON)");
    return;
  }
  const auto pid = static_cast<std::uint32_t>(c.pid);
  const ingest::RemoteRead memory = ingest::live_process_memory(pid);
  auto code_types = [&](std::uint32_t) { return c.proc.code_type; };
  ingest::PythonStackDecoder warm(ingest::read_python_code, {}, code_types);
  eacgm_py_sample s{};
  PythonStack stack;
  std::size_t frames = 0;
  for (auto _ : state) {
    if (ingest::read_thread_stack(memory, c.proc, pid, pid, s) != ingest::ThreadStackStatus::kRead) {
      state.SkipWithError("the thread's stack could not be read");
      return;
    }
    if (naming == 1) warm.decode(&s, EACGM_PY_SAMPLE_SIZE(s.depth), stack, true);
    if (naming == 2) {
      ingest::PythonStackDecoder cold(ingest::read_python_code, {}, code_types);
      cold.decode(&s, EACGM_PY_SAMPLE_SIZE(s.depth), stack, true);
    }
    frames = s.depth;
  }
  state.counters["frames"] = static_cast<double>(frames);
}

void BM_Walk(benchmark::State& state) { walk(state, 0); }
void BM_WalkAndName(benchmark::State& state) { walk(state, 1); }
void BM_WalkAndNameCold(benchmark::State& state) { walk(state, 2); }

BENCHMARK(BM_Walk)->Arg(8)->Arg(32)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_WalkAndName)->Arg(8)->Arg(32)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_WalkAndNameCold)->Arg(8)->Arg(32)->Arg(64)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // The children sleep for an hour: end them.
  for (auto& [depth, c] : children()) {
    if (c.pid > 0) {
      kill(c.pid, SIGKILL);
      waitpid(c.pid, nullptr, 0);
    }
  }
  return 0;
}
