// Integration tests (root, real eBPF uprobes on the machine's real libcudart): the
// test program calls each CUDA runtime API a known number of times with known
// arguments, and eacgm's events must match exactly.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "events.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

// The calls cuda_calls makes per repetition.
const std::map<std::string, int> kCallsPerRepeat = {
    {"cudaLaunchKernel", 3},     {"cudaMalloc", 2},      {"cudaFree", 2},
    {"cudaMemcpy", 1},           {"cudaMemcpyAsync", 1}, {"cudaStreamSynchronize", 1},
    {"cudaDeviceSynchronize", 1}};

// `registered`: the tracer was attached when the program started, so it saw the one
// __cudaRegisterFunction (probe_kernel) its static constructors make.
std::map<std::string, int> times(int n, bool registered = true) {
  auto m = kCallsPerRepeat;
  for (auto& [k, v] : m) v *= n;
  if (registered) m["__cudaRegisterFunction"] = 1;
  return m;
}

void expect_arguments(const std::vector<json>& events) {
  std::vector<std::uint64_t> malloc_sizes;
  for (const auto& e : events) {
    const auto& name = e["name"];
    const auto& a = e["args"];
    EXPECT_EQ(e["domain"], "cuda");
    EXPECT_EQ(e["comm"], "cuda_calls");
    if (name == "__cudaRegisterFunction") {
      EXPECT_TRUE(e["ret"].is_null()) << "void";
      // Unreadable (null) when the program's .rodata page was not in memory yet.
      if (!a["device_fun"].is_null()) {
        EXPECT_EQ(a["device_fun"], "_Z12probe_kernelPi");
      }
      continue;
    }
    ASSERT_TRUE(e["dur_ns"].is_number()) << e.dump();
    EXPECT_GT(e["dur_ns"].get<std::uint64_t>(), 0u);
    EXPECT_LT(e["dur_ns"].get<std::uint64_t>(), 5'000'000'000u) << e.dump();
    if (name == "cudaLaunchKernel") {
      EXPECT_EQ(a["grid"], json::array({2, 3, 4}));
      EXPECT_EQ(a["block"], json::array({32, 4, 1}));
      EXPECT_EQ(a["shared_mem"], 128);
      EXPECT_EQ(a["stream"], "0x5000");
      EXPECT_NE(a["func"], "0x0");
    } else if (name == "cudaMalloc") {
      malloc_sizes.push_back(a["size"].get<std::uint64_t>());
      EXPECT_TRUE(a.contains("ptr"));
    } else if (name == "cudaMemcpy") {
      EXPECT_EQ(a["dst"], "0x1000");
      EXPECT_EQ(a["count"], 65536);
      EXPECT_EQ(a["bytes"], 65536);
      EXPECT_EQ(a["kind"], 1);  // cudaMemcpyHostToDevice
    } else if (name == "cudaMemcpyAsync") {
      EXPECT_EQ(a["src"], "0x2000");
      EXPECT_EQ(a["count"], 8192);
      EXPECT_EQ(a["bytes"], 8192);
      EXPECT_EQ(a["kind"], 2);  // cudaMemcpyDeviceToHost
      EXPECT_EQ(a["stream"], "0x5000");
    } else if (name == "cudaStreamSynchronize") {
      EXPECT_EQ(a["stream"], "0x5000");
    }
  }
  ASSERT_GE(malloc_sizes.size(), 2u);
  EXPECT_EQ(malloc_sizes[0], 1u << 20);
  EXPECT_EQ(malloc_sizes[1], 4096u);
}

void expect_returns_match(const std::vector<json>& events, const std::string& program_out) {
  auto expected = program_returns(program_out);
  std::map<std::string, std::vector<int>> seen;
  for (const auto& e : events) {
    if (e["ret"].is_number()) seen[e["name"].get<std::string>()].push_back(e["ret"].get<int>());
  }
  for (const auto& [name, rets] : expected) EXPECT_EQ(seen[name], rets) << name;
}

TEST(TraceCuda, TracesLaunchedCommandWithExactCountsArgumentsAndReturnCodes) {
  Subprocess eacgm({bin("eacgm"), "trace", "--", bin("cuda_calls")});
  int rc = eacgm.wait();
  EXPECT_EQ(rc, 7) << "eacgm must return the command's exit code\n" << eacgm.err();
  // Events alone on stdout (every line JSON); the command's own stdout went to stderr.
  std::vector<json> calls = parse_events(eacgm.out());
  std::string program_out;
  std::istringstream in(eacgm.err());
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("eacgm: ", 0) != 0) program_out += line + "\n";
  }
  EXPECT_EQ(count_by_name(calls), times(1)) << eacgm.err();
  expect_arguments(calls);
  expect_returns_match(calls, program_out);
  std::set<int> pids;
  for (const auto& e : calls) pids.insert(e["pid"].get<int>());
  EXPECT_EQ(pids.size(), 1u);
  EXPECT_NE(eacgm.err().find("drops=0"), std::string::npos) << eacgm.err();
  EXPECT_NE(eacgm.err().find("lost_exits=0"), std::string::npos) << eacgm.err();
}

TEST(TraceCuda, ExactCountsOverManyRepetitionsWrittenToFile) {
  std::string dir = temp_dir();
  std::string out = dir + "/events.jsonl";
  Subprocess eacgm({bin("eacgm"), "trace", "-o", out, "--", bin("cuda_calls"), "--repeat", "500"});
  EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
  auto events = parse_events(read_file(out));
  EXPECT_EQ(count_by_name(events), times(500));
  // Entry timestamps are strictly ordered within the single traced thread.
  for (std::size_t i = 1; i < events.size(); ++i) {
    ASSERT_GT(events[i]["ts_ns"].get<std::uint64_t>(), events[i - 1]["ts_ns"].get<std::uint64_t>());
  }
  expect_returns_match(events, eacgm.out());  // -o FILE: the command's stdout stays on stdout
}

TEST(TraceCuda, AttachesToProgramStartedBeforeTheTracer) {
  std::string dir = temp_dir();
  std::string go = dir + "/go";
  Subprocess program({bin("cuda_calls"), "--wait-file", go});
  ASSERT_TRUE(program.wait_for("ready"));
  Subprocess eacgm({bin("eacgm"), "trace", "--pid", std::to_string(program.pid())});
  ASSERT_TRUE(eacgm.wait_for("eacgm: tracing pid", true)) << eacgm.err();
  std::ofstream(go).put('1');
  EXPECT_EQ(program.wait(), 7);
  EXPECT_EQ(eacgm.wait(std::chrono::seconds(30)), 0) << "tracing --pid ends when the pid exits\n"
                                                     << eacgm.err();
  auto events = parse_events(eacgm.out());
  EXPECT_EQ(count_by_name(events_of(events, program.pid())), times(1, false));
  EXPECT_EQ(events_of(events, program.pid()).size(), events.size()) << "--pid filters other processes";
  expect_arguments(events);
  expect_returns_match(events, program.out());
}

TEST(TraceCuda, TracesProgramStartedAfterTheTracerWithoutFilter) {
  Subprocess eacgm({bin("eacgm"), "trace", "--duration", "60"});
  ASSERT_TRUE(eacgm.wait_for("eacgm: tracing all processes", true)) << eacgm.err();
  Subprocess program({bin("cuda_calls"), "--repeat", "2"});
  EXPECT_EQ(program.wait(), 7);
  // Let the poll timeout deliver the last records, then stop like a user would.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  eacgm.signal(SIGINT);
  EXPECT_EQ(eacgm.wait(), 128 + SIGINT) << eacgm.err();
  auto events = events_of(parse_events(eacgm.out()), program.pid());
  EXPECT_EQ(count_by_name(events), times(2)) << eacgm.err();
  expect_returns_match(events, program.out());
}

TEST(TraceCuda, FindsLibcudartCopyLoadedLateWithDlopen) {
  // A private copy, as a conda or venv install has it: not in the loader cache.
  std::string dir = temp_dir();
  std::string libdir = dir + "/venv/lib/python3/site-packages/nvidia/cu13/lib";
  std::filesystem::create_directories(libdir);
  std::string copy = libdir + "/libcudart.so.13";
  std::filesystem::copy_file(std::filesystem::canonical(EACGM_TEST_CUDART), copy);
  std::string go = dir + "/go";

  Subprocess eacgm({bin("eacgm"), "trace", "--duration", "60"});
  ASSERT_TRUE(eacgm.wait_for("eacgm: tracing all processes", true)) << eacgm.err();
  Subprocess program({bin("cuda_dlopen"), copy, go});
  ASSERT_TRUE(program.wait_for("loaded")) << program.out() << program.err();
  ASSERT_TRUE(eacgm.wait_for("to " + copy, true, std::chrono::milliseconds(10000)))
      << "eacgm did not attach to the late-loaded copy\n"
      << eacgm.err();
  std::ofstream(go).put('1');
  EXPECT_EQ(program.wait(), 0) << program.err();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  eacgm.signal(SIGINT);
  eacgm.wait();
  auto events = events_of(parse_events(eacgm.out()), program.pid());
  ASSERT_EQ(events.size(), 2u) << eacgm.out();
  EXPECT_EQ(events[0]["name"], "cudaMalloc");
  EXPECT_EQ(events[0]["args"]["size"], 12345);
  EXPECT_EQ(events[1]["name"], "cudaFree");
  expect_returns_match(events, program.out());
}

TEST(TraceCuda, LaunchedCommandIsHeldUntilLateLibrariesAreAttached) {
  // The command dlopens a private libcudart copy and calls it at once: only holding
  // the process at the loader hint until the copy is attached catches the first call.
  std::string dir = temp_dir();
  std::string copy = dir + "/libcudart.so.13";
  std::filesystem::copy_file(std::filesystem::canonical(EACGM_TEST_CUDART), copy);
  for (int run = 0; run < 3; ++run) {
    std::string out = dir + "/events" + std::to_string(run) + ".jsonl";
    Subprocess eacgm({bin("eacgm"), "trace", "-o", out, "--", bin("cuda_dlopen"), copy, "-"});
    EXPECT_EQ(eacgm.wait(), 0) << eacgm.err();
    auto events = parse_events(read_file(out));
    ASSERT_EQ(events.size(), 2u) << "run " << run << ":\n" << read_file(out) << eacgm.err();
    EXPECT_EQ(events[0]["name"], "cudaMalloc");
    EXPECT_EQ(events[0]["args"]["size"], 12345);
    EXPECT_EQ(events[1]["name"], "cudaFree");
  }
}

TEST(TraceCuda, RunPrintsPerFunctionSummary) {
  Subprocess eacgm({bin("eacgm"), "run", "--mode", "per-call", "--", bin("cuda_calls"), "--repeat", "10"});
  EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
  std::string out = eacgm.out();
  for (const auto& [name, n] : times(10)) {
    if (name == "__cudaRegisterFunction") continue;  // void: no return code to fail
    std::regex row("cuda +" + name + " +" + std::to_string(n) + " +" + std::to_string(n) + " ");
    EXPECT_TRUE(std::regex_search(out, row)) << name << " row missing or wrong:\n" << out;
  }
  EXPECT_NE(out.find("accounting: events=111 drops=0 lost_exits=0"), std::string::npos) << out;
}

std::string fake_libcuda() { return bin("fake_libcuda/libcuda.so.1"); }

// The calls of `cuda_calls --repeat n --driver LIBCUDA --driver-after k`: the runtime's
// launches, copies and synchronisations of the first k repetitions (counted at the
// runtime: no driver probe is attached yet), its allocations and frees of all n (per
// call in both layers' modes), and the 3 driver launches of each repetition from k on.
// The runtime's later launches, copies and synchronisations are left to the driver's
// probes, which they never reach here (no GPU: they fail in the runtime).
std::map<std::string, int> before_and_after_the_driver(int n, int k) {
  std::map<std::string, int> m;
  for (const auto& [name, per] : kCallsPerRepeat) {
    m[name] = per * (name == "cudaMalloc" || name == "cudaFree" ? n : k);
  }
  m["cuLaunchKernel"] = 3 * (n - k);
  return m;
}

std::map<std::string, int> calls_of(const json& run_doc) {
  std::map<std::string, int> calls;
  for (const auto& f : run_doc["functions"]) {
    calls[f["function"].get<std::string>()] = f["calls"].get<int>();
  }
  return calls;
}

// The default mode counts one layer per operation: without a driver (none here) the
// runtime's launches, copies and synchronisations are counted at the runtime, all of them.
TEST(TraceCuda, AlwaysOnCountsTheRuntimesCallsWhileNoDriverIsProbed) {
  Subprocess eacgm({bin("eacgm"), "run", "--json", "--no-gpu", "--", bin("cuda_calls"), "--repeat", "10"});
  EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
  std::map<std::string, int> calls = calls_of(json::parse(eacgm.out()));
  calls.erase("__cudaRegisterFunction");
  EXPECT_EQ(calls, times(10, false)) << eacgm.err();
  EXPECT_NE(
      eacgm.err().find("are counted at the runtime until the driver's probes of the same operations attach"),
      std::string::npos)
      << eacgm.err();
}

// A driver found late (loaded by path, as from outside the loader cache): from the moment
// its probes attach, the runtime's launches, copies and synchronisations are left to them,
// so a call is never counted at both layers.
TEST(TraceCuda, TheRuntimeStopsCountingAnOperationWhenTheDriversProbesOfItAttach) {
  Subprocess eacgm({bin("eacgm"), "run", "--json", "--no-gpu", "--", bin("cuda_calls"), "--repeat", "5",
                    "--driver", fake_libcuda(), "--driver-after", "2"});
  EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
  std::map<std::string, int> calls = calls_of(json::parse(eacgm.out()));
  for (const auto& [name, n] : before_and_after_the_driver(5, 2))
    EXPECT_EQ(calls[name], n) << name << "\n" << eacgm.err();
  EXPECT_TRUE(std::regex_search(
      eacgm.err(),
      std::regex(
          R"(the driver's probes attached to \S*fake_libcuda/libcuda\.so\.1: \d+ runtime probe\(s\) of the same )"
          R"(operations \(cuda\w+(, cuda\w+)*(, \.\.\.)?\) detached from \d+ file\(s\))")))
      << eacgm.err();
}

// A process running the hook's own copy of the driver (EACGM_PRIVATE_DRIVER; the FAKE
// libcuda here) means there is a driver on the machine, and its launches are its hook's
// to count: the runtime's stand-ins step aside as when the driver's probes attach. So a
// later process's runtime launches, copies and synchronisations (failing in the runtime
// here, never reaching a driver) are left to the driver's probes, its allocations still
// traced; without the copy the same run counts all 10 repetitions at the runtime
// (AlwaysOnCountsTheRuntimesCallsWhileNoDriverIsProbed).
TEST(TraceCuda, AProcessOnTheHooksCopyOfTheDriverSendsTheRuntimesStandInsAway) {
  const std::string copies = temp_dir() + "/driver-copies";
  std::filesystem::remove_all(copies);
  const std::string script = "env LD_PRELOAD=" + bin("libeacgm_hook.so") +
                             " EACGM_GPU_TIME=1 EACGM_PRIVATE_DRIVER=" + copies +
                             " LD_LIBRARY_PATH=" + bin("fake_libcuda") + " " + bin("gpu_time_calls") +
                             " libcuda.so.1 >/dev/null && " + bin("cuda_calls") + " --repeat 10";
  Subprocess eacgm({bin("eacgm"), "run", "--json", "--no-gpu", "--", "/bin/sh", "-c", script});
  EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
  std::map<std::string, int> calls = calls_of(json::parse(eacgm.out()));
  std::map<std::string, int> expected = before_and_after_the_driver(10, 0);
  expected.erase("cuLaunchKernel");  // cuda_calls never reaches a driver here
  for (const auto& [name, n] : expected) EXPECT_EQ(calls[name], n) << name << "\n" << eacgm.err();
  // gpu_time_calls' 337 kernel launches, as its hook counted them (a private-driver
  // process's calls come from its ring): a probe on the copy would count them again.
  EXPECT_EQ(calls["cuLaunchKernel"], 337) << "the copy is never probed\n" << eacgm.out();
  EXPECT_TRUE(std::regex_search(
      eacgm.err(),
      std::regex(
          R"(a process runs its own copy of the driver \(\S*/eacgm-libcuda\.so\.\S+; its hook counts its )"
          R"(launches\): \d+ runtime probe\(s\) of the same operations \(cuda\w+(, cuda\w+)*(, \.\.\.)?\) )"
          R"(detached from \d+ file\(s\))")))
      << eacgm.err();
}

// `[trace] one_layer = true`: per call, the runtime's launches, copies and
// synchronisations are left to the driver's probes once they are attached (here: none
// until the program loads the fake driver), while its allocations stay traced; without
// the driver catalog the runtime's own probes are what sees them, one layer or not.
TEST(TraceCuda, OneLayerLeavesTheRuntimesOperationsToTheDriversProbes) {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/one_layer.toml") << "[trace]\none_layer = true\n";
  const auto traced = [&](const std::vector<std::string>& probes, const std::vector<std::string>& program) {
    std::vector<std::string> argv{bin("eacgm"), "trace", "--no-gpu", "--config", dir + "/one_layer.toml"};
    argv.insert(argv.end(), probes.begin(), probes.end());
    argv.insert(argv.end(), {"-o", dir + "/events.jsonl", "--", bin("cuda_calls"), "--repeat", "3"});
    argv.insert(argv.end(), program.begin(), program.end());
    Subprocess eacgm(argv);
    EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
    // Said in one line when a layer stands in for the other (not with the runtime alone).
    EXPECT_EQ(eacgm.err().find("are counted at the runtime until the driver's probes") != std::string::npos,
              probes.empty())
        << eacgm.err();
    auto counts = count_by_name(parse_events(read_file(dir + "/events.jsonl")));
    counts.erase("__cudaRegisterFunction");
    return counts;
  };
  EXPECT_EQ(traced({}, {}), times(3, false));
  EXPECT_EQ(traced({}, {"--driver", fake_libcuda(), "--driver-after", "1"}),
            before_and_after_the_driver(3, 1));
  EXPECT_EQ(traced({"--probes", "cuda"}, {}), times(3, false));
}

TEST(TraceCuda, AlwaysOnCountsTheRuntimesLaunchesWhereTheDriverIsNotProbed) {
  // `--probes cuda`: no driver probe sees the launches, so the runtime's count them.
  Subprocess eacgm({bin("eacgm"), "run", "--json", "--no-gpu", "--mode", "always-on", "--probes", "cuda",
                    "--", bin("cuda_calls"), "--repeat", "10"});
  EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
  const json doc = json::parse(eacgm.out());
  std::map<std::string, std::uint64_t> calls;
  for (const auto& f : doc["functions"])
    calls[f["function"].get<std::string>()] = f["calls"].get<std::uint64_t>();
  for (const auto& [name, n] : times(10, false)) {
    EXPECT_EQ(calls[name], static_cast<std::uint64_t>(n)) << name << "\n" << eacgm.out();
  }
}

TEST(TraceCuda, TextFormatShowsCallsAndStatus) {
  Subprocess eacgm({bin("eacgm"), "trace", "--format", "text", "--", bin("cuda_calls")});
  EXPECT_EQ(eacgm.wait(), 7);
  EXPECT_TRUE(std::regex_search(
      eacgm.out(),
      std::regex(
          R"(cuda_calls\[\d+/\d+\] cuda cudaLaunchKernel\(func=0x[0-9a-f]+, grid=\(2,3,4\), block=\(32,4,1\), shared_mem=128, stream=0x5000, kernel=probe_kernel\(int\*\)\) = -?\d+( \(\w+\))?  [0-9.]+ (us|ms))")))
      << eacgm.out();
  EXPECT_NE(eacgm.err().find("done events=12 drops=0"), std::string::npos) << eacgm.err();
}

TEST(TraceCuda, ProbesCheckResolvesTheCatalogOnThisMachine) {
  Subprocess eacgm({bin("eacgm"), "probes", "--check"});
  EXPECT_EQ(eacgm.wait(), 0) << eacgm.err();
  std::string out = eacgm.out();
  EXPECT_TRUE(std::regex_search(
      out, std::regex(R"(cudaMalloc .*libcudart\.so\*[\s\S]*?ok \S*libcudart\.so\.13: 1 symbol)")))
      << out;
}

}  // namespace
}  // namespace eacgm::test
