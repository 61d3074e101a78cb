// Kernel registration in the formats: a __cudaRegisterFunction whose name string the BPF
// side could not read (its page not resident yet) but ingest read from the process shows
// that name (device_fun="...", kernel=...) instead of device_fun=?.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>

#include "builtin_probe.h"
#include "export/event_format.h"
#include "ingest/kernel_names.h"

namespace eacgm::exporting {
namespace {

using nlohmann::json;

CallEvent call(const std::string& fn) {
  CallEvent e;
  e.probe = test::builtin_probe(fn);
  e.has_exit = true;
  e.dur_ns = 1000;
  e.nargs = static_cast<std::uint8_t>(e.probe->spec.args.size());
  return e;
}

void set_arg(CallEvent& e, const std::string& name, std::uint64_t v) {
  for (std::size_t i = 0; i < e.probe->spec.args.size(); ++i) {
    if (e.probe->spec.args[i].name == name) e.args[i] = v;
  }
}

json to_json(const CallEvent& e) {
  fmt::memory_buffer out;
  append_jsonl(out, e);
  return json::parse(std::string(out.data(), out.size()));
}

std::string to_text(const CallEvent& e) {
  fmt::memory_buffer out;
  append_text(out, e);
  return std::string(out.data(), out.size());
}

// In this process's memory, as a CUDA program's .rodata holds it.
const char kDeviceFun[] = "_Z12probe_kernelPi";

TEST(EventFormatNames, RegistrationShowsTheNameReadFromTheProcess) {
  // As the BPF side leaves __cudaRegisterFunction when the name's page was not resident:
  // the pointer kept, the fault bit set, no string.
  auto e = call("__cudaRegisterFunction");
  e.pid = static_cast<std::uint32_t>(getpid());
  set_arg(e, "host_fun", 0x1234);
  set_arg(e, "device_fun", reinterpret_cast<std::uint64_t>(kDeviceFun));
  e.fault_mask = 1u << 1;
  ingest::KernelNames names;
  names.enrich(e);
  const std::string line = to_text(e);
  EXPECT_EQ(line.find("device_fun=?"), std::string::npos) << line;
  EXPECT_NE(line.find("device_fun=\"_Z12probe_kernelPi\""), std::string::npos) << line;
  EXPECT_NE(line.find("kernel=probe_kernel(int*)"), std::string::npos) << line;
  auto j = to_json(e);
  EXPECT_EQ(j["args"]["device_fun"], "_Z12probe_kernelPi");
  EXPECT_EQ(j["args"]["kernel"], "probe_kernel(int*)");
}

TEST(EventFormatNames, UnreadableRegistrationNameStaysUnknown) {
  auto e = call("__cudaRegisterFunction");
  set_arg(e, "host_fun", 0x1234);
  e.fault_mask = 1u << 1;
  const std::string line = to_text(e);
  EXPECT_NE(line.find("device_fun=?"), std::string::npos) << line;
  EXPECT_EQ(line.find("kernel="), std::string::npos) << line;
}

}  // namespace
}  // namespace eacgm::exporting
