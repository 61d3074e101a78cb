// ELF symbol tables of traced libraries: names, GNU symbol versions and the file offsets
// uprobes attach at. Read once per library (by inode) with libelf, then looked up by name or glob.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/unique_fd.h"

struct Elf;  // libelf's handle; kept out of this header so users need not include <libelf.h>

namespace eacgm::probe {

// One PT_LOAD segment: how virtual addresses in the file map to file offsets.
struct LoadSegment {
  std::uint64_t vaddr = 0;
  std::uint64_t memsz = 0;
  std::uint64_t offset = 0;
  std::uint64_t filesz = 0;
  bool executable = false;
};

// Whether the file at `path` starts with the ELF magic. A script (`#!`: pyenv's shims,
// wrapper scripts) is not: it runs its interpreter by exec, and that is the ELF file.
bool is_elf_file(const std::string& path);

// An open ELF file: the descriptor and the libelf handle live and die together.
class ElfFile {
 public:
  // Errors: "cannot open /x/y.so: No such file or directory", "/x/y: not an ELF file", ...
  static Result<ElfFile> open(const std::string& path);

  ElfFile(ElfFile&& other) noexcept;
  ElfFile& operator=(ElfFile&& other) noexcept;
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  ~ElfFile();

  Elf* elf() const { return elf_; }
  const std::string& path() const { return path_; }
  bool is_64bit() const { return is_64bit_; }
  const std::vector<LoadSegment>& segments() const { return segments_; }
  // The file offset of a virtual address: address - p_vaddr + p_offset of the PT_LOAD
  // segment containing it (uprobes are placed by file offset, not by address).
  std::optional<std::uint64_t> file_offset_of(std::uint64_t vaddr) const;

 private:
  ElfFile(UniqueFd fd, Elf* elf, std::string path);
  void close();

  UniqueFd fd_;
  Elf* elf_ = nullptr;
  bool is_64bit_ = true;
  std::string path_;
  std::vector<LoadSegment> segments_;
};

struct ElfSymbol {
  std::string name;             // without version suffix
  std::string version;          // "" when unversioned, e.g. "libcudart.so.13"
  bool default_version = true;  // @@ (or unversioned)
  std::uint64_t address = 0;    // st_value
  std::uint64_t size = 0;
  std::uint64_t file_offset = 0;  // address mapped through its PT_LOAD segment; 0 if none
  bool is_function = false;       // STT_FUNC or STT_GNU_IFUNC
  bool is_ifunc = false;          // STT_GNU_IFUNC: address is the resolver, not the implementation
  bool is_global = false;         // STB_GLOBAL/STB_WEAK (false for local .symtab symbols)
  bool from_dynsym = false;
};

class ElfSymbolTable {
 public:
  // .dynsym and .symtab, deduplicated (.dynsym wins); only defined symbols (st_shndx !=
  // SHN_UNDEF, address != 0). Versions come from .gnu.version/.gnu.version_d/.gnu.version_r.
  static Result<ElfSymbolTable> load(const std::string& path);

  const std::vector<ElfSymbol>& symbols() const { return symbols_; }
  // Exact lookup: "cudaMalloc" finds the default-version (or only) definition;
  // "cudaMalloc@libcudart.so.12" (or "@@") finds that version. O(1) average.
  const ElfSymbol* find(std::string_view name) const;
  // Glob (fnmatch) over function names; one result per distinct file_offset (aliases
  // collapse to the first global name), in table order.
  std::vector<const ElfSymbol*> match(std::string_view glob) const;
  const std::string& path() const { return path_; }
  std::string_view build_id() const { return build_id_; }  // hex of NT_GNU_BUILD_ID, or ""

 private:
  static constexpr std::uint32_t kEmpty = 0xffffffffU;

  // Indexes symbols_[indexed_, symbols_.size()), growing the slot array when needed.
  void index_new_symbols();
  void insert_slot(std::uint32_t i, std::size_t mask);
  // Calls f(index) for every symbol named `name` (any version), stopping when f returns true.
  template <typename F>
  void for_each_named(std::string_view name, std::uint32_t hash, F&& f) const;

  std::string path_;
  std::string build_id_;
  std::vector<ElfSymbol> symbols_;
  // Open-addressing index of symbol positions by name hash. It stores positions, not
  // string_views, so the table stays valid when moved (short names live inside std::string).
  std::vector<std::uint32_t> slots_;
  std::vector<std::uint32_t> hashes_;  // per symbol, to skip string compares on probe
  std::size_t indexed_ = 0;            // symbols_[0, indexed_) are in slots_
};

}  // namespace eacgm::probe
