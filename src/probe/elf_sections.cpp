// The section-header pass of a symbol table's load and the readers of the small sections
// it meets (versions, notes); the symbol tables themselves are read in elf_symbols.cpp.
#include "probe/elf_sections.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace eacgm::probe {
namespace {

std::string hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return out;
}

std::string read_build_id(Elf_Scn* scn) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr) {
    return {};
  }
  std::size_t offset = 0;
  GElf_Nhdr nhdr;
  std::size_t name_offset = 0;
  std::size_t desc_offset = 0;
  while ((offset = gelf_getnote(data, offset, &nhdr, &name_offset, &desc_offset)) > 0) {
    const auto* base = static_cast<const unsigned char*>(data->d_buf);
    if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
        std::memcmp(base + name_offset, "GNU", 4) == 0) {
      return hex(base + desc_offset, nhdr.n_descsz);
    }
  }
  return {};
}

}  // namespace

std::string libelf_error() {
  const char* msg = elf_errmsg(-1);
  return msg != nullptr ? msg : "unknown libelf error";
}

std::string_view StringTable::at(std::size_t offset) const {
  if (data == nullptr || offset >= size) {
    return {};
  }
  const void* nul = std::memchr(data + offset, '\0', size - offset);
  if (nul == nullptr) {
    return {};
  }
  return {data + offset, static_cast<std::size_t>(static_cast<const char*>(nul) - (data + offset))};
}

StringTable string_table(Elf* elf, std::size_t section_index) {
  Elf_Scn* scn = elf_getscn(elf, section_index);
  if (scn == nullptr) {
    return {};
  }
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr || data->d_buf == nullptr) {
    return {};
  }
  return {static_cast<const char*>(data->d_buf), data->d_size};
}

namespace {

// Walks a version section's entries (SHT_GNU_verdef, SHT_GNU_verneed): `read` reads the
// entry at `offset` and returns how far the next one is (0: it was the last, or could not
// be read). sh_info counts the entries; 0 there means "until an entry says it is last".
template <typename ReadEntry>
void walk_version_entries(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr, ReadEntry read) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr) {
    return;
  }
  const StringTable strings = string_table(elf, shdr.sh_link);
  std::size_t offset = 0;
  for (std::size_t n = 0; n < shdr.sh_info || shdr.sh_info == 0; ++n) {
    const std::size_t next = read(data, offset, strings);
    if (next == 0) {
      break;
    }
    offset += next;
  }
}

}  // namespace

void VersionNames::read_definitions(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr) {
  walk_version_entries(elf, scn, shdr,
                       [this](Elf_Data* data, std::size_t offset, const StringTable& strings) {
                         GElf_Verdef def;
                         if (gelf_getverdef(data, static_cast<int>(offset), &def) == nullptr) {
                           return std::size_t{0};
                         }
                         GElf_Verdaux aux;
                         // The base definition (VER_FLG_BASE) names the file itself: its symbols are
                         // unversioned.
                         if ((def.vd_flags & VER_FLG_BASE) == 0 &&
                             gelf_getverdaux(data, static_cast<int>(offset + def.vd_aux), &aux) != nullptr) {
                           set(def.vd_ndx, strings.at(aux.vda_name));
                         }
                         return static_cast<std::size_t>(def.vd_next);
                       });
}

void VersionNames::read_requirements(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr) {
  walk_version_entries(elf, scn, shdr,
                       [this](Elf_Data* data, std::size_t offset, const StringTable& strings) {
                         GElf_Verneed need;
                         if (gelf_getverneed(data, static_cast<int>(offset), &need) == nullptr) {
                           return std::size_t{0};
                         }
                         std::size_t aux_offset = offset + need.vn_aux;
                         for (std::size_t a = 0; a < need.vn_cnt; ++a) {
                           GElf_Vernaux aux;
                           if (gelf_getvernaux(data, static_cast<int>(aux_offset), &aux) == nullptr) {
                             break;
                           }
                           set(aux.vna_other, strings.at(aux.vna_name));
                           if (aux.vna_next == 0) {
                             break;
                           }
                           aux_offset += aux.vna_next;
                         }
                         return static_cast<std::size_t>(need.vn_next);
                       });
}

void VersionNames::set(std::size_t index, std::string_view name) {
  index &= 0x7fff;
  if (index >= names_.size()) {
    names_.resize(index + 1);
  }
  names_[index] = name;
}

Result<SymbolSections> find_symbol_sections(Elf* elf, const std::string& path) {
  SymbolSections found;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) {
      return make_error(path + ": corrupt section header: " + libelf_error());
    }
    switch (shdr.sh_type) {
      case SHT_DYNSYM:
        found.dynsym = scn;
        found.dynsym_shdr = shdr;
        break;
      case SHT_SYMTAB:
        found.symtab = scn;
        found.symtab_shdr = shdr;
        break;
      case SHT_GNU_versym:
        found.versym = scn;
        break;
      case SHT_GNU_verdef:
        found.versions.read_definitions(elf, scn, shdr);
        break;
      case SHT_GNU_verneed:
        found.versions.read_requirements(elf, scn, shdr);
        break;
      case SHT_NOTE:
        if (found.build_id.empty()) {
          found.build_id = read_build_id(scn);
        }
        break;
      default:
        break;
    }
  }
  return found;
}

void prefault_section(Elf* elf, std::size_t section_index) {
  std::size_t raw_size = 0;
  char* raw = elf_rawfile(elf, &raw_size);
  Elf_Scn* scn = elf_getscn(elf, section_index);
  GElf_Shdr shdr;
  if (raw == nullptr || scn == nullptr || gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS ||
      shdr.sh_offset >= raw_size) {
    return;
  }
  // libelf maps the whole file, so raw is page-aligned and so is raw + a page-aligned offset.
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t begin = shdr.sh_offset & ~(page - 1);
  const std::uint64_t end = std::min<std::uint64_t>(shdr.sh_offset + shdr.sh_size, raw_size);
  ::madvise(raw + begin, end - begin, MADV_POPULATE_READ);
}

}  // namespace eacgm::probe
