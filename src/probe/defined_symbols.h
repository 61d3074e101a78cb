// Which files define a given symbol, whatever their name: a CUDA runtime linked
// statically into a program or a library (nvcc's default) is found by its
// `cudaLaunchKernel` in .symtab or .dynsym, where a file name says nothing.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace eacgm::probe {

// Whether the ELF file at `path` defines `symbol` (a defined function in .dynsym or
// .symtab; an import of it does not count). False for unreadable or non-ELF files.
bool file_defines_symbol(const std::string& path, const std::string& symbol);

// The same, answered once per (file, symbol): every mapped file of every scanned process
// is asked, most of them several times.
class DefinedSymbols {
 public:
  bool defines(const std::string& open_path, std::uint64_t dev, std::uint64_t inode,
               const std::string& symbol);

 private:
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::string>, bool> known_;
};

}  // namespace eacgm::probe
