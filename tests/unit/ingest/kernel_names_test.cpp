// Kernel names: learnt from registration and successful driver lookups only, chained
// from CUkernel to CUfunction, attached to launches, and found through the ELF symbol
// of a host function in this very process when nothing was learnt.
#include "ingest/kernel_names.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace eacgm::ingest {

// A function with a symbol in this test binary: its address stands for a host stub.
__attribute__((noinline)) int kernel_names_stub_target(int* out) {
  __asm__ volatile("" ::: "memory");
  return out ? *out : 0;
}

namespace {

std::shared_ptr<const ProbeInfo> probe(const std::string& name, std::vector<ArgSpec> args,
                                       std::vector<DerivedArg> derived = {}) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = name;
  p->spec.name = name;
  p->spec.args = std::move(args);
  p->spec.derived = std::move(derived);
  return p;
}

ArgSpec arg(const char* name) { return ArgSpec{name, ArgSource::kRegister, 0, ArgKind::kRaw, ArgFormat::kHex, false, 0, 0}; }

CallEvent call(const std::shared_ptr<const ProbeInfo>& p, std::vector<std::uint64_t> args,
               std::string str = "", std::int64_t ret = 0, bool exit = true) {
  CallEvent e;
  e.pid = 4242;
  e.probe = p;
  e.nargs = static_cast<std::uint8_t>(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) e.args[i] = args[i];
  e.str = std::move(str);
  e.ret = ret;
  e.has_exit = exit;
  return e;
}

const auto kRegister = probe("__cudaRegisterFunction", {arg("host_fun"), arg("device_fun")});
const auto kModuleGet = probe("cuModuleGetFunction", {arg("func"), arg("module"), arg("name")});
const auto kLibraryGet = probe("cuLibraryGetKernel", {arg("kernel_handle"), arg("library"), arg("name")});
const auto kKernelGet = probe("cuKernelGetFunction", {arg("func"), arg("kernel_handle")});
const auto kLaunch = probe("cuLaunchKernel", {arg("f")}, {{"kernel", DerivedArg::Op::kKernelName, "f", ""}});

std::string launch_name(KernelNames& names, std::uint64_t f, std::uint32_t pid = 4242) {
  CallEvent e = call(kLaunch, {f});
  e.pid = pid;
  names.enrich(e);
  return e.kernel;
}

TEST(KernelNames, RegistrationNamesTheHostStubDemangled) {
  KernelNames names;
  auto reg = call(kRegister, {0x401000, 0x9000}, "_Z12probe_kernelPi", 0, false);
  names.enrich(reg);
  EXPECT_EQ(launch_name(names, 0x401000), "probe_kernel(int*)");
  EXPECT_EQ(launch_name(names, 0x401000, 4243), "") << "handles are per process";
}

TEST(KernelNames, OnlySuccessfulLookupsTeachNames) {
  KernelNames names;
  auto failed = call(kModuleGet, {0xf00d, 0x77, 0}, "_Z6failedv", 34);
  names.enrich(failed);
  EXPECT_EQ(launch_name(names, 0xf00d), "") << "a failed call wrote nothing through its out-pointer";
  auto ok = call(kModuleGet, {0xf00e, 0x77, 0}, "_Z6scalerPfi", 0);
  names.enrich(ok);
  EXPECT_EQ(launch_name(names, 0xf00e), "scaler(float*, int)");
}

TEST(KernelNames, LibraryKernelNameCarriesOverToItsFunction) {
  KernelNames names;
  auto lib = call(kLibraryGet, {0xb000, 0x78, 0}, "_Z10lib_kernelv", 0);
  names.enrich(lib);
  auto get = call(kKernelGet, {0xc000, 0xb000}, "", 0);
  names.enrich(get);
  EXPECT_EQ(launch_name(names, 0xc000), "lib_kernel()");
}

TEST(KernelNames, FaultedHandleIsNotNamed) {
  KernelNames names;
  names.learn(4242, 0x1234, "k()");
  CallEvent e = call(kLaunch, {0x1234});
  e.fault_mask = 1;
  names.enrich(e);
  EXPECT_EQ(e.kernel, "");
}

TEST(KernelNames, ForgetDropsAProcessesNames) {
  KernelNames names;
  names.learn(4242, 0x1234, "k()");
  EXPECT_EQ(launch_name(names, 0x1234), "k()");
  names.forget(4242);
  EXPECT_EQ(launch_name(names, 0x1234), "");
}

TEST(KernelNames, FallsBackToTheElfSymbolOfTheHostFunction) {
  KernelNames names;
  auto addr = reinterpret_cast<std::uint64_t>(&kernel_names_stub_target);
  auto pid = static_cast<std::uint32_t>(getpid());
  EXPECT_EQ(names.lookup(pid, addr), "eacgm::ingest::kernel_names_stub_target(int*)");
  EXPECT_EQ(names.lookup(pid, addr + 1), "eacgm::ingest::kernel_names_stub_target(int*)")
      << "an address inside the function";
  int on_heap = 0;
  EXPECT_EQ(names.lookup(pid, reinterpret_cast<std::uint64_t>(&on_heap)), "") << "not code";
}

TEST(KernelNames, CachesAreBounded) {
  KernelNames::Options o;
  o.max_handles_per_pid = 4;
  o.max_pids = 2;
  KernelNames names(o);
  for (std::uint64_t h = 1; h <= 5; ++h) names.learn(1, h, "k" + std::to_string(h));
  EXPECT_EQ(names.lookup(1, 5), "k5");
  EXPECT_EQ(names.lookup(1, 1), "") << "the full per-pid cache was cleared";
  names.learn(2, 7, "a");
  names.learn(3, 7, "b");  // evicts the least recently used pid (1)
  EXPECT_EQ(names.lookup(3, 7), "b");
  EXPECT_EQ(names.lookup(2, 7), "a");
}

}  // namespace
}  // namespace eacgm::ingest
