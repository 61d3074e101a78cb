// How eacgm would trace one Python interpreter: exact calls through USDT or frame
// reading (the python catalog), and whether the stack sampler reads it; decided from the
// file that holds the interpreter's code, as the attacher and the sampler decide.
#pragma once

#include <optional>
#include <string>

#include "probe/interpreter_scan.h"

namespace eacgm::probe {

// What the interpreter's code file has.
struct InterpreterFacts {
  std::optional<PythonVersion> version;
  std::string abi_flags;
  bool catalog_name = false;  // the code file's name matches the python catalog's "*python3*"
  bool usdt_entry = false;    // a python:function__entry note
  bool eval_frame = false;    // defines _PyEval_EvalFrameDefault
  bool runtime = false;       // defines _PyRuntime and PyCode_Type (what the sampler reads)
};

// Reads the facts of an interpreter found by scan_interpreters (its code file's symbols
// and notes); an error when the code file cannot be read.
Result<InterpreterFacts> read_interpreter_facts(const FoundInterpreter& interpreter);

enum class CallMode : std::uint8_t {
  kNone,          // not traced by the python catalog
  kUsdt,          // python:function__entry/return
  kFrameReading,  // _PyEval_EvalFrameDefault, read through the version's frame layout
};

struct InterpreterModes {
  CallMode calls = CallMode::kNone;
  bool every_call = false;  // false on 3.11+ frame reading: inlined calls are not seen
  bool sampled = false;     // the stack sampler has a layout for it
  std::string calls_text;   // the mode and what it sees, or why there is none
  std::string stacks_text;  // whether stacks are sampled, or why not
};

InterpreterModes interpreter_modes(const InterpreterFacts& facts);

}  // namespace eacgm::probe
