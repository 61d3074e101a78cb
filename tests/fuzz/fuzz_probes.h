// The probes the record-decoder fuzz target and its seed generator share: one of each
// capture shape (no strings, one string, two strings, entry-only, split return), ids 0..4.
#pragma once

#include "probe/probe_table.h"

namespace eacgm::fuzz {

inline void add_fuzz_probes(probe::ProbeTable& table) {
  auto add = [&table](const char* name, const char* domain, ReturnKind ret, std::vector<ArgSpec> args) {
    ProbeInfo info;
    info.function = name;
    info.symbol = name;
    info.library = "/usr/lib/libfuzz.so";
    info.spec.name = name;
    info.spec.domain = domain;
    info.spec.ret = ret;
    info.spec.args = std::move(args);
    table.add(std::move(info));
  };
  add("cudaMalloc", "cuda", ReturnKind::kInt32,
      {{"ptr", ArgSource::kRegister, 0, ArgKind::kDerefU64, ArgFormat::kHex, true, 0, 0},
       {"size", ArgSource::kRegister, 1, ArgKind::kRaw, ArgFormat::kUnsigned, false, 0, 0}});
  add("cuModuleGetFunction", "cuda_driver", ReturnKind::kInt32,
      {{"func", ArgSource::kRegister, 0, ArgKind::kDerefU64, ArgFormat::kHex, true, 0, 0},
       {"name", ArgSource::kRegister, 2, ArgKind::kString, ArgFormat::kUnsigned, false, 0, 0}});
  add("py_call", "python", ReturnKind::kNone,
      {{"function", ArgSource::kRegister, 0, ArgKind::kString, ArgFormat::kUnsigned, false, 0, 0},
       {"file", ArgSource::kRegister, 1, ArgKind::kString, ArgFormat::kUnsigned, false, 0, 0},
       {"line", ArgSource::kRegister, 2, ArgKind::kU32, ArgFormat::kSigned, false, 0, 0}});
  add("cudaLaunchKernel", "cuda", ReturnKind::kInt32,
      {{"func", ArgSource::kRegister, 0, ArgKind::kRaw, ArgFormat::kHex, false, 0, 0},
       {"grid", ArgSource::kRegister, 1, ArgKind::kDim3, ArgFormat::kUnsigned, false, 0, 0},
       {"block", ArgSource::kRegister, 3, ArgKind::kDim3, ArgFormat::kUnsigned, false, 0, 0}});
  add("malloc", "libc", ReturnKind::kPointer,
      {{"size", ArgSource::kRegister, 0, ArgKind::kRaw, ArgFormat::kUnsigned, false, 0, 0}});
}

}  // namespace eacgm::fuzz
