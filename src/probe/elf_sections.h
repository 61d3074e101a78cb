// The sections an ELF symbol table is read from, found in one pass over the section
// headers: .dynsym and .symtab, the version names (.gnu.version_d, .gnu.version_r), the
// build id note; and the string tables their names point into. Used by elf_symbols.cpp.
#pragma once

#include <gelf.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace eacgm::probe {

// libelf's message for the last failed call.
std::string libelf_error();

// A string table section's bytes; names are resolved without elf_strptr's per-call checks.
struct StringTable {
  const char* data = nullptr;
  std::size_t size = 0;

  // The NUL-terminated string at `offset`; "" when it lies outside the table.
  std::string_view at(std::size_t offset) const;
};

StringTable string_table(Elf* elf, std::size_t section_index);

// Version names by version index (the low 15 bits of a .gnu.version entry).
class VersionNames {
 public:
  void read_definitions(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr);
  void read_requirements(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr);

  std::string_view at(std::uint16_t index) const {
    return index < names_.size() ? names_[index] : std::string_view{};
  }

 private:
  void set(std::size_t index, std::string_view name);

  std::vector<std::string_view> names_;  // views into libelf's mapping of the file
};

struct SymbolSections {
  Elf_Scn* dynsym = nullptr;
  GElf_Shdr dynsym_shdr{};
  Elf_Scn* symtab = nullptr;
  GElf_Shdr symtab_shdr{};
  Elf_Scn* versym = nullptr;  // .gnu.version: .dynsym's version indices
  VersionNames versions;
  std::string build_id;  // hex of NT_GNU_BUILD_ID, or ""
};

// Errors: "<path>: corrupt section header: ...".
Result<SymbolSections> find_symbol_sections(Elf* elf, const std::string& path);

// Entries of a symbol table section (0 when its entry size is 0).
inline std::size_t entry_count(const GElf_Shdr& shdr) {
  return shdr.sh_entsize == 0 ? 0 : shdr.sh_size / shdr.sh_entsize;
}

// Pre-faults a section of libelf's mapping in one call: page-faulting a large symbol or
// string table a page at a time costs more than parsing it (Linux >= 5.14; elsewhere
// the hint is ignored).
void prefault_section(Elf* elf, std::size_t section_index);

}  // namespace eacgm::probe
