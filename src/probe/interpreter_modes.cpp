// The per-interpreter mode decision, in the words `eacgm probes --check` prints.
#include "probe/interpreter_modes.h"

#include <fmt/format.h>

#include "probe/elf_symbols.h"
#include "probe/library_match.h"
#include "probe/python_stack_layouts.h"
#include "probe/usdt_notes.h"

namespace eacgm::probe {
namespace {

// The python catalog's interpreter files (catalog_python.cpp).
constexpr const char* kCatalogFiles = "*python3*";

std::string version_text(const PythonVersion& v) { return fmt::format("{}.{}", v.major, v.minor); }

std::string calls_without_mode(const InterpreterFacts& f) {
  if (!f.catalog_name) {
    return fmt::format("not traced: its file name does not match the python catalog's {}", kCatalogFiles);
  }
  if (!f.version) return "not traced: its version is not known (no python3.N in its names, no Py_Version)";
  const PythonVersion v = *f.version;
  if (v.major != 3)
    return fmt::format("not traced: CPython {} (the python catalog reads CPython 3)", version_text(v));
  if (!f.abi_flags.empty() && f.abi_flags != "m") {
    return fmt::format("not traced: a {} build (python{}{}) lays its objects out differently",
                       f.abi_flags.find('t') != std::string::npos ? "free-threaded" : "debug",
                       version_text(v), f.abi_flags);
  }
  if (!f.eval_frame) return "not traced: no USDT probes and no _PyEval_EvalFrameDefault";
  return fmt::format(
      "not traced: no USDT probes, and frame reading has no layout for CPython {} (3.8 to 3.13)",
      version_text(v));
}

}  // namespace

Result<InterpreterFacts> read_interpreter_facts(const FoundInterpreter& interpreter) {
  if (interpreter.code_file.empty()) return make_error(interpreter.path + ": " + interpreter.problem);
  InterpreterFacts f;
  f.version = interpreter.version;
  f.abi_flags = interpreter.abi_flags;
  f.catalog_name = library_matches(kCatalogFiles, interpreter.code_file);
  auto elf = ElfSymbolTable::load(interpreter.code_file);
  if (!elf) return std::move(elf).take_error();
  f.eval_frame = elf->find("_PyEval_EvalFrameDefault") != nullptr;
  f.runtime = elf->find("_PyRuntime") != nullptr && elf->find("PyCode_Type") != nullptr;
  if (auto notes = read_usdt_probes(interpreter.code_file)) {
    f.usdt_entry = has_usdt_probe(*notes, "python:function__entry");
  }
  return f;
}

InterpreterModes interpreter_modes(const InterpreterFacts& f) {
  InterpreterModes m;
  const bool release = f.abi_flags.empty() || f.abi_flags == "m";
  const bool python3 = f.version && f.version->major == 3;
  if (f.catalog_name && f.usdt_entry) {
    m.calls = CallMode::kUsdt;
    m.every_call = true;
    m.calls_text = "USDT (python:function__entry/return): every call, exact, with durations";
    if (f.version && *f.version == PythonVersion{3, 11}) {
      m.calls_text +=
          " (3.11: with its line probe's semaphore raised, which slows the interpreter; "
          "[python] usdt_durations)";
    }
  } else if (f.catalog_name && python3 && release && f.eval_frame &&
             python_frame_layout(*f.version) != nullptr) {
    m.calls = CallMode::kFrameReading;
    m.every_call = f.version->minor <= 10;
    m.calls_text = fmt::format("frame reading (CPython {} layout): exact calls with durations",
                               version_text(*f.version));
    if (!m.every_call) {
      m.calls_text +=
          "; 3.11+: Python-to-Python calls are inlined, exact mode sees only calls entering the eval loop";
    }
  } else {
    m.calls_text = calls_without_mode(f);
  }
  if (python3 && release && f.runtime && python_stack_layout(*f.version) != nullptr &&
      python_frame_layout(*f.version) != nullptr) {
    m.sampled = true;
    m.stacks_text = fmt::format("sampled (CPython {} layout)", version_text(*f.version));
  } else if (!f.version) {
    m.stacks_text = "not sampled: its version is not known";
  } else if (!python3 || !release) {
    m.stacks_text =
        fmt::format("not sampled: no stack layout for this build of CPython {}", version_text(*f.version));
  } else if (python_stack_layout(*f.version) == nullptr) {
    m.stacks_text = fmt::format("not sampled: no stack layout for CPython {} (3.8 to 3.13 have one)",
                                version_text(*f.version));
  } else {
    m.stacks_text = "not sampled: no _PyRuntime or PyCode_Type symbol";
  }
  return m;
}

}  // namespace eacgm::probe
