// Reads .dynsym/.symtab with their GNU versions and maps each symbol to the file offset a
// uprobe needs. Built for big C++ libraries (libtorch_python: ~200k symbols) in one pass.
#include "probe/elf_symbols.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <functional>
#include <unordered_map>
#include <utility>

namespace eacgm::probe {
namespace {

// libelf refuses every call until the library version has been negotiated once.
bool init_libelf() {
  static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
  return ok;
}

std::string libelf_error() {
  const char* msg = elf_errmsg(-1);
  return msg != nullptr ? msg : "unknown libelf error";
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

// A string table section's bytes; symbol names are resolved without elf_strptr's per-call checks.
struct StringTable {
  const char* data = nullptr;
  std::size_t size = 0;

  std::string_view at(std::size_t offset) const {
    if (data == nullptr || offset >= size) {
      return {};
    }
    const void* nul = std::memchr(data + offset, '\0', size - offset);
    if (nul == nullptr) {
      return {};
    }
    return {data + offset, static_cast<std::size_t>(static_cast<const char*>(nul) - (data + offset))};
  }
};

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

// Version names by version index (the low 15 bits of a .gnu.version entry).
class VersionNames {
 public:
  void read_definitions(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr) {
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) {
      return;
    }
    const StringTable strings = string_table(elf, shdr.sh_link);
    std::size_t offset = 0;
    for (std::size_t n = 0; n < shdr.sh_info || shdr.sh_info == 0; ++n) {
      GElf_Verdef def;
      if (gelf_getverdef(data, static_cast<int>(offset), &def) == nullptr) {
        break;
      }
      GElf_Verdaux aux;
      // The base definition (VER_FLG_BASE) names the file itself: its symbols are unversioned.
      if ((def.vd_flags & VER_FLG_BASE) == 0 &&
          gelf_getverdaux(data, static_cast<int>(offset + def.vd_aux), &aux) != nullptr) {
        set(def.vd_ndx, strings.at(aux.vda_name));
      }
      if (def.vd_next == 0) {
        break;
      }
      offset += def.vd_next;
    }
  }

  void read_requirements(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr) {
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) {
      return;
    }
    const StringTable strings = string_table(elf, shdr.sh_link);
    std::size_t offset = 0;
    for (std::size_t n = 0; n < shdr.sh_info || shdr.sh_info == 0; ++n) {
      GElf_Verneed need;
      if (gelf_getverneed(data, static_cast<int>(offset), &need) == nullptr) {
        break;
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
      if (need.vn_next == 0) {
        break;
      }
      offset += need.vn_next;
    }
  }

  std::string_view at(std::uint16_t index) const {
    return index < names_.size() ? names_[index] : std::string_view{};
  }

 private:
  void set(std::size_t index, std::string_view name) {
    index &= 0x7fff;
    if (index >= names_.size()) {
      names_.resize(index + 1);
    }
    names_[index] = name;
  }

  std::vector<std::string_view> names_;  // views into libelf's mapping of the file
};

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

bool has_glob_chars(std::string_view s) { return s.find_first_of("*?[\\") != std::string_view::npos; }

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
  const ElfFile& file = *opened;
  Elf* elf = file.elf();

  ElfSymbolTable table;
  table.path_ = path;

  Elf_Scn* dynsym = nullptr;
  Elf_Scn* symtab = nullptr;
  Elf_Scn* versym = nullptr;
  GElf_Shdr dynsym_shdr{};
  GElf_Shdr symtab_shdr{};
  VersionNames versions;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) {
      return make_error(path + ": corrupt section header: " + libelf_error());
    }
    switch (shdr.sh_type) {
      case SHT_DYNSYM:
        dynsym = scn;
        dynsym_shdr = shdr;
        break;
      case SHT_SYMTAB:
        symtab = scn;
        symtab_shdr = shdr;
        break;
      case SHT_GNU_versym:
        versym = scn;
        break;
      case SHT_GNU_verdef:
        versions.read_definitions(elf, scn, shdr);
        break;
      case SHT_GNU_verneed:
        versions.read_requirements(elf, scn, shdr);
        break;
      case SHT_NOTE:
        if (table.build_id_.empty()) {
          table.build_id_ = read_build_id(scn);
        }
        break;
      default:
        break;
    }
  }

  auto count_of = [](const GElf_Shdr& shdr) -> std::size_t {
    return shdr.sh_entsize == 0 ? 0 : shdr.sh_size / shdr.sh_entsize;
  };
  const std::size_t expected = count_of(dynsym_shdr) + count_of(symtab_shdr);
  table.symbols_.reserve(expected);
  table.hashes_.reserve(expected);

  Elf_Data* versym_data = versym != nullptr ? elf_getdata(versym, nullptr) : nullptr;
  const auto* version_indices =
      versym_data != nullptr ? static_cast<const std::uint16_t*>(versym_data->d_buf) : nullptr;
  const std::size_t version_count = versym_data != nullptr ? versym_data->d_size / sizeof(std::uint16_t) : 0;

  // Segments are few; remember the last hit since symbols cluster by section.
  const std::vector<LoadSegment>& segments = file.segments();
  std::size_t last_segment = 0;
  auto file_offset = [&](std::uint64_t addr) -> std::uint64_t {
    if (last_segment < segments.size()) {
      const LoadSegment& s = segments[last_segment];
      if (addr >= s.vaddr && addr - s.vaddr < s.memsz) {
        return addr - s.vaddr + s.offset;
      }
    }
    for (std::size_t k = 0; k < segments.size(); ++k) {
      const LoadSegment& s = segments[k];
      if (addr >= s.vaddr && addr - s.vaddr < s.memsz) {
        last_segment = k;
        return addr - s.vaddr + s.offset;
      }
    }
    return 0;
  };

  // Pre-fault the mapped symbol and string tables in one call each: page-faulting them a page
  // at a time costs more than parsing them (Linux >= 5.14; elsewhere the hint is ignored).
  std::size_t raw_size = 0;
  char* raw = elf_rawfile(elf, &raw_size);
  auto prefault = [&](std::size_t section_index) {
    Elf_Scn* scn = elf_getscn(elf, section_index);
    GElf_Shdr shdr;
    if (raw == nullptr || scn == nullptr || gelf_getshdr(scn, &shdr) == nullptr ||
        shdr.sh_type == SHT_NOBITS || shdr.sh_offset >= raw_size) {
      return;
    }
    // libelf maps the whole file, so raw is page-aligned and so is raw + a page-aligned offset.
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t begin = shdr.sh_offset & ~(page - 1);
    const std::uint64_t end = std::min<std::uint64_t>(shdr.sh_offset + shdr.sh_size, raw_size);
    ::madvise(raw + begin, end - begin, MADV_POPULATE_READ);
  };

  // The cost of a 200k-symbol table is memory latency, not parsing: .gnu.hash ordering
  // scatters .dynsym's names over the string table, so names are prefetched a few entries
  // ahead and each is copied while still in cache. .symtab (whose names are mostly in order)
  // is parsed first and deduplicated against .dynsym in a separate, prefetched pass.
  std::vector<Candidate> candidates;
  DedupSet dynsym_keys;
  auto append = [&](const Candidate& c, bool from_dynsym) {
    ElfSymbol& s = table.symbols_.emplace_back();
    s.name.assign(c.name);
    s.version.assign(c.version);
    s.default_version = c.default_version;
    s.address = c.address;
    s.size = c.size;
    s.file_offset = file_offset(c.address);
    s.is_function = c.type == STT_FUNC || c.type == STT_GNU_IFUNC;
    s.is_ifunc = c.type == STT_GNU_IFUNC;
    s.is_global = c.is_global;
    s.from_dynsym = from_dynsym;
    table.hashes_.push_back(static_cast<std::uint32_t>(c.hash));
  };
  auto read_table = [&](Elf_Scn* scn, const GElf_Shdr& shdr, bool from_dynsym) -> Status {
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || data->d_type != ELF_T_SYM) {
      return make_error(path + ": cannot read " + (from_dynsym ? ".dynsym" : ".symtab") + ": " +
                        libelf_error());
    }
    prefault(elf_ndxscn(scn));
    prefault(shdr.sh_link);
    const StringTable strings = string_table(elf, shdr.sh_link);
    // libelf hands out the table in the host's layout for the file's class.
    const std::size_t entry_size = file.is_64bit() ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
    const SymbolArray syms{data->d_buf, std::min(count_of(shdr), data->d_size / entry_size), file.is_64bit()};
    const bool dedup = !from_dynsym && !dynsym_keys.empty();
    const bool keep_keys = from_dynsym && symtab != nullptr;
    candidates.clear();
    if (dedup) {
      candidates.reserve(syms.count);
    }
    std::vector<std::uint64_t> keys;
    if (keep_keys) {
      keys.reserve(syms.count);
    }
    constexpr std::size_t kAhead = 32;
    for (std::size_t k = 1; k < syms.count; ++k) {  // entry 0 is the reserved null symbol
      if (k + kAhead < syms.count) {
        const std::size_t ahead = syms.name_offset(k + kAhead);
        if (ahead + 64 < strings.size) {
          __builtin_prefetch(strings.data + ahead);
          __builtin_prefetch(strings.data + ahead + 64);  // long C++ names span two lines
        }
      }
      const GElf_Sym sym = syms.at(k);
      if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0) {
        continue;
      }
      const unsigned type = GELF_ST_TYPE(sym.st_info);
      if (type == STT_SECTION || type == STT_FILE) {
        continue;
      }
      Candidate c;
      c.name = strings.at(sym.st_name);
      if (c.name.empty()) {
        continue;
      }
      if (from_dynsym) {
        if (version_indices != nullptr && k < version_count) {
          const std::uint16_t v = version_indices[k];
          c.version = versions.at(v & 0x7fff);
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
      if (dedup) {
        candidates.push_back(c);
        continue;
      }
      if (keep_keys) {
        keys.push_back(c.key());
      }
      append(c, from_dynsym);
    }
    if (keep_keys) {
      dynsym_keys.insert_all(keys);
    }

    if (dedup) {
      // .symtab repeats the exported symbols; the .dynsym entry wins (it carries the version).
      // Local symbols never appear in .dynsym, so only globals are looked up.
      for (std::size_t j = 0; j < candidates.size(); ++j) {
        if (j + kAhead < candidates.size()) {
          dynsym_keys.prefetch(candidates[j + kAhead].key());
        }
        const Candidate& c = candidates[j];
        if (!(c.is_global && dynsym_keys.contains(c.key()))) {
          append(c, from_dynsym);
        }
      }
    }
    table.index_new_symbols();
    return {};
  };

  if (dynsym != nullptr) {
    if (auto st = read_table(dynsym, dynsym_shdr, true); !st) {
      return std::move(st).take_error();
    }
  }
  if (symtab != nullptr) {
    if (auto st = read_table(symtab, symtab_shdr, false); !st) {
      return std::move(st).take_error();
    }
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
