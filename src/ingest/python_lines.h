// Line numbers from CPython's line tables (co_lnotab, co_linetable): which source line an
// instruction of a code object belongs to, as the interpreter itself computes it.
#pragma once

#include <cstdint>
#include <span>

namespace eacgm::ingest {

// CPython 3.9 and older (co_lnotab): (bytes advanced, line delta) pairs from
// co_firstlineno, the delta a signed byte; an instruction at `byte_offset` (f_lasti) is on
// the line reached by the last pair whose bytes end at or before it (PyCode_Addr2Line).
int python_lnotab_line(std::span<const std::uint8_t> table, int first_line, std::uint64_t byte_offset);

// CPython 3.10 (Objects/lnotab_notes.txt): (bytes advanced, line delta) pairs from
// co_firstlineno; a delta of -128 marks bytes without a line. `byte_offset` is the
// instruction's offset in bytes (f_lasti * 2). -1 when the table has no line for it.
int python310_line(std::span<const std::uint8_t> table, int first_line, std::uint64_t byte_offset);

// CPython 3.11+ location tables (Objects/locations.md): entries of 1 to 8 code units
// whose first byte holds a form code; each form moves the line by a delta (none for the
// short forms, code - 10 for one-line forms, a signed varint for the long and
// no-column forms). `unit` is the instruction's index in code units. -1 when none.
int python311_line(std::span<const std::uint8_t> table, int first_line, std::uint64_t unit);

}  // namespace eacgm::ingest
