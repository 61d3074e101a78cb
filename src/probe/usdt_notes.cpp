// Parses .note.stapsdt the way SystemTap and libbpf do, so USDT probes resolve to the same
// file offsets the kernel will be given.
#include "probe/usdt_notes.h"

#include <gelf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "probe/elf_symbols.h"

namespace eacgm::probe {
namespace {

constexpr std::uint32_t kNtStapsdt = 3;  // note type SystemTap uses for probe descriptors

// Note payloads are raw file bytes: addresses are in the file's byte order.
std::uint64_t read_address(const unsigned char* p, bool is_64bit, bool swap) {
  if (is_64bit) {
    std::uint64_t v = 0;
    std::memcpy(&v, p, sizeof v);
    return swap ? __builtin_bswap64(v) : v;
  }
  std::uint32_t v = 0;
  std::memcpy(&v, p, sizeof v);
  return swap ? __builtin_bswap32(v) : v;
}

std::string hex_address(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

Result<std::vector<UsdtProbe>> read_usdt_probes(const std::string& path) {
  auto opened = ElfFile::open(path);
  if (!opened) {
    return std::move(opened).take_error();
  }
  const ElfFile& file = *opened;
  Elf* elf = file.elf();

  std::size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) {
    return make_error(path + ": cannot read section names: " + elf_errmsg(-1));
  }
  Elf_Scn* notes = nullptr;
  bool have_base = false;
  std::uint64_t actual_base = 0;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) {
      continue;
    }
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (name == nullptr) {
      continue;
    }
    if (shdr.sh_type == SHT_NOTE && std::strcmp(name, ".note.stapsdt") == 0) {
      notes = scn;
    } else if (std::strcmp(name, ".stapsdt.base") == 0) {
      have_base = true;
      actual_base = shdr.sh_addr;
    }
  }
  std::vector<UsdtProbe> probes;
  if (notes == nullptr) {
    return probes;
  }
  Elf_Data* data = elf_getdata(notes, nullptr);
  if (data == nullptr) {
    return make_error(path + ": cannot read .note.stapsdt: " + elf_errmsg(-1));
  }
  const unsigned char* ident = reinterpret_cast<const unsigned char*>(elf_getident(elf, nullptr));
  const bool file_le = ident != nullptr && ident[EI_DATA] == ELFDATA2LSB;
  const bool swap = file_le != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
  const std::size_t addr_size = file.is_64bit() ? 8 : 4;

  const auto* bytes = static_cast<const unsigned char*>(data->d_buf);
  std::size_t offset = 0;
  GElf_Nhdr nhdr;
  std::size_t name_offset = 0;
  std::size_t desc_offset = 0;
  while ((offset = gelf_getnote(data, offset, &nhdr, &name_offset, &desc_offset)) > 0) {
    if (nhdr.n_type != kNtStapsdt || nhdr.n_namesz != sizeof "stapsdt" ||
        std::memcmp(bytes + name_offset, "stapsdt", sizeof "stapsdt") != 0) {
      continue;
    }
    if (nhdr.n_descsz < 3 * addr_size) {
      return make_error(path + ": truncated SDT note at offset " + std::to_string(desc_offset) +
                        " of .note.stapsdt");
    }
    const unsigned char* desc = bytes + desc_offset;
    UsdtProbe probe;
    const std::uint64_t pc = read_address(desc, file.is_64bit(), swap);
    probe.base_address = read_address(desc + addr_size, file.is_64bit(), swap);
    probe.semaphore_address = read_address(desc + 2 * addr_size, file.is_64bit(), swap);
    // The strings follow the three addresses: provider\0name\0arguments\0.
    std::string_view rest(reinterpret_cast<const char*>(desc + 3 * addr_size), nhdr.n_descsz - 3 * addr_size);
    std::string_view fields[3];
    for (std::string_view& field : fields) {
      const std::size_t nul = rest.find('\0');
      field = rest.substr(0, nul);
      rest = nul == std::string_view::npos ? std::string_view{} : rest.substr(nul + 1);
    }
    probe.provider.assign(fields[0]);
    probe.name.assign(fields[1]);
    probe.arguments.assign(fields[2]);
    // Prelinking or a post-link relocation moves .stapsdt.base; the note keeps the link-time
    // value, so the pc moves by the same distance (SystemTap's and libbpf's rule).
    probe.address = have_base && probe.base_address != 0 ? pc + (actual_base - probe.base_address) : pc;
    const auto pc_offset = file.file_offset_of(probe.address);
    if (!pc_offset) {
      return make_error(path + ": SDT probe " + probe.provider + ":" + probe.name + " at " +
                        hex_address(probe.address) +
                        " lies outside every loadable segment (corrupt or unusual ELF file)");
    }
    probe.file_offset = *pc_offset;
    if (probe.semaphore_address != 0) {
      probe.semaphore_offset = file.file_offset_of(probe.semaphore_address).value_or(0);
    }
    probes.push_back(std::move(probe));
  }
  return probes;
}

bool has_usdt_probe(const std::vector<UsdtProbe>& probes, std::string_view provider_and_name) {
  const std::size_t colon = provider_and_name.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view provider = provider_and_name.substr(0, colon);
  const std::string_view name = provider_and_name.substr(colon + 1);
  return std::any_of(probes.begin(), probes.end(),
                     [&](const UsdtProbe& p) { return p.provider == provider && p.name == name; });
}

}  // namespace eacgm::probe
