// Integration tests (root, real eBPF uprobes): the runtime calls beyond cuda_calls on the
// machine's libcudart, the driver catalog on the toolkit's stub libcuda, nesting through
// a user `outer` probe, and kernel names from registration and from the ELF fallback.
#include <gtest/gtest.h>

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

// "NAME out=0x..." lines: out-parameters as the program saw them after the call.
std::map<std::string, std::string> program_outs(const std::string& out) {
  std::map<std::string, std::string> r;
  std::regex re(R"((\w+) out=(0x[0-9a-f]+))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it) {
    r[(*it)[1]] = (*it)[2];
  }
  return r;
}

std::map<std::string, json> by_name(const std::vector<json>& events) {
  std::map<std::string, json> m;
  for (const auto& e : events) m[e["name"].get<std::string>()] = e;
  return m;
}

void expect_returns_match(const std::vector<json>& events, const std::string& program_out) {
  auto expected = program_returns(program_out);
  ASSERT_FALSE(expected.empty()) << program_out;
  std::map<std::string, std::vector<int>> seen;
  for (const auto& e : events) {
    if (e["ret"].is_number()) seen[e["name"].get<std::string>()].push_back(e["ret"].get<int>());
  }
  for (const auto& [name, rets] : expected) EXPECT_EQ(seen[name], rets) << name;
}

// Starts `argv` gated on a wait file, attaches `eacgm trace --pid` with `extra`
// options, releases the program and returns eacgm's events.
struct GatedRun {
  std::vector<json> events;
  std::string program_out;
  std::string eacgm_err;
  int program_rc = -1;
};

GatedRun run_gated(std::vector<std::string> argv, const std::vector<std::string>& extra,
                   const std::string& attached_to) {
  std::string dir = temp_dir();
  std::string go = dir + "/go";
  argv.push_back("--wait-file");
  argv.push_back(go);
  Subprocess program(argv);
  GatedRun r;
  if (!program.wait_for("ready")) {
    ADD_FAILURE() << "program did not start: " << program.err();
    return r;
  }
  std::vector<std::string> cmd = {bin("eacgm"), "trace", "--pid", std::to_string(program.pid())};
  cmd.insert(cmd.end(), extra.begin(), extra.end());
  Subprocess eacgm(cmd);
  EXPECT_TRUE(eacgm.wait_for("eacgm: tracing pid", true)) << eacgm.err();
  EXPECT_TRUE(eacgm.wait_for(attached_to, true, std::chrono::milliseconds(10000))) << eacgm.err();
  std::ofstream(go).put('1');
  r.program_rc = program.wait();
  EXPECT_EQ(eacgm.wait(std::chrono::seconds(30)), 0) << eacgm.err();
  r.events = parse_events(eacgm.out());
  r.program_out = program.out();
  r.eacgm_err = eacgm.err();
  return r;
}

TEST(TraceCudaMore, RuntimeCallsWithExactCountsArgumentsOutParametersAndReturns) {
  std::string dir = temp_dir();
  std::string out = dir + "/events.jsonl";
  std::string go = dir + "/go";
  Subprocess eacgm(
      {bin("eacgm"), "trace", "--probes", "cuda", "-o", out, "--", bin("cuda_more"), "--wait-file", go});
  // Registration (static constructors) is named while the process is alive.
  ASSERT_TRUE(eacgm.wait_for("ready"));
  for (int i = 0; i < 2000 && read_file(out).find("__cudaRegisterFunction") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::ofstream(go).put('1');
  ASSERT_EQ(eacgm.wait(), 0) << eacgm.err();
  auto events = parse_events(read_file(out));
  const std::string program_out = eacgm.out();

  std::map<std::string, int> expected;
  for (const auto& [name, rets] : program_returns(program_out))
    expected[name] = static_cast<int>(rets.size());
  expected["__cudaRegisterFunction"] = 1;  // more_kernel, before main
  EXPECT_EQ(expected.size(), 26u) << program_out;
  EXPECT_EQ(count_by_name(events), expected) << eacgm.err();
  expect_returns_match(events, program_out);
  for (const auto& e : events) {
    EXPECT_EQ(e["domain"], "cuda");
    EXPECT_FALSE(e.contains("nested")) << "no outer call encloses these: " << e.dump();
  }

  auto m = by_name(events);
  // Out-parameters are read at exit: what the program saw after the call.
  for (const auto& [name, value] : program_outs(program_out)) {
    const json& a = m[name]["args"];
    EXPECT_EQ(a.contains("ptr") ? a["ptr"] : a["stream"], value) << name;
  }
  EXPECT_EQ(m["cudaSetDevice"]["args"]["device"], 3);
  EXPECT_EQ(m["cudaMallocAsync"]["args"]["size"], 3000);
  EXPECT_EQ(m["cudaMallocAsync"]["args"]["stream"], "0x5000");
  EXPECT_EQ(m["cudaFreeAsync"]["args"]["ptr"], "0x7100");
  EXPECT_EQ(m["cudaMallocManaged"]["args"]["size"], 5000);
  EXPECT_EQ(m["cudaMallocManaged"]["args"]["flags"], "0x2");  // cudaMemAttachHost
  EXPECT_EQ(m["cudaMallocHost"]["args"]["size"], 6000);
  EXPECT_EQ(m["cudaHostAlloc"]["args"]["size"], 7000);
  EXPECT_EQ(m["cudaHostAlloc"]["args"]["flags"], "0x1");  // cudaHostAllocPortable
  EXPECT_EQ(m["cudaFreeHost"]["args"]["ptr"], "0x7200");
  EXPECT_EQ(m["cudaMemset"]["args"], json::parse(R"({"ptr":"0x7300","value":90,"count":1111,"bytes":1111})"));
  EXPECT_EQ(m["cudaMemsetAsync"]["args"],
            json::parse(R"({"ptr":"0x7400","value":-1,"count":2222,"stream":"0x5000","bytes":2222})"));
  EXPECT_EQ(m["cudaMemset2D"]["args"],
            json::parse(R"({"ptr":"0x7500","pitch":512,"value":7,"width":100,"height":20,"bytes":2000})"));
  EXPECT_EQ(m["cudaMemset2DAsync"]["args"]["bytes"], 1200);
  EXPECT_EQ(m["cudaMemset2DAsync"]["args"]["stream"], "0x5000");
  const json& c2 = m["cudaMemcpy2D"]["args"];
  EXPECT_EQ(c2["dst"], "0x8000");
  EXPECT_EQ(c2["dpitch"], 1024);
  EXPECT_EQ(c2["spitch"], 512);
  EXPECT_EQ(c2["width"], 300);
  EXPECT_EQ(c2["height"], 7);
  EXPECT_EQ(c2["kind"], 1);  // HostToDevice, from the first stack slot
  EXPECT_EQ(c2["bytes"], 2100);
  const json& c2a = m["cudaMemcpy2DAsync"]["args"];
  EXPECT_EQ(c2a["src"], "0x8100");
  EXPECT_EQ(c2a["kind"], 2);
  EXPECT_EQ(c2a["stream"], "0x5000");
  EXPECT_EQ(c2a["bytes"], 576);
  EXPECT_EQ(
      m["cudaMemcpyPeer"]["args"],
      json::parse(
          R"({"dst":"0x9000","dst_device":1,"src":"0x9100","src_device":0,"count":4444,"bytes":4444})"));
  EXPECT_EQ(m["cudaMemcpyPeerAsync"]["args"]["bytes"], 5555);
  EXPECT_EQ(m["cudaMemcpyPeerAsync"]["args"]["stream"], "0x5000");
  EXPECT_EQ(m["cudaStreamCreateWithFlags"]["args"]["flags"], "0x1");
  EXPECT_EQ(m["cudaStreamCreateWithPriority"]["args"]["priority"], -2);
  EXPECT_EQ(m["cudaStreamDestroy"]["args"]["stream"], "0xa100");
  EXPECT_EQ(m["cudaEventRecord"]["args"], json::parse(R"({"event":"0xe000","stream":"0x5000"})"));
  EXPECT_EQ(m["cudaEventSynchronize"]["args"]["event"], "0xe000");
  EXPECT_EQ(m["cudaEventQuery"]["args"]["event"], "0xe000");
  EXPECT_EQ(m["cudaStreamWaitEvent"]["args"],
            json::parse(R"({"stream":"0x5000","event":"0xe000","flags":"0x0"})"));
  EXPECT_EQ(m["cudaGraphLaunch"]["args"], json::parse(R"({"graph_exec":"0xf000","stream":"0x5000"})"));
  // Fields read behind the cudaLaunchConfig_t pointer, and the kernel's name.
  const json& ex = m["cudaLaunchKernelExC"]["args"];
  EXPECT_EQ(ex["grid"], json::array({5, 6, 7}));
  EXPECT_EQ(ex["block"], json::array({64, 2, 1}));
  EXPECT_EQ(ex["shared_mem"], 256);
  EXPECT_EQ(ex["stream"], "0x6000");
  EXPECT_EQ(ex["kernel"], "more_kernel(float*, int)");
  // The name string is in the program's .rodata, which may not be paged in yet; then
  // ingest read it from the process (alive: it waits for the go file).
  const json& device_fun = m["__cudaRegisterFunction"]["args"]["device_fun"];
  // Captured by the probe, or read back by ingest (names_from_memory=1): named either way.
  EXPECT_EQ(device_fun, "_Z11more_kernelPfi") << eacgm.err();
  EXPECT_EQ(eacgm.err().find("names_unreadable=1"), std::string::npos) << eacgm.err();
  EXPECT_EQ(m["__cudaRegisterFunction"]["args"]["host_fun"], ex["func"]);
}

TEST(TraceCudaMore, DriverCatalogOnStubLibcudaFoundThroughProcMaps) {
  auto r = run_gated({bin("cuda_driver_calls")}, {"--probes", "cuda_driver"}, "libcuda.so");
  EXPECT_EQ(r.program_rc, 0) << r.program_out;
  std::map<std::string, int> expected;
  for (const auto& [name, rets] : program_returns(r.program_out))
    expected[name] = static_cast<int>(rets.size());
  EXPECT_EQ(expected.size(), 27u) << r.program_out;
  EXPECT_EQ(count_by_name(r.events), expected) << r.eacgm_err;
  expect_returns_match(r.events, r.program_out);  // CUDA_ERROR_STUB_LIBRARY (34) each
  for (const auto& e : r.events) EXPECT_EQ(e["domain"], "cuda_driver");

  auto m = by_name(r.events);
  for (const auto& [name, value] : program_outs(r.program_out)) {
    const json& a = m[name]["args"];
    const char* key = a.contains("ptr") ? "ptr" : a.contains("handle") ? "handle" : "func";
    EXPECT_EQ(a[key], value) << name;
  }
  // gridDimX..Z in rsi, rdx, rcx; blockDimX, Y in r8, r9 and blockDimZ on the stack.
  const json& k = m["cuLaunchKernel"]["args"];
  EXPECT_EQ(k["f"], "0xf00d");
  EXPECT_EQ(k["grid"], json::array({2, 3, 4}));
  EXPECT_EQ(k["block"], json::array({64, 2, 3}));
  EXPECT_EQ(k["shared_mem"], 256);
  EXPECT_EQ(k["stream"], "0x5000");
  EXPECT_FALSE(k.contains("kernel")) << "0xf00d was never named (the stub's lookup failed)";
  const json& ex = m["cuLaunchKernelEx"]["args"];
  EXPECT_EQ(ex["f"], "0xf00e");
  EXPECT_EQ(ex["grid"], json::array({7, 8, 9}));
  EXPECT_EQ(ex["block"], json::array({32, 1, 2}));
  EXPECT_EQ(ex["shared_mem"], 512);
  EXPECT_EQ(ex["stream"], "0x6000");
  EXPECT_EQ(m["cuLaunchCooperativeKernel"]["args"]["grid"], json::array({1, 1, 1}));
  EXPECT_EQ(m["cuLaunchCooperativeKernel"]["args"]["block"], json::array({128, 1, 1}));
  EXPECT_EQ(m["cuGraphLaunch"]["args"]["graph_exec"], "0xa000");
  EXPECT_EQ(m["cuMemAlloc_v2"]["args"]["size"], 1 << 20);
  EXPECT_EQ(m["cuMemAllocAsync"]["args"]["size"], 2048);
  EXPECT_EQ(m["cuMemFree_v2"]["args"]["ptr"], "0x2222");
  EXPECT_EQ(m["cuMemFreeAsync"]["args"]["ptr"], "0x2223");
  const std::map<std::string, int> bytes = {{"cuMemcpyHtoD_v2", 100},      {"cuMemcpyDtoH_v2", 200},
                                            {"cuMemcpyDtoD_v2", 300},      {"cuMemcpyHtoDAsync_v2", 400},
                                            {"cuMemcpyDtoHAsync_v2", 500}, {"cuMemcpyDtoDAsync_v2", 600},
                                            {"cuMemcpyAsync", 700},        {"cuMemcpy", 800},
                                            {"cuMemcpyPeer", 900},         {"cuMemcpyPeerAsync", 1000}};
  for (const auto& [name, n] : bytes) EXPECT_EQ(m[name]["args"]["bytes"], n) << name;
  EXPECT_EQ(m["cuMemcpyDtoDAsync_v2"]["args"]["stream"], "0x5000");
  EXPECT_EQ(m["cuMemcpyPeerAsync"]["args"]["dst_ctx"], "0xc000");
  EXPECT_EQ(m["cuMemCreate"]["args"]["size"], 1 << 21);
  EXPECT_EQ(m["cuMemMap"]["args"],
            json::parse(R"({"ptr":"0x50000","size":2097152,"offset":4096,"handle":"0x4444"})"));
  EXPECT_EQ(m["cuMemUnmap"]["args"], json::parse(R"({"ptr":"0x50000","size":2097152})"));
  EXPECT_EQ(m["cuMemRelease"]["args"]["handle"], "0x4444");
  EXPECT_EQ(m["cuModuleGetFunction"]["args"]["name"], "_Z12probe_kernelPi");
  EXPECT_EQ(m["cuLibraryGetKernel"]["args"]["name"], "_Z11lib_kernelv");
  EXPECT_EQ(m["cuKernelGetFunction"]["args"]["kernel_handle"], "0xf200");
}

TEST(TraceCudaMore, CallsInsideAnOuterProbeAreFlaggedNested) {
  std::string cfg = temp_dir() + "/nest.toml";
  std::ofstream(cfg) << R"(
[[probe]]
name = "nest_outer"
domain = "nest"
library = "libeacgm_nest.so*"
symbol = "nest_outer"
outer = true
args = [{ name = "x", reg = 0, kind = "u32" }]

[[probe]]
name = "nest_inner"
domain = "nest"
library = "libeacgm_nest.so*"
symbol = "nest_inner"
args = [{ name = "x", reg = 0, kind = "u32" }]
)";
  auto r = run_gated({bin("nest_calls")}, {"--config", cfg, "--probes", "nest"}, "libeacgm_nest.so");
  EXPECT_EQ(r.program_rc, 0);
  EXPECT_NE(r.program_out.find("sum=75"), std::string::npos) << r.program_out;
  ASSERT_EQ(r.events.size(), 8u) << r.eacgm_err;
  std::set<int> nested_inner, direct_inner, outer;
  for (const auto& e : r.events) {
    int x = e["args"]["x"].get<int>();
    bool nested = e.value("nested", false);
    if (e.contains("nested")) {
      EXPECT_EQ(e["nested"], true) << "written only when set";
    }
    if (e["name"] == "nest_outer") {
      EXPECT_FALSE(nested) << e.dump();
      EXPECT_TRUE(e["dur_ns"].is_number()) << e.dump();
      outer.insert(x);
    } else {
      (nested ? nested_inner : direct_inner).insert(x);
      // On a uprobe session link (this kernel has them) the nested call's entry declines
      // its return, whose trap would only time what the outer call already times.
      EXPECT_EQ(e["dur_ns"].is_null(), nested) << e.dump();
    }
  }
  EXPECT_EQ(outer, (std::set<int>{1, 2, 3}));
  EXPECT_EQ(nested_inner, (std::set<int>{1, 2, 3}));
  EXPECT_EQ(direct_inner, (std::set<int>{10, 20}));
}

TEST(TraceCudaMore, KernelNameFromRegistrationWhenTracingFromTheStart) {
  // Registration runs in static constructors, before main waits on the gate; the
  // gate opens once its event is out, while the process is surely alive.
  std::string go = temp_dir() + "/go";
  Subprocess eacgm({bin("eacgm"), "trace", "--probes", "cuda", "--", bin("cuda_calls"), "--wait-file", go});
  EXPECT_TRUE(eacgm.wait_for("__cudaRegisterFunction", false, std::chrono::milliseconds(10000)))
      << eacgm.err();
  std::ofstream(go).put('1');
  EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
  auto events = parse_events(eacgm.out());
  int launches = 0, registrations = 0;
  for (const auto& e : events) {
    if (e["name"] == "cudaLaunchKernel") {
      ++launches;
      EXPECT_EQ(e["args"]["kernel"], "probe_kernel(int*)") << e.dump();
    } else if (e["name"] == "__cudaRegisterFunction") {
      ++registrations;
      // The name string may be unreadable (not paged in); the stub's symbol names it then.
      if (!e["args"]["device_fun"].is_null()) {
        EXPECT_EQ(e["args"]["device_fun"], "_Z12probe_kernelPi");
      }
      EXPECT_EQ(e["args"]["host_fun"].get<std::string>().substr(0, 2), "0x");
    }
  }
  EXPECT_EQ(launches, 3);
  EXPECT_EQ(registrations, 1);
}

TEST(TraceCudaMore, KernelNameFromHostStubSymbolWhenRegistrationWasMissed) {
  std::string dir = temp_dir();
  std::string go = dir + "/go", bye = dir + "/bye";
  Subprocess program({bin("cuda_calls"), "--wait-file", go, "--exit-file", bye});
  ASSERT_TRUE(program.wait_for("ready"));
  Subprocess eacgm({bin("eacgm"), "trace", "--probes", "cuda", "--pid", std::to_string(program.pid())});
  ASSERT_TRUE(eacgm.wait_for("eacgm: tracing pid", true)) << eacgm.err();
  std::ofstream(go).put('1');
  ASSERT_TRUE(program.wait_for("calls done"));
  // The process stays alive until the events are out, so its maps can still be read.
  EXPECT_TRUE(eacgm.wait_for("cudaDeviceSynchronize", false, std::chrono::milliseconds(10000)));
  std::ofstream(bye).put('1');
  EXPECT_EQ(program.wait(), 7);
  EXPECT_EQ(eacgm.wait(std::chrono::seconds(30)), 0) << eacgm.err();
  auto events = parse_events(eacgm.out());
  int launches = 0;
  for (const auto& e : events) {
    EXPECT_NE(e["name"], "__cudaRegisterFunction") << "registration ran before the tracer";
    if (e["name"] == "cudaLaunchKernel") {
      ++launches;
      EXPECT_EQ(e["args"]["kernel"], "probe_kernel(int*)") << e.dump();
    }
  }
  EXPECT_EQ(launches, 3);
}

}  // namespace
}  // namespace eacgm::test
