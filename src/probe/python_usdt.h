// CPython 3.11's USDT function__entry fires only from the eval loop's tracing dispatch
// (DO_TRACING, at each call's RESUME instruction), which the interpreter takes while a
// tracer is set or while the `python:line` probe's semaphore is raised (its DISPATCH()
// ORs PyDTrace_LINE_ENABLED() into the opcode). Inlined Python-to-Python calls, nearly
// all calls, fire function__return but no entry otherwise. Raising the line semaphore,
// with no probe on the line site, makes every call fire its entry; the interpreter then
// dispatches every instruction through that slower path while the probes are attached.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "probe/usdt_notes.h"

namespace eacgm::probe {

class ElfSymbolTable;

// A semaphore to keep raised, and where the uprobe that holds it goes: a function that
// runs at most once per process, so that holding it costs nothing.
struct SemaphoreHold {
  std::uint64_t file_offset = 0;     // Py_FinalizeEx's first instruction
  std::uint64_t ref_ctr_offset = 0;  // the `python:line` semaphore
};

// What an interpreter file needs for function__entry to fire: none for versions other
// than 3.11 (3.10 and older fire it at every frame; 3.12+ have no function probes);
// an error when a 3.11 file has no line semaphore or no Py_FinalizeEx to hold it at.
// `path` is the name the file was matched by, `open_path` where it is read.
Result<std::optional<SemaphoreHold>> cpython_entry_gate(const std::string& path, const std::string& open_path,
                                                        const ElfSymbolTable& elf,
                                                        const std::vector<UsdtProbe>& notes);

}  // namespace eacgm::probe
