// Kernel names: learnt from registration and successful driver lookups only, chained
// from CUkernel to CUfunction, attached to launches, and found through the ELF symbol
// of a host function in this very process when nothing was learnt. Name strings whose
// capture faulted or was cut short are read from this very process's memory.
#include "ingest/kernel_names.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe/catalog.h"

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

ArgSpec arg(const char* name) {
  return ArgSpec{name, ArgSource::kRegister, 0, ArgKind::kRaw, ArgFormat::kHex, false, 0, 0};
}

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

// The built-in spec of that name, with an id of its own (the role cache is by id).
std::shared_ptr<const ProbeInfo> builtin(const char* spec_name, std::uint32_t id) {
  auto p = std::make_shared<ProbeInfo>();
  for (const auto& c : probe::builtin_catalogs()) {
    for (const auto& s : c.specs) {
      if (s.name == spec_name) p->spec = s;
    }
  }
  EXPECT_EQ(p->spec.name, spec_name);
  p->id = id;
  p->function = spec_name;
  return p;
}

std::uint32_t self() { return static_cast<std::uint32_t>(getpid()); }
std::uint64_t address(const char* s) { return reinterpret_cast<std::uint64_t>(s); }

// A pid that no longer names a process: a child that exited and was reaped.
std::uint32_t exited_pid() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return static_cast<std::uint32_t>(child);
}

// As the BPF program leaves a string it could not read: the pointer kept, the bit set.
void fault(CallEvent& e, const char* arg_name) {
  int i = -1;
  for (std::size_t k = 0; k < e.probe->spec.args.size(); ++k) {
    if (e.probe->spec.args[k].name == arg_name) i = static_cast<int>(k);
  }
  ASSERT_GE(i, 0);
  e.fault_mask |= static_cast<std::uint8_t>(1u << i);
  e.str.clear();
}

// Names in this process's memory, as a CUDA program's .rodata holds them.
const char kFaultedName[] = "_ZN5eacgm7testing14faulted_kernelEPfPKfi";
const char kLongName[] =
    "_ZN5eacgm7testing11long_kernelINS0_6detail19elementwise_functorIfEELi128ELi4EEEvT_PKfPfl";

TEST(KernelNames, FaultedRegistrationNameIsReadFromTheProcess) {
  KernelNames names;
  auto reg_probe = builtin("__cudaRegisterFunction", 1);
  auto launch = builtin("cudaLaunchKernel", 2);
  // A host stub no ELF symbol covers (below any mapping), so only the string names it.
  auto reg = call(reg_probe, {0x1234, address(kFaultedName)}, "", 0, true);
  reg.pid = self();
  fault(reg, "device_fun");
  names.enrich(reg);
  CallEvent e = call(launch, {0x1234});
  e.pid = self();
  names.enrich(e);
  EXPECT_EQ(e.kernel, "eacgm::testing::faulted_kernel(float*, float const*, int)");
  EXPECT_EQ(names.counters().from_memory, 1u);
  EXPECT_EQ(names.counters().unreadable, 0u);
}

TEST(KernelNames, FaultedModuleLookupNameIsReadFromTheProcess) {
  KernelNames names;
  auto get = builtin("cuModuleGetFunction", 1);
  auto launch = builtin("cuLaunchKernel", 2);
  auto lookup = call(get, {0xf100, 0x77, address(kFaultedName)}, "", 0);
  lookup.pid = self();
  fault(lookup, "name");
  names.enrich(lookup);
  CallEvent e = call(launch, {0xf100});
  e.pid = self();
  names.enrich(e);
  EXPECT_EQ(e.kernel, "eacgm::testing::faulted_kernel(float*, float const*, int)");

  auto failed = call(get, {0xf101, 0x77, address(kFaultedName)}, "", 34);
  failed.pid = self();
  fault(failed, "name");
  names.enrich(failed);
  EXPECT_EQ(names.counters().from_memory, 1u) << "a failed lookup costs no read";
}

TEST(KernelNames, CutNameIsReadWholeFromTheProcess) {
  KernelNames names;
  auto get = builtin("cuModuleGetFunction", 1);
  auto lookup = call(get, {0xf200, 0x77, address(kLongName)}, std::string(kLongName, 63), 0);
  lookup.pid = self();
  lookup.str_truncated = true;
  names.enrich(lookup);
  EXPECT_EQ(launch_name(names, 0xf200, self()),
            "void eacgm::testing::long_kernel<eacgm::testing::detail::elementwise_functor<float>, 128, "
            "4>(eacgm::testing::detail::elementwise_functor<float>, float const*, float*, long)");

  // What the pointer finds now is another string: the cut name is kept.
  auto moved = call(get, {0xf201, 0x77, address(kFaultedName)}, std::string(kLongName, 63), 0);
  moved.pid = self();
  moved.str_truncated = true;
  names.enrich(moved);
  EXPECT_EQ(launch_name(names, 0xf201, self()), std::string(kLongName, 63));
  EXPECT_EQ(names.counters().from_memory, 1u);
  EXPECT_EQ(names.counters().unreadable, 1u);
}

TEST(KernelNames, NameOfAnExitedProcessStaysUnknown) {
  KernelNames names;
  const std::uint32_t gone = exited_pid();
  auto reg = call(builtin("__cudaRegisterFunction", 1), {0x1234, address(kFaultedName)}, "", 0, true);
  reg.pid = gone;
  fault(reg, "device_fun");
  names.enrich(reg);
  EXPECT_EQ(launch_name(names, 0x1234, gone), "");
  EXPECT_EQ(names.counters().from_memory, 0u);
  EXPECT_EQ(names.counters().unreadable, 1u);
}

TEST(KernelNames, WhatIsNotASymbolNameIsNotLearnt) {
  KernelNames names;
  static const char kBinary[] = "_Z3foo\x01\x02\xff";
  auto get = builtin("cuModuleGetFunction", 1);
  auto lookup = call(get, {0xf300, 0x77, address(kBinary)}, "", 0);
  lookup.pid = self();
  fault(lookup, "name");
  names.enrich(lookup);
  EXPECT_EQ(launch_name(names, 0xf300, self()), "");
  EXPECT_EQ(names.counters().unreadable, 1u);
}

TEST(KernelNames, RolesFollowTheProbeNotJustItsId) {
  KernelNames names;
  auto get = builtin("cuModuleGetFunction", 7);
  auto lookup = call(get, {0xf400, 0x77, 0}, "_Z1av", 0);
  names.enrich(lookup);
  // Another probe with the same id (another table) is a launch, not a lookup.
  auto launch = builtin("cuLaunchKernel", 7);
  CallEvent e = call(launch, {0xf400});
  names.enrich(e);
  EXPECT_EQ(e.kernel, "a()");
  names.enrich(lookup);  // and back
  EXPECT_EQ(launch_name(names, 0xf400), "a()");
}

}  // namespace
}  // namespace eacgm::ingest
