// Reads .dynsym/.symtab with their GNU versions and maps each symbol to the file offset a
// uprobe needs. Built for big C++ libraries (libtorch_python: ~200k symbols) in one pass.
#include "probe/elf_symbols.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <functional>
#include <unordered_map>
#include <utility>

#include "probe/elf_sections.h"

namespace eacgm::probe {
namespace {

// libelf refuses every call until the library version has been negotiated once.
bool init_libelf() {
  static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
  return ok;
}

std::uint32_t hash_name(std::string_view name) {
  // 32 bits are enough to skip nearly every non-matching compare in the index.
  return static_cast<std::uint32_t>(std::hash<std::string_view>{}(name));
}

// A symbol table section viewed as native Elf32_Sym/Elf64_Sym (libelf has already translated it).
struct SymbolArray {
  const void* base;
  std::size_t count;
  bool is_64bit;

  std::size_t name_offset(std::size_t k) const {
    return is_64bit ? static_cast<const Elf64_Sym*>(base)[k].st_name
                    : static_cast<const Elf32_Sym*>(base)[k].st_name;
  }
  GElf_Sym at(std::size_t k) const {
    if (is_64bit) {
      return static_cast<const Elf64_Sym*>(base)[k];
    }
    const Elf32_Sym& s = static_cast<const Elf32_Sym*>(base)[k];
    return GElf_Sym{s.st_name, s.st_info, s.st_other, s.st_shndx, s.st_value, s.st_size};
  }
};

// One accepted symbol between parsing and appending; views point into libelf's mapping.
struct Candidate {
  std::string_view name;
  std::string_view version;
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  std::uint64_t hash = 0;  // of name
  unsigned type = STT_NOTYPE;
  bool default_version = true;
  bool is_global = false;

  // Identity for .symtab/.dynsym dedup: name and address. A 64-bit mix rather than the name
  // itself keeps the check to one cache line; a false match needs a 64-bit collision between
  // two names at one address.
  std::uint64_t key() const {
    const std::uint64_t k = hash ^ (address * 0x9e3779b97f4a7c15ULL);
    return k == 0 ? 1 : k;  // 0 marks empty slots
  }
};

// Open-addressing set of Candidate::key() values of .dynsym entries.
class DedupSet {
 public:
  bool empty() const { return used_ == 0; }
  void reserve(std::size_t n) {
    std::size_t capacity = 16;
    while (capacity < n * 2) {
      capacity *= 2;
    }
    slots_.assign(capacity, 0);
    used_ = 0;
  }
  // Inserts with the slots of later keys prefetched: the set is megabytes, accessed at random.
  void insert_all(const std::vector<std::uint64_t>& keys) {
    reserve(keys.size());
    constexpr std::size_t kAhead = 16;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (i + kAhead < keys.size()) {
        prefetch(keys[i + kAhead]);
      }
      insert(keys[i]);
    }
  }
  void insert(std::uint64_t key) {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = mix(key) & mask;; i = (i + 1) & mask) {
      if (slots_[i] == key) {
        return;
      }
      if (slots_[i] == 0) {
        slots_[i] = key;
        ++used_;
        return;
      }
    }
  }
  bool contains(std::uint64_t key) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = mix(key) & mask; slots_[i] != 0; i = (i + 1) & mask) {
      if (slots_[i] == key) {
        return true;
      }
    }
    return false;
  }
  void prefetch(std::uint64_t key) const { __builtin_prefetch(&slots_[mix(key) & (slots_.size() - 1)]); }

 private:
  static std::size_t mix(std::uint64_t k) {
    return static_cast<std::size_t>((k ^ (k >> 29)) * 0xbf58476d1ce4e5b9ULL >> 20);
  }

  std::vector<std::uint64_t> slots_;
  std::size_t used_ = 0;
};

bool has_glob_chars(std::string_view s) { return s.find_first_of("*?[\\") != std::string_view::npos; }

// Symbol addresses to file offsets through the PT_LOAD segments. Segments are few; the
// last hit is tried first, since symbols cluster by section.
class OffsetMap {
 public:
  explicit OffsetMap(const std::vector<LoadSegment>& segments) : segments_(segments) {}

  std::uint64_t operator()(std::uint64_t addr) {
    if (last_ < segments_.size()) {
      const LoadSegment& s = segments_[last_];
      if (addr >= s.vaddr && addr - s.vaddr < s.memsz) {
        return addr - s.vaddr + s.offset;
      }
    }
    for (std::size_t k = 0; k < segments_.size(); ++k) {
      const LoadSegment& s = segments_[k];
      if (addr >= s.vaddr && addr - s.vaddr < s.memsz) {
        last_ = k;
        return addr - s.vaddr + s.offset;
      }
    }
    return 0;
  }

 private:
  const std::vector<LoadSegment>& segments_;
  std::size_t last_ = 0;
};

// Reads .dynsym, then .symtab, into a table's symbols and their name hashes; .symtab's
// copies of .dynsym's symbols are left out.
//
// The cost of a 200k-symbol table is memory latency, not parsing: .gnu.hash ordering
// scatters .dynsym's names over the string table, so names are prefetched a few entries
// ahead and each is copied while still in cache. .symtab (whose names are mostly in order)
// is parsed first and deduplicated against .dynsym in a separate, prefetched pass.
class SymbolReader {
 public:
  SymbolReader(const ElfFile& file, const SymbolSections& sections, std::vector<ElfSymbol>& symbols,
               std::vector<std::uint32_t>& hashes)
      : file_(file), sections_(sections), symbols_(symbols), hashes_(hashes), offsets_(file.segments()) {
    Elf_Data* versym = sections.versym != nullptr ? elf_getdata(sections.versym, nullptr) : nullptr;
    if (versym != nullptr) {
      version_indices_ = static_cast<const std::uint16_t*>(versym->d_buf);
      version_count_ = versym->d_size / sizeof(std::uint16_t);
    }
  }

  Status read(Elf_Scn* scn, const GElf_Shdr& shdr, bool from_dynsym);

 private:
  static constexpr std::size_t kAhead = 32;

  // Entry k as a candidate; false for entries a table leaves out (undefined, at address 0,
  // sections, files, unnamed).
  bool candidate(const SymbolArray& syms, std::size_t k, const StringTable& strings, bool from_dynsym,
                 Candidate& c) const {
    const GElf_Sym sym = syms.at(k);
    if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0) {
      return false;
    }
    const unsigned type = GELF_ST_TYPE(sym.st_info);
    if (type == STT_SECTION || type == STT_FILE) {
      return false;
    }
    c.name = strings.at(sym.st_name);
    if (c.name.empty()) {
      return false;
    }
    if (from_dynsym) {
      if (version_indices_ != nullptr && k < version_count_) {
        const std::uint16_t v = version_indices_[k];
        c.version = sections_.versions.at(v & 0x7fff);
        c.default_version = (v & 0x8000) == 0;
      }
    } else if (const std::size_t at = c.name.find('@'); at != std::string_view::npos) {
      // GNU ld writes versioned names into .symtab as "foo@V1" / "foo@@V2".
      const bool dd = c.name.size() > at + 1 && c.name[at + 1] == '@';
      c.version = c.name.substr(at + (dd ? 2 : 1));
      c.default_version = dd;
      c.name = c.name.substr(0, at);
    }
    const unsigned bind = GELF_ST_BIND(sym.st_info);
    c.is_global = bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE;
    c.type = type;
    c.address = sym.st_value;
    c.size = sym.st_size;
    c.hash = std::hash<std::string_view>{}(c.name);
    return true;
  }

  void append(const Candidate& c, bool from_dynsym) {
    ElfSymbol& s = symbols_.emplace_back();
    s.name.assign(c.name);
    s.version.assign(c.version);
    s.default_version = c.default_version;
    s.address = c.address;
    s.size = c.size;
    s.file_offset = offsets_(c.address);
    s.is_function = c.type == STT_FUNC || c.type == STT_GNU_IFUNC;
    s.is_ifunc = c.type == STT_GNU_IFUNC;
    s.is_global = c.is_global;
    s.from_dynsym = from_dynsym;
    hashes_.push_back(static_cast<std::uint32_t>(c.hash));
  }

  // .symtab's candidates that .dynsym lacks: the .dynsym entry wins (it carries the
  // version). Local symbols never appear in .dynsym, so only globals are looked up.
  void append_absent_from_dynsym() {
    for (std::size_t j = 0; j < candidates_.size(); ++j) {
      if (j + kAhead < candidates_.size()) {
        dynsym_keys_.prefetch(candidates_[j + kAhead].key());
      }
      const Candidate& c = candidates_[j];
      if (!(c.is_global && dynsym_keys_.contains(c.key()))) {
        append(c, false);
      }
    }
  }

  const ElfFile& file_;
  const SymbolSections& sections_;
  std::vector<ElfSymbol>& symbols_;
  std::vector<std::uint32_t>& hashes_;
  OffsetMap offsets_;
  const std::uint16_t* version_indices_ = nullptr;  // .gnu.version, one per .dynsym entry
  std::size_t version_count_ = 0;
  std::vector<Candidate> candidates_;  // .symtab's, waiting for the deduplicating pass
  DedupSet dynsym_keys_;
};

Status SymbolReader::read(Elf_Scn* scn, const GElf_Shdr& shdr, bool from_dynsym) {
  Elf* elf = file_.elf();
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr || data->d_type != ELF_T_SYM) {
    return make_error(file_.path() + ": cannot read " + (from_dynsym ? ".dynsym" : ".symtab") + ": " +
                      libelf_error());
  }
  prefault_section(elf, elf_ndxscn(scn));
  prefault_section(elf, shdr.sh_link);
  const StringTable strings = string_table(elf, shdr.sh_link);
  // libelf hands out the table in the host's layout for the file's class.
  const std::size_t entry_size = file_.is_64bit() ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
  const SymbolArray syms{data->d_buf, std::min(entry_count(shdr), data->d_size / entry_size),
                         file_.is_64bit()};
  const bool dedup = !from_dynsym && !dynsym_keys_.empty();
  const bool keep_keys = from_dynsym && sections_.symtab != nullptr;
  candidates_.clear();
  if (dedup) {
    candidates_.reserve(syms.count);
  }
  std::vector<std::uint64_t> keys;
  if (keep_keys) {
    keys.reserve(syms.count);
  }
  for (std::size_t k = 1; k < syms.count; ++k) {  // entry 0 is the reserved null symbol
    if (k + kAhead < syms.count) {
      const std::size_t ahead = syms.name_offset(k + kAhead);
      if (ahead + 64 < strings.size) {
        __builtin_prefetch(strings.data + ahead);
        __builtin_prefetch(strings.data + ahead + 64);  // long C++ names span two lines
      }
    }
    Candidate c;
    if (!candidate(syms, k, strings, from_dynsym, c)) {
      continue;
    }
    if (dedup) {
      candidates_.push_back(c);
      continue;
    }
    if (keep_keys) {
      keys.push_back(c.key());
    }
    append(c, from_dynsym);
  }
  if (keep_keys) {
    dynsym_keys_.insert_all(keys);
  }
  if (dedup) {
    append_absent_from_dynsym();
  }
  return {};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ElfFile

ElfFile::ElfFile(UniqueFd fd, Elf* elf, std::string path)
    : fd_(std::move(fd)), elf_(elf), path_(std::move(path)) {}

ElfFile::ElfFile(ElfFile&& other) noexcept
    : fd_(std::move(other.fd_)),
      elf_(std::exchange(other.elf_, nullptr)),
      is_64bit_(other.is_64bit_),
      path_(std::move(other.path_)),
      segments_(std::move(other.segments_)) {}

ElfFile& ElfFile::operator=(ElfFile&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::move(other.fd_);
    elf_ = std::exchange(other.elf_, nullptr);
    is_64bit_ = other.is_64bit_;
    path_ = std::move(other.path_);
    segments_ = std::move(other.segments_);
  }
  return *this;
}

ElfFile::~ElfFile() { close(); }

void ElfFile::close() {
  if (elf_ != nullptr) {
    elf_end(elf_);
    elf_ = nullptr;
  }
  fd_.reset();  // after elf_end: libelf reads through it until then
}

bool is_elf_file(const std::string& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    return false;
  }
  std::array<char, SELFMAG> magic{};
  const ssize_t n = ::read(fd.get(), magic.data(), magic.size());
  return n == SELFMAG && std::memcmp(magic.data(), ELFMAG, SELFMAG) == 0;
}

Result<ElfFile> ElfFile::open(const std::string& path) {
  if (!init_libelf()) {
    return make_error("cannot initialise libelf: " + libelf_error());
  }
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    const int err = errno;
    return make_errno_error(err, "cannot open " + path + ": " + std::strerror(err));
  }
  // Owns fd (and the Elf handle once made) from here on, so every error path closes it.
  ElfFile file(std::move(fd), nullptr, path);
  struct stat st {};
  if (::fstat(file.fd_.get(), &st) != 0) {
    const int err = errno;
    return make_errno_error(err, "cannot stat " + path + ": " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    return make_error(path + ": not a regular file (expected a shared library or executable)");
  }
  file.elf_ = elf_begin(file.fd_.get(), ELF_C_READ_MMAP, nullptr);
  if (file.elf_ == nullptr) {
    return make_error(path + ": cannot read ELF: " + libelf_error());
  }
  if (elf_kind(file.elf_) != ELF_K_ELF) {
    return make_error(path + ": not an ELF file");
  }
  const int cls = gelf_getclass(file.elf_);
  if (cls != ELFCLASS32 && cls != ELFCLASS64) {
    return make_error(path + ": unknown ELF class");
  }
  file.is_64bit_ = cls == ELFCLASS64;

  std::size_t phnum = 0;
  if (elf_getphdrnum(file.elf_, &phnum) != 0) {
    return make_error(path + ": cannot read program headers: " + libelf_error());
  }
  for (std::size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(file.elf_, static_cast<int>(i), &phdr) != nullptr && phdr.p_type == PT_LOAD) {
      file.segments_.push_back(
          LoadSegment{phdr.p_vaddr, phdr.p_memsz, phdr.p_offset, phdr.p_filesz, (phdr.p_flags & PF_X) != 0});
    }
  }
  return file;
}

std::optional<std::uint64_t> ElfFile::file_offset_of(std::uint64_t vaddr) const {
  for (const LoadSegment& seg : segments_) {
    if (vaddr >= seg.vaddr && vaddr - seg.vaddr < seg.memsz) {
      return vaddr - seg.vaddr + seg.offset;
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// ElfSymbolTable

void ElfSymbolTable::insert_slot(std::uint32_t i, std::size_t mask) {
  std::size_t slot = hashes_[i] & mask;
  while (slots_[slot] != kEmpty) {
    slot = (slot + 1) & mask;
  }
  slots_[slot] = i;
}

void ElfSymbolTable::index_new_symbols() {
  const std::size_t n = symbols_.size();
  if (n * 2 > slots_.size()) {  // keep the load factor at or under 1/2
    std::size_t capacity = 16;
    while (capacity < n * 2) {
      capacity *= 2;
    }
    slots_.assign(capacity, kEmpty);
    indexed_ = 0;
  }
  // Slot accesses are random over a table of megabytes: fetch a few inserts ahead so the
  // cache misses overlap instead of being paid one after another.
  constexpr std::size_t kAhead = 16;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = indexed_; i < n; ++i) {
    if (i + kAhead < n) {
      __builtin_prefetch(&slots_[hashes_[i + kAhead] & mask], 1);
    }
    insert_slot(static_cast<std::uint32_t>(i), mask);
  }
  indexed_ = n;
}

template <typename F>
void ElfSymbolTable::for_each_named(std::string_view name, std::uint32_t h, F&& f) const {
  if (slots_.empty()) {
    return;
  }
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t slot = h & mask; slots_[slot] != kEmpty; slot = (slot + 1) & mask) {
    const std::uint32_t i = slots_[slot];
    if (hashes_[i] == h && symbols_[i].name == name && f(i)) {
      return;
    }
  }
}

Result<ElfSymbolTable> ElfSymbolTable::load(const std::string& path) {
  auto opened = ElfFile::open(path);
  if (!opened) {
    return std::move(opened).take_error();
  }
  auto sections = find_symbol_sections(opened->elf(), path);
  if (!sections) {
    return std::move(sections).take_error();
  }
  ElfSymbolTable table;
  table.path_ = path;
  table.build_id_ = std::move(sections->build_id);
  const std::size_t expected = entry_count(sections->dynsym_shdr) + entry_count(sections->symtab_shdr);
  table.symbols_.reserve(expected);
  table.hashes_.reserve(expected);
  SymbolReader reader(*opened, *sections, table.symbols_, table.hashes_);
  if (sections->dynsym != nullptr) {
    if (auto st = reader.read(sections->dynsym, sections->dynsym_shdr, true); !st) {
      return std::move(st).take_error();
    }
    table.index_new_symbols();
  }
  if (sections->symtab != nullptr) {
    if (auto st = reader.read(sections->symtab, sections->symtab_shdr, false); !st) {
      return std::move(st).take_error();
    }
    table.index_new_symbols();
  }
  return table;
}

const ElfSymbol* ElfSymbolTable::find(std::string_view name) const {
  std::string_view version;
  bool versioned = false;
  if (const std::size_t at = name.find('@'); at != std::string_view::npos) {
    versioned = true;
    version = name.substr(at + 1);
    if (!version.empty() && version.front() == '@') {
      version.remove_prefix(1);
    }
    name = name.substr(0, at);
  }
  const ElfSymbol* best = nullptr;
  int best_rank = -1;
  for_each_named(name, hash_name(name), [&](std::uint32_t i) {
    const ElfSymbol& s = symbols_[i];
    if (versioned) {
      if (s.version == version) {
        best = &s;
        return true;
      }
      return false;
    }
    // Prefer what the dynamic linker binds to: a global default version, then any global
    // (a symbol that only has non-default versions), then a local one.
    const int rank = s.is_global ? (s.default_version ? 3 : 2) : 1;
    if (rank > best_rank || (rank == best_rank && i < static_cast<std::uint32_t>(best - symbols_.data()))) {
      best = &s;
      best_rank = rank;
    }
    return false;
  });
  return best;
}

std::vector<const ElfSymbol*> ElfSymbolTable::match(std::string_view glob) const {
  std::vector<const ElfSymbol*> out;
  std::unordered_map<std::uint64_t, std::size_t> by_offset;  // file_offset -> position in out
  auto consider = [&](const ElfSymbol& s) {
    if (!s.is_function) {
      return;
    }
    auto [it, inserted] = by_offset.try_emplace(s.file_offset, out.size());
    if (inserted) {
      out.push_back(&s);
    } else if (s.is_global && !out[it->second]->is_global) {
      out[it->second] = &s;  // an exported alias names the code better than a local one
    }
  };

  if (!has_glob_chars(glob)) {
    std::vector<std::uint32_t> hits;
    for_each_named(glob, hash_name(glob), [&](std::uint32_t i) {
      hits.push_back(i);
      return false;
    });
    std::sort(hits.begin(), hits.end());  // table order, like the glob path
    for (std::uint32_t i : hits) {
      consider(symbols_[i]);
    }
    return out;
  }

  const std::string pattern(glob);
  // fnmatch is slow per call; reject most names by the literal prefix first.
  const std::string_view prefix = glob.substr(0, glob.find_first_of("*?[\\"));
  for (const ElfSymbol& s : symbols_) {
    if (!s.is_function || s.name.compare(0, prefix.size(), prefix) != 0) {
      continue;
    }
    if (::fnmatch(pattern.c_str(), s.name.c_str(), 0) == 0) {
      consider(s);
    }
  }
  return out;
}

}  // namespace eacgm::probe
