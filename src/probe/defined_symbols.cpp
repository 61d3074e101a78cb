// Symbol presence by a scan of the symbol tables' names; no table is kept.
#include "probe/defined_symbols.h"

#include <gelf.h>

#include <cstring>

#include "probe/elf_symbols.h"

namespace eacgm::probe {

bool file_defines_symbol(const std::string& path, const std::string& symbol) {
  auto file = ElfFile::open(path);
  if (!file) return false;
  Elf* elf = file->elf();
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    if (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || shdr.sh_entsize == 0) continue;
    const std::size_t count = shdr.sh_size / shdr.sh_entsize;
    for (std::size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
      if (sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) != STT_FUNC) continue;
      const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (name != nullptr && symbol == name) return true;
    }
  }
  return false;
}

bool DefinedSymbols::defines(const std::string& open_path, std::uint64_t dev, std::uint64_t inode,
                             const std::string& symbol) {
  auto key = std::make_tuple(dev, inode, symbol);
  if (auto it = known_.find(key); it != known_.end()) return it->second;
  const bool found = file_defines_symbol(open_path, symbol);
  known_.emplace(std::move(key), found);
  return found;
}

}  // namespace eacgm::probe
