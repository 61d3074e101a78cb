// The probe-spec model: what to trace (library, symbol) and what to capture.
// Built-in catalogs and the user's config file both produce these values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace eacgm {

enum class ArgSource : std::uint8_t {
  kRegister = 1,  // System V argument register `index` 0..5 (rdi..r9)
  kStack = 2,     // stack argument slot `index`
  kPtReg = 3,     // any general register: `index` is a bpf/events.h eacgm_reg slot
  kPtRegMem = 4,  // memory at register `index` + `displacement` (USDT "8@-24(%rbp)")
  kUsdtArg = 5,   // USDT operand number `index`; the attacher replaces it with the
                  // operand's kPtReg/kPtRegMem location read from the file's note
  kArg = 6,       // pointer chains: the value captured by the earlier arg number `index`
                  // of this spec (a deref kind's result: the next pointer) is this arg's word
};

enum class ArgKind : std::uint8_t {
  kRaw = 0,        // the 64-bit word (pointers, sizes, handles)
  kU32 = 1,        // low 32 bits (enums, ints)
  kDerefU32 = 2,   // *(uint32_t*)word
  kDerefU64 = 3,   // *(uint64_t*)word (out-pointers such as cudaMalloc's devPtr)
  kDim3 = 4,       // dim3 passed by value: x,y in this register, z in the next slot
  kDerefDim3 = 5,  // *(dim3*)word
  kString = 6,     // NUL-terminated string at word (at most two per spec: the first
                   // fills CallEvent::str, the second CallEvent::str2)
  kDim3Split = 7,  // x, y, z as three consecutive u32 arguments starting at this slot
                   // (cuLaunchKernel's gridDimX..Z); past r9 they continue on the stack
  kU8 = 8,         // low 8 bits (1-byte USDT operands)
  kU16 = 9,        // low 16 bits
};

// How the captured value is shown (does not change what the kernel reads).
enum class ArgFormat : std::uint8_t {
  kUnsigned,  // decimal
  kSigned,    // decimal, two's complement of the captured width
  kHex,       // "0x..." (pointers, handles)
};

struct ArgSpec {
  std::string name;  // JSON key, snake_case (`size`, `ptr`, `grid`)
  ArgSource source = ArgSource::kRegister;
  std::uint8_t index = 0;  // register 0..5 (rdi..r9) or stack slot 0..
  ArgKind kind = ArgKind::kRaw;
  ArgFormat format = ArgFormat::kUnsigned;
  bool at_exit = false;           // dereference at function exit (out-parameters)
  std::uint16_t offset = 0;       // deref kinds: read at word + offset (a field of a struct)
  std::int32_t displacement = 0;  // kPtRegMem: bytes from the register (-32768..32767)
  // A kString capture that continues the spec's first string (same pointer, offset
  // kStringContinuation): the record's second string area then holds the bytes the first
  // could not, ingest joins the two and the formats show them as one value. Kernel names
  // are longer than one string area (Triton's, C++ templates).
  bool continues = false;
};

// The first string area holds this many bytes before its NUL (bpf/events.h EACGM_STR_LEN - 1).
inline constexpr std::uint16_t kStringContinuation = 63;

// A value computed from captured arguments, reported under a name of its own.
struct DerivedArg {
  enum class Op : std::uint8_t {
    kCopy,                // name = from (e.g. cudaMemcpy's `bytes` = `count`)
    kTimesNcclDtype,      // name = from * sizeof(NCCL datatype in `with`)
    kProduct,             // name = from * with (cudaMemcpy2D's `bytes` = width * height)
    kKernelName,          // name = kernel name of the handle in `from` (host stub pointer or
                          // CUfunction), resolved by ingest (CallEvent::kernel); string or null
    kNcclDtypeName,       // name = NCCL datatype name of `from` ("float32"), a string
    kNcclRedOpName,       // name = NCCL reduction op name of `from` ("sum"), a string
    kCudaMemcpyKindName,  // name = cudaMemcpyKind name of `from` ("cudaMemcpyHostToDevice")
    kTimes2,              // name = from * 2 (cuMemsetD16's `bytes` = element count * 2)
    kTimes4,              // name = from * 4 (cuMemsetD32's `bytes` = element count * 4)
  };
  std::string name;
  Op op = Op::kCopy;
  std::string from;
  std::string with;
  // kProduct only: a third factor (cuMemcpy3D's depth), and a constant one (the element
  // size of cuMemsetD2D16/32: width is counted in elements).
  std::string with2 = {};
  std::uint32_t scale = 1;
};

// The GPU work a call issues, counted once per operation whichever API layer issued it
// (analysis/gpu_work.h): a runtime call's nested driver call is the same operation.
enum class GpuWork : std::uint8_t {
  kNone,
  kKernel,       // a kernel launch (its `kernel` name, `stream`)
  kMemset,       // a memset (`bytes`, `stream`)
  kCopy,         // a copy (`bytes`, `stream`, a direction)
  kGraphLaunch,  // a CUDA graph launch: the kernels, memsets and copies of its executable graph
  kGraphNode,    // a node added to a graph (cudaGraphAdd*Node): recorded, not executed
};

enum class ReturnKind : std::uint8_t {
  kNone,   // entry-only probe, or the return value is meaningless (void)
  kInt32,  // error codes (cudaError_t, CUresult, ncclResult_t)
  kInt64,
  kPointer,
};

// Which results of a call are failures. The catalogs' functions return error codes
// (non-zero) or pointers (null); what a user's function returns is data unless its spec
// says otherwise.
enum class ErrorRule : std::uint8_t {
  kNone,      // never a failure
  kNonZero,   // any value but 0 (cudaError_t, CUresult, ncclResult_t)
  kNegative,  // a negative value (a kernel-style -errno)
  kMinusOne,  // -1 (libc's style; the reason is in errno, which a probe does not read)
  kNull,      // a null pointer (an allocator's)
};

// How a pattern spec names each matched symbol (ProbeInfo::function).
enum class NameRule : std::uint8_t {
  kDemangled,  // the demangled symbol
  kTorchOp,    // libtorch_python's THPVariable_<op> bindings: the op ("gelu", "add_")
};

// Where a spec's capture offsets come from, per library file.
enum class ArgLayout : std::uint8_t {
  kFixed,         // the args as written
  kCPythonFrame,  // CPython's frame and code-object offsets for the interpreter version of
                  // the file (probe/python_layouts.cpp): the args are replaced per file
};

// What must also be raised, per file, for a USDT probe to fire.
enum class UsdtGate : std::uint8_t {
  kNone,
  kCPythonLineTracing,  // CPython 3.11 fires function__entry only from its tracing dispatch,
                        // which the `python:line` probe's semaphore turns on
                        // (probe/python_usdt.h); other versions need nothing
};

// What the always-on mode (counts at entry, sampled durations) does with a probe.
enum class AlwaysOn : std::uint8_t {
  kPerCall,  // needs each call (allocation addresses, names, NCCL, Python): a record per call
  kCount,    // counted at entry, one call in N timed; no record
  kSkip,     // not attached: every call also reaches a counted probe of another layer
             // (a runtime launch reaches the driver's cuLaunchKernel)
};

struct ProbeSpec {
  std::string name;     // unique spec name (`cudaMalloc`, or the user's)
  std::string domain;   // `cuda`, `cuda_driver`, `nccl`, `torch`, `python`, user's
  std::string library;  // glob on the library file name (`libcudart.so*`)
  std::string symbol;   // exact symbol name, or a glob when symbol_is_pattern
  bool symbol_is_pattern = false;
  // A USDT probe "provider:name" (`python:function__entry`) instead of a symbol; it is
  // entry-only, and kUsdtArg arguments take their locations from the probe's note.
  std::string usdt;
  NameRule name_rule = NameRule::kDemangled;
  bool with_exit = true;  // entry+exit (duration, return value) or entry-only
  ReturnKind ret = ReturnKind::kInt32;
  // Unset: by `ret` (int32 error codes non-zero, pointers null, others never), as the
  // catalogs' functions return them; the config file sets it (default: none).
  std::optional<ErrorRule> errors;
  std::vector<ArgSpec> args;  // at most 8
  std::vector<DerivedArg> derived;
  // Calls of other probes made on the same thread while this one runs are flagged
  // nested (a runtime call reaching the driver), so they are not counted twice.
  bool outer = false;
  // A call its thread may stay in for long (a lock, a barrier, a blocking read): while
  // one runs it is listed in flight with its age (the agent's scan of the kernel's
  // table), and sampled Python stacks of the thread end in it. Needs with_exit. The
  // catalogs' waiting calls (synchronisations, blocking copies, NCCL) are known by name
  // (probe/always_on.h waits_in_calls); the config file's `waits` sets it.
  bool waits = false;
  // With with_exit: the entry and the return come as two records (the return carries the
  // return value and the stack pointer) that ingest pairs, instead of one record paired
  // in the kernel, so calls of the probe can nest deeper than the kernel's per-thread
  // limit of open calls (recursive interpreters). Args are read at entry only.
  bool split_return = false;
  ArgLayout layout = ArgLayout::kFixed;
  // A fallback for a USDT probe ("python:function__entry"): attached only to files that
  // lack that probe (files that have it are traced through it). The probe, not just its
  // provider: CPython 3.12+ built with dtrace keeps python:gc__start and others but has
  // no function__entry.
  std::string unless_usdt;
  // A USDT probe's gate: raised while the probe is attached to a file that needs it.
  UsdtGate usdt_gate = UsdtGate::kNone;
  // Built-in catalogs classify their specs (probe/always_on.cpp); the user's specs stay
  // per call, as written.
  AlwaysOn always_on = AlwaysOn::kPerCall;
  // A runtime spec standing in for the driver's probes of its operation (one layer per
  // operation, probe/always_on.h specs_for_mode): attached only while no driver probe of
  // that operation is attached anywhere, and detached when the first one attaches.
  bool until_driver = false;
  // What GPU work a call of the probe issues, and for copies the direction when the
  // function fixes it ("HtoD", "DtoH", "DtoD", "HtoA", "AtoH", "AtoD", "DtoA", "AtoA",
  // "peer"); "" where the call's arguments tell (a `kind`, or `src_type`/`dst_type`).
  GpuWork work = GpuWork::kNone;
  std::string direction;
  // Also attach to any file that defines this symbol, whatever its name: a CUDA runtime
  // linked statically into a program or library (nvcc's default) is found by its
  // `cudaLaunchKernel`, not by the name libcudart.so.
  std::string also_where_defined;
};

// Limits the BPF side imposes (bpf/events.h).
inline constexpr std::size_t kMaxArgs = 8;
inline constexpr std::uint8_t kMaxRegisterIndex = 5;
inline constexpr std::uint8_t kMaxStackSlot = 31;
inline constexpr std::uint8_t kRegisterSlots = 16;  // enum eacgm_reg
inline constexpr std::size_t kMaxStringArgs = 2;    // str and str2

// The rule a spec's results are read by: its own, else by its return kind.
inline ErrorRule error_rule(const ProbeSpec& spec) {
  if (spec.errors) return *spec.errors;
  switch (spec.ret) {
    case ReturnKind::kInt32:
      return ErrorRule::kNonZero;
    case ReturnKind::kPointer:
      return ErrorRule::kNull;
    case ReturnKind::kNone:
    case ReturnKind::kInt64:
      break;
  }
  return ErrorRule::kNone;
}

// Whether `ret`, the raw return register of a call of `spec`, is a failure.
inline bool is_failure(const ProbeSpec& spec, std::int64_t ret) {
  // An int32's upper half is whatever the register held: only the low half is the value.
  const std::int64_t value = spec.ret == ReturnKind::kInt32 ? static_cast<std::int32_t>(ret) : ret;
  switch (error_rule(spec)) {
    case ErrorRule::kNone:
      return false;
    case ErrorRule::kNonZero:
      return value != 0;
    case ErrorRule::kNegative:
      return value < 0;
    case ErrorRule::kMinusOne:
      return value == -1;
    case ErrorRule::kNull:
      return value == 0;
  }
  return false;
}

// Position of the argument named `name` among the captured ones, or -1 (arguments past
// kMaxArgs are never captured, so they have none).
inline int arg_index(const ProbeSpec& spec, std::string_view name) {
  for (std::size_t i = 0; i < spec.args.size() && i < kMaxArgs; ++i) {
    if (spec.args[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace eacgm
