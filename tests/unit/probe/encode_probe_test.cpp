// Encoding specs for the kernel: the probe flags that size records and skip work at
// exit follow the spec's captures.
#include <gtest/gtest.h>

#include <string>

#include "../common/builtin_spec.h"
#include "bpf/events.h"
#include "probe/bpf_tracer.h"
#include "probe/catalog.h"

namespace eacgm::probe {
namespace {

using test::builtin_spec;

TEST(EncodeProbe, RecordsCarryOnlyTheStringAreasTheirCapturesUse) {
  const eacgm_probe launch = encode_probe(builtin_spec("cudaLaunchKernel"));
  EXPECT_EQ(launch.flags & (EACGM_PROBE_STR | EACGM_PROBE_STR2), 0U);

  // The kernel's name in two parts: both string areas.
  const eacgm_probe reg = encode_probe(builtin_spec("__cudaRegisterFunction"));
  EXPECT_NE(reg.flags & EACGM_PROBE_STR, 0U);
  EXPECT_NE(reg.flags & EACGM_PROBE_STR2, 0U);
  const eacgm_probe lookup = encode_probe(builtin_spec("cuModuleGetFunction"));
  EXPECT_NE(lookup.flags & EACGM_PROBE_STR, 0U);

  // Two strings (qualified name, then file): the second goes to str2.
  const eacgm_probe py = encode_probe(builtin_spec(kPythonEntrySpec));
  EXPECT_NE(py.flags & EACGM_PROBE_STR2, 0U);
  int str2_args = 0;
  for (std::uint32_t i = 0; i < py.nargs; ++i) str2_args += (py.args[i].flags & EACGM_ARG_STR2) != 0;
  EXPECT_EQ(str2_args, 1);
}

TEST(EncodeProbe, ExitWorkOnlyForCapturesReadAtExit) {
  const eacgm_probe malloc = encode_probe(builtin_spec("cudaMalloc"));  // *devPtr at exit
  EXPECT_NE(malloc.flags & EACGM_PROBE_EXIT_ARGS, 0U);
  EXPECT_NE(malloc.flags & EACGM_PROBE_EXIT, 0U);
  const eacgm_probe free = encode_probe(builtin_spec("cudaFree"));
  EXPECT_EQ(free.flags & EACGM_PROBE_EXIT_ARGS, 0U);
}

}  // namespace
}  // namespace eacgm::probe
