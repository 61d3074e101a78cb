// ElfSymbolTable against a fixture library whose truth is checked through the dynamic
// loader (dlopen/dlvsym/dlinfo) and the file's bytes, not through another ELF reader.
#include "probe/elf_symbols.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <tuple>

namespace eacgm::probe {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

const std::string kLib = EACGM_FX_ELF_LIB;
const std::string kStripped = EACGM_FX_ELF_STRIPPED;

ElfSymbolTable load_or_die(const std::string& path) {
  auto t = ElfSymbolTable::load(path);
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error());
  return std::move(t).value();
}

std::array<unsigned char, 16> file_bytes(const std::string& path, std::uint64_t offset) {
  std::array<unsigned char, 16> out{};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::pread(fd, out.data(), out.size(), static_cast<off_t>(offset)),
            static_cast<ssize_t>(out.size()));
  ::close(fd);
  return out;
}

std::array<unsigned char, 16> memory_bytes(const void* p) {
  std::array<unsigned char, 16> out{};
  std::memcpy(out.data(), p, out.size());
  return out;
}

// The fixture loaded by the real dynamic loader: the ground truth for addresses.
class LoadedFixture {
 public:
  LoadedFixture() : handle_(::dlopen(kLib.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (handle_ != nullptr) {
      link_map* map = nullptr;
      if (::dlinfo(handle_, RTLD_DI_LINKMAP, &map) == 0) {
        bias_ = map->l_addr;
      }
    }
  }
  LoadedFixture(const LoadedFixture&) = delete;
  LoadedFixture& operator=(const LoadedFixture&) = delete;
  ~LoadedFixture() {
    if (handle_ != nullptr) {
      ::dlclose(handle_);
    }
  }
  void* handle() const { return handle_; }
  // Runtime address of a link-time address (st_value).
  std::uintptr_t runtime(std::uint64_t address) const { return bias_ + address; }

 private:
  void* handle_;
  std::uintptr_t bias_ = 0;
};

TEST(ElfSymbolTable, VersionedLookupPicksDefaultOrNamedVersion) {
  const ElfSymbolTable t = load_or_die(kLib);
  const ElfSymbol* def = t.find("foo");
  const ElfSymbol* v1 = t.find("foo@V1");
  const ElfSymbol* v2 = t.find("foo@@V2");
  ASSERT_NE(def, nullptr);
  ASSERT_NE(v1, nullptr);
  EXPECT_EQ(def, v2);
  EXPECT_EQ(def, t.find("foo@V2"));
  EXPECT_EQ(def->version, "V2");
  EXPECT_TRUE(def->default_version);
  EXPECT_EQ(v1->version, "V1");
  EXPECT_FALSE(v1->default_version);
  EXPECT_NE(v1->address, def->address);
  EXPECT_TRUE(v1->from_dynsym);
  EXPECT_EQ(t.find("foo@V3"), nullptr);
  EXPECT_EQ(t.find("no_such_symbol"), nullptr);
  // .symtab repeats foo@V1 and foo@@V2; after dedup exactly the two .dynsym entries remain.
  int foos = 0;
  for (const ElfSymbol& s : t.symbols()) {
    foos += s.name == "foo" ? 1 : 0;
  }
  EXPECT_EQ(foos, 2);
}

TEST(ElfSymbolTable, NoDuplicateSymbolsAfterMergingTables) {
  const ElfSymbolTable t = load_or_die(kLib);
  std::set<std::tuple<std::string, std::string, std::uint64_t>> seen;
  for (const ElfSymbol& s : t.symbols()) {
    EXPECT_TRUE(seen.emplace(s.name, s.version, s.address).second) << s.name << "@" << s.version;
    EXPECT_NE(s.address, 0U);
  }
  // fx_target is unversioned in .symtab but fx_target@@V2 in .dynsym: one entry, the .dynsym one.
  const ElfSymbol* target = t.find("fx_target");
  ASSERT_NE(target, nullptr);
  EXPECT_TRUE(target->from_dynsym);
  EXPECT_EQ(target->version, "V2");
}

TEST(ElfSymbolTable, AddressesAndFileOffsetsAgreeWithTheDynamicLoader) {
  const ElfSymbolTable t = load_or_die(kLib);
  const LoadedFixture loaded;
  ASSERT_NE(loaded.handle(), nullptr) << ::dlerror();

  struct Case {
    const ElfSymbol* sym;
    void* runtime;
  };
  const Case cases[] = {
      {t.find("foo"), ::dlsym(loaded.handle(), "foo")},
      {t.find("foo@V1"), ::dlvsym(loaded.handle(), "foo", "V1")},
      {t.find("fx_target"), ::dlsym(loaded.handle(), "fx_target")},
      {t.find("fx_calls_local"), ::dlsym(loaded.handle(), "fx_calls_local")},
  };
  for (const Case& c : cases) {
    ASSERT_NE(c.sym, nullptr);
    ASSERT_NE(c.runtime, nullptr);
    SCOPED_TRACE(c.sym->name + "@" + c.sym->version);
    EXPECT_EQ(loaded.runtime(c.sym->address), reinterpret_cast<std::uintptr_t>(c.runtime));
    // The fixture is linked at 0x40000000: a reader returning st_value as the offset fails here.
    EXPECT_EQ(c.sym->address - c.sym->file_offset, 0x40000000U);
    EXPECT_EQ(file_bytes(kLib, c.sym->file_offset), memory_bytes(c.runtime));
  }
  // The versions really are different code: call both through the loader's pointers.
  auto* v1 = reinterpret_cast<int (*)(int)>(::dlvsym(loaded.handle(), "foo", "V1"));
  auto* v2 = reinterpret_cast<int (*)(int)>(::dlsym(loaded.handle(), "foo"));
  EXPECT_EQ(v1(10), 11);
  EXPECT_EQ(v2(10), 12);
}

TEST(ElfSymbolTable, LocalSymbolComesFromSymtabAndIsCallable) {
  const ElfSymbolTable t = load_or_die(kLib);
  const ElfSymbol* local = t.find("fx_local_helper");
  ASSERT_NE(local, nullptr);
  EXPECT_FALSE(local->is_global);
  EXPECT_FALSE(local->from_dynsym);
  EXPECT_TRUE(local->is_function);
  EXPECT_TRUE(local->version.empty());

  const LoadedFixture loaded;
  ASSERT_NE(loaded.handle(), nullptr) << ::dlerror();
  const std::uintptr_t at = loaded.runtime(local->address);
  EXPECT_EQ(file_bytes(kLib, local->file_offset), memory_bytes(reinterpret_cast<const void*>(at)));
  auto* fn = reinterpret_cast<int (*)(int)>(at);
  EXPECT_EQ(fn(2), 17);  // x * 7 + 3
}

TEST(ElfSymbolTable, AliasesAndLocalCopiesCollapseToOneGlobalName) {
  const ElfSymbolTable t = load_or_die(kLib);
  ASSERT_NE(t.find("fx_alias"), nullptr);
  EXPECT_EQ(t.find("fx_alias")->file_offset, t.find("fx_target")->file_offset);

  std::vector<std::string> names;
  std::set<std::uint64_t> offsets;
  for (const ElfSymbol* s : t.match("fx_*")) {
    names.push_back(s->name);
    EXPECT_TRUE(offsets.insert(s->file_offset).second) << "offset repeated by " << s->name;
    EXPECT_TRUE(s->is_function);
  }
  // Five distinct code addresses: fx_calls_local, fx_target (= fx_alias), fx_local_helper,
  // fx_ifunc_impl, and fx_ifunc (whose local resolver shares its offset, so the global name
  // is reported). fx_data is an object and is not matched.
  EXPECT_EQ(names.size(), 5U);
  EXPECT_THAT(names, ::testing::Contains("fx_calls_local"));
  EXPECT_THAT(names, ::testing::Contains("fx_local_helper"));
  EXPECT_THAT(names, ::testing::Contains("fx_ifunc"));
  EXPECT_THAT(names, ::testing::Contains("fx_ifunc_impl"));
  EXPECT_THAT(names, ::testing::Contains(::testing::AnyOf("fx_target", "fx_alias")));
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("fx_data")));
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("fx_ifunc_resolver")));

  // foo_v1/foo_v2 are local copies at foo@V1/foo@@V2: the exported name is reported.
  std::vector<std::string> foo_names;
  for (const ElfSymbol* s : t.match("foo*")) {
    foo_names.push_back(s->name + "@" + s->version);
  }
  EXPECT_THAT(foo_names, UnorderedElementsAre("foo@V1", "foo@V2"));
  // A glob without metacharacters goes through the index and must agree with fnmatch.
  EXPECT_EQ(t.match("foo"), t.match("fo[o]"));
  EXPECT_TRUE(t.match("nothing*").empty());
}

TEST(ElfSymbolTable, IfuncIsAFunctionAtItsResolver) {
  const ElfSymbolTable t = load_or_die(kLib);
  const ElfSymbol* ifunc = t.find("fx_ifunc");
  const ElfSymbol* resolver = t.find("fx_ifunc_resolver");
  ASSERT_NE(ifunc, nullptr);
  ASSERT_NE(resolver, nullptr);
  EXPECT_TRUE(ifunc->is_function);
  EXPECT_TRUE(ifunc->is_ifunc);
  EXPECT_FALSE(resolver->is_ifunc);
  EXPECT_EQ(ifunc->address, resolver->address);
  const ElfSymbol* data = t.find("fx_data");
  ASSERT_NE(data, nullptr);
  EXPECT_FALSE(data->is_function);
  EXPECT_TRUE(data->is_global);
}

TEST(ElfSymbolTable, StrippedCopyHasOnlyDynsym) {
  const ElfSymbolTable full = load_or_die(kLib);
  const ElfSymbolTable stripped = load_or_die(kStripped);
  EXPECT_LT(stripped.symbols().size(), full.symbols().size());
  for (const ElfSymbol& s : stripped.symbols()) {
    EXPECT_TRUE(s.from_dynsym) << s.name;
    EXPECT_TRUE(s.is_global) << s.name;
  }
  EXPECT_EQ(stripped.find("fx_local_helper"), nullptr);
  ASSERT_NE(stripped.find("foo@V1"), nullptr);
  EXPECT_EQ(stripped.find("foo@V1")->file_offset, full.find("foo@V1")->file_offset);
  EXPECT_EQ(stripped.build_id(), full.build_id());
}

TEST(ElfSymbolTable, BuildIdIsTheLinkedOne) {
  const ElfSymbolTable t = load_or_die(kLib);
  EXPECT_EQ(t.build_id(), "0123456789abcdef0123456789abcdef01234567");
  EXPECT_EQ(t.path(), kLib);
}

TEST(ElfSymbolTable, IndexSurvivesMoves) {
  // Short names live inside std::string (SSO); an index of string_views would dangle here.
  ElfSymbolTable a = load_or_die(kLib);
  ElfSymbolTable b = std::move(a);
  ElfSymbolTable c = load_or_die(kStripped);
  c = std::move(b);
  ASSERT_NE(c.find("foo"), nullptr);
  EXPECT_EQ(c.find("foo")->version, "V2");
  EXPECT_EQ(c.match("fx_*").size(), 5U);
}

TEST(ElfSymbolTable, ErrorsNameTheFileAndTheProblem) {
  auto missing = ElfSymbolTable::load("/nonexistent/x.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(), "cannot open /nonexistent/x.so: No such file or directory");

  auto text = ElfSymbolTable::load(EACGM_FX_ELF_SOURCE);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error(), std::string(EACGM_FX_ELF_SOURCE) + ": not an ELF file");

  auto dir = ElfSymbolTable::load("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_THAT(dir.error(), HasSubstr("/tmp: not a regular file"));
}

TEST(IsElfFile, TellsElfFilesFromScriptsAndTheUnreadable) {
  EXPECT_TRUE(is_elf_file(kLib));
  EXPECT_FALSE(is_elf_file(EACGM_FX_ELF_SOURCE));
  EXPECT_FALSE(is_elf_file("/nonexistent/x.so"));
  EXPECT_FALSE(is_elf_file("/tmp"));
  // A script as pyenv's shims are: a `#!` line, then text.
  const std::string script = ::testing::TempDir() + "/eacgm_shim_python3";
  std::FILE* f = std::fopen(script.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("#!/usr/bin/env bash\nexec python3.11 \"$@\"\n", f);
  std::fclose(f);
  EXPECT_FALSE(is_elf_file(script));
  std::filesystem::remove(script);
}

// The libc this process runs on, from the loader (dladdr on a libc function would name a
// sanitizer runtime that intercepts it).
std::string loaded_libc_path() {
  void* handle = ::dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) {
    return "";
  }
  link_map* map = nullptr;
  std::string path;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map->l_name != nullptr) {
    path = map->l_name;
  }
  ::dlclose(handle);
  return path;
}

TEST(ElfSymbolTable, RealLibcHasVersionedMemcpy) {
  const std::string libc = loaded_libc_path();
  ASSERT_FALSE(libc.empty());
  const ElfSymbolTable t = load_or_die(libc);
  const ElfSymbol* malloc_sym = t.find("malloc");
  ASSERT_NE(malloc_sym, nullptr);
  EXPECT_TRUE(malloc_sym->is_function);
  EXPECT_TRUE(malloc_sym->is_global);
  EXPECT_THAT(malloc_sym->version, ::testing::StartsWith("GLIBC_"));
  // x86-64 glibc exports memcpy@@GLIBC_2.14 and the old memcpy@GLIBC_2.2.5 (memmove semantics).
  const ElfSymbol* memcpy_new = t.find("memcpy");
  const ElfSymbol* memcpy_old = t.find("memcpy@GLIBC_2.2.5");
  ASSERT_NE(memcpy_new, nullptr);
  ASSERT_NE(memcpy_old, nullptr);
  EXPECT_EQ(memcpy_new->version, "GLIBC_2.14");
  EXPECT_TRUE(memcpy_new->default_version);
  EXPECT_FALSE(memcpy_old->default_version);
  EXPECT_TRUE(memcpy_new->is_ifunc);
  EXPECT_EQ(t.build_id().size(), 40U);
}

TEST(ElfSymbolTable, CudaRuntimeSymbolsCarryTheSonameVersion) {
  const ElfSymbolTable t = load_or_die(std::filesystem::canonical(EACGM_TEST_CUDART));
  const ElfSymbol* s = t.find("cudaMalloc");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->version, "libcudart.so.13");
  EXPECT_EQ(t.find("cudaMalloc@libcudart.so.13"), s);
  EXPECT_NE(s->file_offset, 0U);
  EXPECT_FALSE(t.match("cudaLaunch*").empty());
}

TEST(ElfSymbolTable, LoadsALargeLibrary) {
  // A library with tens of thousands of symbols (its load time is a benchmark:
  // eacgm_bench_probe); here only what it finds is checked.
  const char* candidates[] = {
      "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1",
      "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
      "/usr/local/cuda/lib64/libcublasLt.so.13",
  };
  for (const char* path : candidates) {
    if (!std::filesystem::exists(path)) continue;
    auto t = ElfSymbolTable::load(path);
    ASSERT_TRUE(t.ok()) << t.error();
    EXPECT_GT(t->symbols().size(), 10000u) << path;
    std::size_t with_offset = 0;
    for (const auto& sym : t->symbols()) with_offset += sym.file_offset != 0;
    EXPECT_GT(with_offset, t->symbols().size() / 2) << path;
    return;
  }
  GTEST_SKIP() << "no large library on this machine";
}

}  // namespace
}  // namespace eacgm::probe
