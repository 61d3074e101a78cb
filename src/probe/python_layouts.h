// CPython's frame and code-object layouts (x86-64 release builds, 3.8 to 3.13): the
// offsets that let the python catalog read the running function at the interpreter's
// entry point, _PyEval_EvalFrameDefault, in interpreters built without USDT probes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/probe_spec.h"
#include "core/result.h"

namespace eacgm::probe {

class ElfSymbolTable;

struct PythonVersion {
  int major = 3;
  int minor = 0;
  friend bool operator==(const PythonVersion&, const PythonVersion&) = default;
};

// The version in an interpreter file's name: "python3.12", "/usr/lib/libpython3.12.so.1.0"
// -> 3.12. None for names without one ("python3", "libpython3.so") and for names with
// ABI flags ("python3.13t" free-threaded, "python3.12d" debug): their objects are laid
// out differently. The "m" of 3.7 and older ("libpython3.7m.so") is no such flag.
std::optional<PythonVersion> python_version_from_name(std::string_view path);

// PY_VERSION_HEX, which interpreters export as Py_Version (3.11+): 0x030c01f0 is 3.12.1.
// `open_path` is where the file is read; none when the file has no such constant.
std::optional<PythonVersion> python_version_constant(const std::string& open_path, const ElfSymbolTable& elf);

// Offsets in bytes, from the interpreter's own headers (docs/probes.md says how).
struct PythonFrameLayout {
  PythonVersion version;
  // The argument register holding the frame: rsi (1) from 3.9, whose
  // _PyEval_EvalFrameDefault(tstate, frame, throwflag) came with PEP 523's tstate; rdi (0)
  // in 3.8's _PyEval_EvalFrameDefault(PyFrameObject *f, int throwflag).
  std::uint8_t frame_register;
  const char* frame_type;          // what _PyEval_EvalFrameDefault's frame argument points to
  const char* code_field;          // the frame's code object field
  const char* name_field;          // the code object's name field
  std::uint16_t frame_code;        // frame -> code object (PyCodeObject*)
  std::uint16_t code_name;         // co_qualname (3.11+) or co_name (3.10 and older): a str
  std::uint16_t code_filename;     // co_filename: a str
  std::uint16_t code_firstlineno;  // co_firstlineno: an int
  std::uint16_t str_ascii_data;    // sizeof(PyASCIIObject): where a compact ASCII str's
                                   // characters start
};

// Every known layout, oldest first.
std::span<const PythonFrameLayout> python_frame_layouts();
// The layout of one version, or nullptr when there is none.
const PythonFrameLayout* python_frame_layout(PythonVersion version);

// How an interpreter file was matched to a layout.
struct PythonInterpreter {
  const PythonFrameLayout* layout = nullptr;
  std::string version_from;  // "file name" or "Py_Version"
};

// The layout for an interpreter file: the version in its name (`path`), or, for a name
// without one, the Py_Version constant it exports (3.11+). `open_path` is where the
// file is read. Errors say why the file cannot be read as a CPython interpreter.
Result<PythonInterpreter> python_interpreter_layout(const std::string& path, const std::string& open_path,
                                                    const ElfSymbolTable& elf);

// The raw arguments of the python catalog's frame-reading spec, in record order. The
// record's first string (str) is the function, the second (str2) the file.
enum PythonFrameArg : std::size_t {
  kFrameSp = 0,        // the stack pointer at entry (pairs the call with its return)
  kFrameCode = 1,      // the code object: deref_u64 of the frame argument (rsi; rdi on 3.8)
  kFrameNameObj = 2,   // the name str: deref_u64 of the code object
  kFrameFunction = 3,  // its characters
  kFrameFileObj = 4,   // the file name str
  kFrameFile = 5,      // its characters
  kFrameLine = 6,      // co_firstlineno
  kFrameArgCount = 7,
};

// The frame-reading args for a layout; without one, the same chain with zero offsets (the
// catalog's description, completed per file).
std::vector<ArgSpec> python_frame_args(const PythonFrameLayout* layout);

}  // namespace eacgm::probe
