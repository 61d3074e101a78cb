// DT_NEEDED and run paths from the dynamic section, through libelf.
#include "probe/elf_dynamic.h"

#include <gelf.h>

#include <string_view>

#include "probe/elf_symbols.h"

namespace eacgm::probe {
namespace {

std::string replace_origin(std::string dir, const std::string& origin) {
  for (const std::string_view token : {std::string_view("${ORIGIN}"), std::string_view("$ORIGIN")}) {
    for (std::size_t at = dir.find(token); at != std::string::npos;
         at = dir.find(token, at + origin.size())) {
      dir.replace(at, token.size(), origin);
    }
  }
  return dir;
}

}  // namespace

Result<ElfDynamic> read_elf_dynamic(const std::string& path) {
  auto file = ElfFile::open(path);
  if (!file) return std::move(file).take_error();
  Elf* elf = file->elf();
  ElfDynamic out;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_DYNAMIC || shdr.sh_entsize == 0) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) continue;
    const std::size_t count = shdr.sh_size / shdr.sh_entsize;
    for (std::size_t i = 0; i < count; ++i) {
      GElf_Dyn dyn;
      if (gelf_getdyn(data, static_cast<int>(i), &dyn) == nullptr || dyn.d_tag == DT_NULL) break;
      if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_RPATH) continue;
      const char* text = elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val);
      if (text == nullptr) continue;
      if (dyn.d_tag == DT_NEEDED) out.needed.emplace_back(text);
      if (dyn.d_tag == DT_RUNPATH) out.runpath = text;
      if (dyn.d_tag == DT_RPATH) out.rpath = text;
    }
  }
  return out;
}

std::vector<std::string> run_path_dirs(const ElfDynamic& dynamic, const std::string& origin) {
  const std::string& list = dynamic.runpath.empty() ? dynamic.rpath : dynamic.runpath;
  std::vector<std::string> dirs;
  std::size_t start = 0;
  while (start < list.size()) {
    std::size_t end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) dirs.push_back(replace_origin(list.substr(start, end - start), origin));
    start = end + 1;
  }
  return dirs;
}

}  // namespace eacgm::probe
