// The Python catalog. Interpreters built with --with-dtrace are traced through CPython's
// USDT probes function__entry/function__return (entry-only records); the others through
// frame reading at their entry point _PyEval_EvalFrameDefault (entry and return records).
// ingest/python_calls turns both into the same calls.
#include "probe/catalog.h"
#include "probe/python_layouts.h"

namespace eacgm::probe {
namespace {

// The interpreter executable (python3.11) or, for shared builds, libpython3.11.so.
constexpr const char* kInterpreterFiles = "*python3*";

// CPython passes (filename, funcname, lineno) to both probes. The function name is the
// spec's first string (record str, 64 bytes), the file its second (str2, 128 bytes).
ProbeSpec usdt_spec(const char* name, const char* usdt) {
  ProbeSpec s;
  s.name = name;
  s.domain = "python";
  s.library = kInterpreterFiles;
  s.usdt = usdt;
  s.with_exit = false;
  s.ret = ReturnKind::kNone;
  s.args = {ArgSpec{"function", ArgSource::kUsdtArg, 1, ArgKind::kString, ArgFormat::kUnsigned, false, 0, 0},
            ArgSpec{"file", ArgSource::kUsdtArg, 0, ArgKind::kString, ArgFormat::kUnsigned, false, 0, 0},
            ArgSpec{"line", ArgSource::kUsdtArg, 2, ArgKind::kU32, ArgFormat::kSigned, false, 0, 0}};
  return s;
}

// Interpreters without USDT probes: the code object of the frame that
// _PyEval_EvalFrameDefault(tstate, frame, throwflag) is entered with, read through a
// pointer chain whose offsets depend on the interpreter's version (python_layouts.cpp).
// Entry and return are separate records, paired in ingest by the stack pointer, so the
// interpreter's recursion is not limited by the kernel's per-thread table of open calls.
ProbeSpec frame_spec() {
  ProbeSpec s;
  s.name = kPythonFrameSpec;
  s.domain = "python";
  s.library = kInterpreterFiles;
  s.symbol = "_PyEval_EvalFrameDefault";
  s.with_exit = true;
  s.split_return = true;
  s.ret = ReturnKind::kPointer;  // the frame's result; NULL when it raised
  s.layout = ArgLayout::kCPythonFrame;
  s.unless_usdt = "python:function__entry";
  s.args = python_frame_args(nullptr);
  return s;
}

}  // namespace

Catalog python_catalog() {
  Catalog c{"python",
            "Python functions (CPython's USDT function__entry/return, or frame reading at "
            "_PyEval_EvalFrameDefault for interpreters without USDT; opt-in)",
            {}};
  c.specs.push_back(usdt_spec(kPythonEntrySpec, "python:function__entry"));
  c.specs.back().usdt_gate = UsdtGate::kCPythonLineTracing;  // 3.11: probe/python_usdt.h
  c.specs.push_back(usdt_spec(kPythonReturnSpec, "python:function__return"));
  c.specs.push_back(frame_spec());
  return c;
}

}  // namespace eacgm::probe
