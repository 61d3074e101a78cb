// The probe-spec model: what to trace (library, symbol) and what to capture.
// Built-in catalogs and the user's config file both produce these values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace eacgm {

enum class ArgSource : std::uint8_t { kRegister = 1, kStack = 2 };

enum class ArgKind : std::uint8_t {
  kRaw = 0,        // the 64-bit word (pointers, sizes, handles)
  kU32 = 1,        // low 32 bits (enums, ints)
  kDerefU32 = 2,   // *(uint32_t*)word
  kDerefU64 = 3,   // *(uint64_t*)word (out-pointers such as cudaMalloc's devPtr)
  kDim3 = 4,       // dim3 passed by value: x,y in this register, z in the next slot
  kDerefDim3 = 5,  // *(dim3*)word
  kString = 6,     // NUL-terminated string at word (at most one per spec)
};

// How the captured value is shown (does not change what the kernel reads).
enum class ArgFormat : std::uint8_t {
  kUnsigned,  // decimal
  kSigned,    // decimal, two's complement of the captured width
  kHex,       // "0x..." (pointers, handles)
};

struct ArgSpec {
  std::string name;            // JSON key, snake_case (`size`, `ptr`, `grid`)
  ArgSource source = ArgSource::kRegister;
  std::uint8_t index = 0;      // register 0..5 (rdi..r9) or stack slot 0..
  ArgKind kind = ArgKind::kRaw;
  ArgFormat format = ArgFormat::kUnsigned;
  bool at_exit = false;        // dereference at function exit (out-parameters)
};

// A value computed from captured arguments, reported under a name of its own.
struct DerivedArg {
  enum class Op : std::uint8_t {
    kCopy,             // name = from (e.g. cudaMemcpy's `bytes` = `count`)
    kTimesNcclDtype,   // name = from * sizeof(NCCL datatype in `with`)
  };
  std::string name;
  Op op = Op::kCopy;
  std::string from;
  std::string with;
};

enum class ReturnKind : std::uint8_t {
  kNone,      // entry-only probe, or the return value is meaningless (void)
  kInt32,     // error codes (cudaError_t, CUresult, ncclResult_t)
  kInt64,
  kPointer,
};

struct ProbeSpec {
  std::string name;         // unique spec name (`cudaMalloc`, or the user's)
  std::string domain;       // `cuda`, `cuda_driver`, `nccl`, `torch`, `python`, user's
  std::string library;      // glob on the library file name (`libcudart.so*`)
  std::string symbol;       // exact symbol name, or a glob when symbol_is_pattern
  bool symbol_is_pattern = false;
  bool with_exit = true;    // entry+exit (duration, return value) or entry-only
  ReturnKind ret = ReturnKind::kInt32;
  std::vector<ArgSpec> args;  // at most 8
  std::vector<DerivedArg> derived;
};

// Limits the BPF side imposes (bpf/events.h).
inline constexpr std::size_t kMaxArgs = 8;
inline constexpr std::uint8_t kMaxRegisterIndex = 5;
inline constexpr std::uint8_t kMaxStackSlot = 31;

}  // namespace eacgm
