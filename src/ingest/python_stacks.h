// Turns the Python sampler's records into named stacks: each code object address is read
// per process (its name, file, first line, line table, bytecode length and identity, from
// the process's memory while it lives) at its first sample, and again when a frame's
// instruction lies outside the bytecode read there or the frame's code identity is not the
// one read (the code object was freed and another one allocated at its address); each
// frame's line is found in that table.
// Runs on the reader thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/call_event.h"
#include "core/python_stack.h"

namespace eacgm::ingest {

struct PythonStackCounters {
  std::uint64_t samples = 0;       // sampled records decoded
  std::uint64_t thread_reads = 0;  // records of stacks read from memory (stuck threads) decoded
  std::uint64_t in_calls = 0;      // of those, ending in a native frame (a traced waiting call)
  std::uint64_t malformed = 0;     // records of the wrong size or an unknown interpreter version
  // Reads that left a frame unnamed: the process was gone, the object was no longer a code
  // object, or no longer the one sampled (freed and its address reused before the read).
  std::uint64_t unnamed = 0;
  std::uint64_t codes = 0;   // code objects named, in total
  std::uint64_t reread = 0;  // kept code objects found replaced at their address, read again
};

// Reads a code object of CPython 3.`minor` at `addr` in process `pid`: its type, names,
// line table and bytecode's extent; nullopt when its memory cannot be read. Tests put in
// a fake.
struct PythonCodeInfo {
  std::shared_ptr<const PythonCode> code;  // nullptr: its names could not be read
  std::vector<std::uint8_t> linetable;
  std::uint64_t first_unit = 0;  // 3.11+: the address of its first code unit
  std::uint64_t code_bytes = 0;  // the bytecode's length in bytes; 0: unknown (not checked)
  std::uint64_t type = 0;        // ob_type: PyCode_Type's address while it is a code object
  std::uint32_t code_id = 0;     // its identity (bpf/py_sample.h, eacgm_py_code_id)
};
using PythonCodeReader =
    std::function<std::optional<PythonCodeInfo>(std::uint32_t pid, int minor, std::uint64_t addr)>;

// The reader of live processes (process_vm_readv).
std::optional<PythonCodeInfo> read_python_code(std::uint32_t pid, int minor, std::uint64_t addr);

// PyCode_Type's address in a process, as the sampler was given it (the sampler's process
// map); 0 when the process is not sampled. Called on the reader thread at each read.
using CodeTypeLookup = std::function<std::uint64_t(std::uint32_t pid)>;

// The probe behind a probe id (the tracer's table), which names the native frame of a
// sample taken inside a traced call; nullptr when unknown. Tests put in a fake.
using ProbeLookup = std::function<std::shared_ptr<const ProbeInfo>(std::uint32_t probe_id)>;

class PythonStackDecoder {
 public:
  // Without `probes`, samples taken inside a traced call have no native frame; without
  // `code_types`, what is read is not checked to be a code object still.
  explicit PythonStackDecoder(PythonCodeReader reader = read_python_code, ProbeLookup probes = {},
                              CodeTypeLookup code_types = {})
      : reader_(std::move(reader)), probes_(std::move(probes)), code_types_(std::move(code_types)) {}
  // Decodes one record into `out` (its storage reused); false for a malformed record.
  // `thread_read`: a record read_thread_stack wrote (a stuck thread's stack, read from
  // its memory), counted as such and not as a sample.
  bool decode(const void* data, std::size_t size, PythonStack& out, bool thread_read = false);
  // Drops what is known of a process (it exec'd: its addresses mean something else).
  void forget(std::uint32_t pid) { processes_.erase(pid); }
  // Drops the processes for which `alive(pid)` is false; returns how many.
  std::size_t forget_unless(const std::function<bool(std::uint32_t)>& alive);
  const PythonStackCounters& counters() const { return counters_; }

  // Code objects kept per process; past it new ones are named but not kept.
  static constexpr std::size_t kMaxCodesPerProcess = 1u << 16;

 private:
  struct Code {
    std::shared_ptr<const PythonCode> code;
    std::vector<std::uint8_t> linetable;
    std::uint64_t first_unit = 0;
    std::uint64_t code_bytes = 0;
    std::uint32_t code_id = 0;
    // Whether a frame sampled at `instr` with identity `sampled_id` ran this code: its
    // identity is this one's and the instruction lies in its bytecode.
    bool ran(int minor, std::uint64_t instr, std::uint32_t sampled_id) const;
  };
  // The code object of a frame sampled at `instr` in the code at `addr` whose identity was
  // `code_id`: the one kept for that address while the instruction lies in it and the
  // identity is its own, else read (again).
  const Code& code(std::uint32_t pid, int minor, std::uint64_t addr, std::uint64_t instr,
                   std::uint32_t code_id);
  // A frame's code named by its address, for this frame only (not kept).
  const Code& unnamed(std::uint64_t addr);
  // The native frame of a traced call, made once per probe (again when its id has a new
  // owner); nullptr for an unknown probe.
  std::shared_ptr<const PythonCode> call_frame(std::uint32_t probe_id);

  PythonCodeReader reader_;
  ProbeLookup probes_;
  CodeTypeLookup code_types_;
  struct NativeCall {
    std::shared_ptr<const ProbeInfo> probe;
    std::shared_ptr<const PythonCode> code;
  };
  std::unordered_map<std::uint32_t, NativeCall> calls_;  // by probe id: the waiting probes seen
  std::unordered_map<std::uint32_t, std::unordered_map<std::uint64_t, Code>> processes_;
  Code scratch_;  // a code object not kept (the process's cache is full, or a frame's alone)
  PythonStackCounters counters_;
};

}  // namespace eacgm::ingest
