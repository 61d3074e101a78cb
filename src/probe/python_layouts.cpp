// The layout table and the interpreter-version detection behind it.
#include "probe/python_layouts.h"

#include <fmt/format.h>

#include <array>

#include "bpf/events.h"
#include "core/proc_file.h"
#include "probe/elf_symbols.h"

namespace eacgm::probe {
namespace {

// From offsetof/sizeof compiled against each version's headers with Py_BUILD_CORE
// (frameobject.h or internal/pycore_frame.h, cpython/code.h, cpython/unicodeobject.h) of
// CPython 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1 and 3.13.0, x86-64, release builds;
// tests/unit/probe/python_layouts_test.cpp re-derives them where those headers are installed.
constexpr std::array<PythonFrameLayout, 6> kLayouts = {{
    // 3.8: _PyEval_EvalFrameDefault(PyFrameObject *f, int throwflag), the frame first;
    // objects as in 3.10.
    {{3, 8}, 0, "PyFrameObject", "f_code", "co_name", 32, 112, 104, 40, 48},
    // 3.9: the thread state became the first argument.
    {{3, 9}, 1, "PyFrameObject", "f_code", "co_name", 32, 112, 104, 40, 48},
    // 3.10: every Python call recurses through _PyEval_EvalFrameDefault(tstate,
    // PyFrameObject *f, throwflag); a heap frame object, f_code after the var-object
    // header and f_back. No co_qualname yet.
    {{3, 10}, 1, "PyFrameObject", "f_code", "co_name", 32, 112, 104, 40, 48},
    // 3.11: _PyInterpreterFrame *frame; f_code after f_func, f_globals, f_builtins, f_locals.
    {{3, 11}, 1, "_PyInterpreterFrame", "f_code", "co_qualname", 32, 128, 112, 72, 48},
    // 3.12: f_code first; PyASCIIObject lost its wstr pointer (40 bytes, not 48).
    {{3, 12}, 1, "_PyInterpreterFrame", "f_code", "co_qualname", 0, 128, 112, 68, 40},
    // 3.13: f_executable (a code object for Python frames) first.
    {{3, 13}, 1, "_PyInterpreterFrame", "f_executable", "co_qualname", 0, 128, 112, 68, 40},
}};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "3.12" at the start of `s`, followed by the end of the name or a '.'.
std::optional<PythonVersion> parse_version(std::string_view s) {
  if (s.size() < 3 || s[0] != '3' || s[1] != '.' || !is_digit(s[2])) return std::nullopt;
  std::size_t i = 2;
  int minor = 0;
  while (i < s.size() && is_digit(s[i]) && i < 5) minor = minor * 10 + (s[i++] - '0');
  // 3.7 and older name default (pymalloc) builds with an "m", which changes no layout.
  if (i < s.size() && s[i] == 'm' && (i + 1 == s.size() || s[i + 1] == '.')) ++i;
  if (i < s.size() && s[i] != '.') return std::nullopt;  // ABI flags (t, d) or another word
  return PythonVersion{3, minor};
}

ArgSpec chain_arg(const char* name, ArgSource source, std::uint8_t index, ArgKind kind, ArgFormat format,
                  std::uint16_t offset) {
  ArgSpec a;
  a.name = name;
  a.source = source;
  a.index = index;
  a.kind = kind;
  a.format = format;
  a.offset = offset;
  return a;
}

}  // namespace

std::optional<PythonVersion> python_version_from_name(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  constexpr std::string_view kPython = "python";
  const std::size_t at = name.find(kPython);
  if (at == std::string_view::npos) return std::nullopt;
  return parse_version(name.substr(at + kPython.size()));
}

std::optional<PythonVersion> python_version_constant(const std::string& open_path,
                                                     const ElfSymbolTable& elf) {
  const ElfSymbol* sym = elf.find("Py_Version");
  // An unsigned long; its low four bytes (little-endian) hold the whole value.
  if (sym == nullptr || sym->is_function || sym->file_offset == 0 || sym->size < 4) {
    return std::nullopt;
  }
  const auto bytes = read_file_at(open_path, sym->file_offset, 4);
  if (!bytes) return std::nullopt;
  const auto b = [&](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>((*bytes)[i]));
  };
  const std::uint32_t hex = b(0) | (b(1) << 8) | (b(2) << 16) | (b(3) << 24);
  return PythonVersion{static_cast<int>(hex >> 24), static_cast<int>((hex >> 16) & 0xff)};
}

std::span<const PythonFrameLayout> python_frame_layouts() { return kLayouts; }

const PythonFrameLayout* python_frame_layout(PythonVersion version) {
  for (const auto& l : kLayouts) {
    if (l.version == version) return &l;
  }
  return nullptr;
}

Result<PythonInterpreter> python_interpreter_layout(const std::string& path, const std::string& open_path,
                                                    const ElfSymbolTable& elf) {
  PythonInterpreter out;
  std::optional<PythonVersion> v = python_version_from_name(path);
  out.version_from = "file name";
  if (!v) {
    v = python_version_constant(open_path, elf);
    out.version_from = "Py_Version";
  }
  if (!v) {
    return make_error(
        fmt::format("{}: cannot tell its CPython version (no python3.N in the file name, no Py_Version; "
                    "free-threaded and debug builds are not supported)",
                    path));
  }
  out.layout = python_frame_layout(*v);
  if (out.layout == nullptr) {
    return make_error(fmt::format("{}: CPython {}.{} has no known frame layout (3.8 to 3.13 do)", path,
                                  v->major, v->minor));
  }
  return out;
}

std::vector<ArgSpec> python_frame_args(const PythonFrameLayout* layout) {
  PythonFrameLayout l{};
  l.frame_register = 1;  // the description's: _PyEval_EvalFrameDefault(tstate, frame, throwflag)
  if (layout != nullptr) l = *layout;
  constexpr auto kHex = ArgFormat::kHex;
  constexpr auto kU64 = ArgKind::kDerefU64;
  constexpr auto kFromArg = ArgSource::kArg;
  std::vector<ArgSpec> args = {
      chain_arg("sp", ArgSource::kPtReg, EACGM_REG_RSP, ArgKind::kRaw, kHex, 0),
      chain_arg("code", ArgSource::kRegister, l.frame_register, kU64, kHex, l.frame_code),
      chain_arg("name_obj", kFromArg, kFrameCode, kU64, kHex, l.code_name),
      chain_arg("function", kFromArg, kFrameNameObj, ArgKind::kString, ArgFormat::kUnsigned,
                l.str_ascii_data),
      chain_arg("file_obj", kFromArg, kFrameCode, kU64, kHex, l.code_filename),
      chain_arg("file", kFromArg, kFrameFileObj, ArgKind::kString, ArgFormat::kUnsigned, l.str_ascii_data),
      chain_arg("line", kFromArg, kFrameCode, ArgKind::kDerefU32, ArgFormat::kSigned, l.code_firstlineno),
  };
  return args;
}

}  // namespace eacgm::probe
