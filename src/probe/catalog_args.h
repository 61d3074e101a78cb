// Shorthands the built-in catalogs use to place arguments (x86-64 System V: register
// index 0..5 = rdi rsi rdx rcx r8 r9; stack slot n = the n-th 8-byte stack argument).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/probe_spec.h"

namespace eacgm::probe::catalog_args {

inline ArgSpec reg(const char* name, std::uint8_t index, ArgKind kind = ArgKind::kRaw,
                   ArgFormat format = ArgFormat::kUnsigned) {
  return ArgSpec{name, ArgSource::kRegister, index, kind, format, false, 0};
}
inline ArgSpec stack(const char* name, std::uint8_t slot, ArgKind kind = ArgKind::kRaw,
                     ArgFormat format = ArgFormat::kUnsigned) {
  return ArgSpec{name, ArgSource::kStack, slot, kind, format, false, 0};
}
// Pointers and handles, shown as hex.
inline ArgSpec hex(const char* name, std::uint8_t index) {
  return reg(name, index, ArgKind::kRaw, ArgFormat::kHex);
}
inline ArgSpec stack_hex(const char* name, std::uint8_t slot) {
  return stack(name, slot, ArgKind::kRaw, ArgFormat::kHex);
}
// Out-parameters: written by the call, read through the pointer at its exit.
inline ArgSpec out_ptr(const char* name, std::uint8_t index) {
  return ArgSpec{name, ArgSource::kRegister, index, ArgKind::kDerefU64, ArgFormat::kHex, true, 0};
}
// A size written by the call (cudaMallocPitch's pitch), shown in decimal.
inline ArgSpec out_size(const char* name, std::uint8_t index) {
  return ArgSpec{name, ArgSource::kRegister, index, ArgKind::kDerefU64, ArgFormat::kUnsigned, true, 0};
}
inline ArgSpec out_int(const char* name, std::uint8_t index) {
  return ArgSpec{name, ArgSource::kRegister, index, ArgKind::kDerefU32, ArgFormat::kSigned, true, 0};
}
// A field of a struct passed by pointer in register `index`.
inline ArgSpec field(const char* name, std::uint8_t index, std::uint16_t offset, ArgKind kind,
                     ArgFormat format = ArgFormat::kUnsigned) {
  return ArgSpec{name, ArgSource::kRegister, index, kind, format, false, offset};
}

// The name string at register `index`: its first 63 bytes in the record's first string
// area and the next 127 in the second (`continues`), so names up to 190 bytes are read
// while the call runs; ingest reads what is longer from the process.
inline std::vector<ArgSpec> long_string(const char* name, const char* rest, std::uint8_t index,
                                        bool at_exit) {
  ArgSpec head{name, ArgSource::kRegister, index, ArgKind::kString, ArgFormat::kUnsigned, at_exit, 0};
  ArgSpec tail{rest,    ArgSource::kRegister, index, ArgKind::kString, ArgFormat::kUnsigned,
               at_exit, kStringContinuation};
  tail.continues = true;
  return {head, tail};
}

// An entry+exit spec for a C API returning an int32 status (cudaError_t, CUresult,
// ncclResult_t), probed under its own name.
inline ProbeSpec api_spec(std::string name, const char* domain, const char* library,
                          std::vector<ArgSpec> args, std::vector<DerivedArg> derived) {
  ProbeSpec s;
  s.symbol = name;
  s.name = std::move(name);
  s.domain = domain;
  s.library = library;
  s.with_exit = true;
  s.ret = ReturnKind::kInt32;
  s.args = std::move(args);
  s.derived = std::move(derived);
  return s;
}

}  // namespace eacgm::probe::catalog_args
