// The line-semaphore hold for CPython 3.11's function__entry (probe/python_usdt.h).
#include "probe/python_usdt.h"

#include <fmt/format.h>

#include "probe/elf_symbols.h"
#include "probe/python_layouts.h"

namespace eacgm::probe {

Result<std::optional<SemaphoreHold>> cpython_entry_gate(const std::string& path, const std::string& open_path,
                                                        const ElfSymbolTable& elf,
                                                        const std::vector<UsdtProbe>& notes) {
  std::optional<PythonVersion> version = python_version_from_name(path);
  if (!version) version = python_version_constant(open_path, elf);  // 3.11+ export it
  if (!version || *version != PythonVersion{3, 11}) return std::optional<SemaphoreHold>();
  SemaphoreHold hold;
  for (const UsdtProbe& p : notes) {
    if (p.provider == "python" && p.name == "line" && p.semaphore_offset != 0)
      hold.ref_ctr_offset = p.semaphore_offset;
  }
  if (hold.ref_ctr_offset == 0) {
    return make_error(
        fmt::format("{}: CPython 3.11 without a python:line probe semaphore: its calls have no "
                    "durations (function__entry fires only from its tracing dispatch)",
                    path));
  }
  const ElfSymbol* fin = elf.find("Py_FinalizeEx");
  if (fin == nullptr || !fin->is_function || fin->file_offset == 0) {
    return make_error(
        fmt::format("{}: no Py_FinalizeEx to hold the python:line semaphore at: its calls have no "
                    "durations",
                    path));
  }
  hold.file_offset = fin->file_offset;
  return std::optional<SemaphoreHold>(hold);
}

}  // namespace eacgm::probe
