// What an ELF file's dynamic section says about the libraries it loads: DT_NEEDED names
// and the run paths the loader searches first (an interpreter built with
// --enable-shared names its libpython3.X.so.1.0 there).
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace eacgm::probe {

struct ElfDynamic {
  std::vector<std::string> needed;  // DT_NEEDED, in order
  std::string runpath;              // DT_RUNPATH ("" when absent)
  std::string rpath;                // DT_RPATH, which the loader ignores when DT_RUNPATH is set
};

// A file without a dynamic section (a static executable) has none of them; errors are
// the ElfFile::open ones.
Result<ElfDynamic> read_elf_dynamic(const std::string& path);

// The folders of the file's run path (DT_RUNPATH, else DT_RPATH), in order, with
// $ORIGIN and ${ORIGIN} replaced by `origin` (the folder of the file itself).
std::vector<std::string> run_path_dirs(const ElfDynamic& dynamic, const std::string& origin);

}  // namespace eacgm::probe
