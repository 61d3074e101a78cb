// Kernel registration in the formats: a __cudaRegisterFunction whose name string the BPF
// side could not read (its page not resident yet) but ingest read from the process shows
// that name (device_fun="...", kernel=...) instead of device_fun=?.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>

#include "export/event_format.h"
#include "formatted_call.h"
#include "ingest/kernel_names.h"

namespace eacgm::exporting {
namespace {

using nlohmann::json;

using test::set_arg;
using test::to_json;
using test::to_text;
CallEvent call(const std::string& fn, std::int64_t ret = 0) { return test::call_of(fn, ret); }

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
