// The private driver (EACGM_PRIVATE_DRIVER): the process runs libcuda from a copy of it
// under another file name, loaded by the hook's constructor before anything else can
// load libcuda. The agent's uprobes are per file (per inode), so its breakpoints on
// libcuda never reach this process: no trap per launch, copy or memset. The hook counts
// the launches exactly instead (EACGM_GPU_TIME's ring), so the agent leaves those uprobes
// off for this process alone (docs/gpu-time.md, "Exact counts without the uprobes").
//
// EACGM_PRIVATE_DRIVER=1 keeps the copy in /dev/shm, =DIR in DIR. It is named
// eacgm-libcuda.so.KEY: not libcuda.so*, the file names the agent's driver probes match;
// KEY is the NVIDIA kernel module's version (the driver library must match it anyway), or
// without one (no NVIDIA module: a stand-in driver) the driver file's size and time. The
// copy keeps the soname libcuda.so.1, so the runtime's dlopen("libcuda.so.1") gets it.
// It is made once (written aside, renamed into place) and used only if it belongs to this
// user or root and nobody else may write it, in a folder of this user or root where
// nobody else may replace it (/dev/shm is everyone's, but sticky). Then it is loaded by its
// path, which glibc keeps as its name (dladdr, dl_iterate_phdr).
//
// A program that opens the driver by its path (dlopen("/usr/lib/.../libcuda.so.1")) would
// load the real file beside the copy, two drivers in one process: the hook's dlopen sends
// such a path, when its file is the size of the copy, to the soname, which is the copy.
//
// Fails open: a program already linked against libcuda, no driver found, no room for the
// copy: one line on stderr, and the process loads libcuda as usual (and the agent's
// uprobes count it).
#include "govern/hook/private_driver.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "core/driver_copy_name.h"
#include "core/ld_cache.h"
#include "core/proc_file.h"
#include "govern/hook/real_functions.h"

// The size of the copy once it is loaded (0 before, or without one), and glibc's dlopen:
// what the dlopen trampoline below reads.
extern "C" {
std::uint64_t eacgm_private_driver_size = 0;
void* eacgm_real_dlopen = nullptr;
}

namespace eacgm::govern::hook {
namespace {

constexpr const char* kDriverName = kPrivateDriverSoname;

// Why the copy was not used, said when the process first reaches the driver
// (report_private_driver): every process started with the setting runs the constructor,
// and most (a shell, its commands) never use CUDA.
char g_why[512];

void say(const std::string& why) { std::snprintf(g_why, sizeof g_why, "%s", why.c_str()); }

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The loader's order for a name without a slash (the opener's DT_RPATH/RUNPATH aside,
// which libcuda's openers do not use for it): LD_LIBRARY_PATH, the loader cache, the
// default folders.
std::string find_driver() {
  if (const char* llp = std::getenv("LD_LIBRARY_PATH"); llp != nullptr) {
    std::string_view rest(llp);
    while (!rest.empty()) {
      const std::size_t colon = rest.find(':');
      std::string dir(rest.substr(0, colon));
      rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
      if (dir.empty()) dir = ".";
      std::string path = dir + "/" + kDriverName;
      if (is_file(path)) return path;
    }
  }
  if (const auto cache = read_small_file("/etc/ld.so.cache", 64u << 20)) {
    auto libs = parse_ld_cache(
        std::span<const unsigned char>(reinterpret_cast<const unsigned char*>(cache->data()), cache->size()));
    if (libs) {
      for (const CachedLibrary& lib : *libs) {
        if (lib.name == kDriverName && lib.flags == kLdCacheX86_64Libc6 && is_file(lib.path)) return lib.path;
      }
    }
  }
  for (const char* dir : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"}) {
    std::string path = std::string(dir) + "/" + kDriverName;
    if (is_file(path)) return path;
  }
  return {};
}

// The size of a copy this process may load: a regular file of this user or root that
// nobody else may write, not a symbolic link; -1 (and why) for any other.
off_t trusted_copy_size(const std::string& path, std::string& why) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    why = path + ": " + std::strerror(errno);
    return -1;
  }
  if (!S_ISREG(st.st_mode) || (st.st_uid != ::geteuid() && st.st_uid != 0) ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    why = path + ": not a file of this user or root that only its owner may write";
    return -1;
  }
  return st.st_size;
}

// A folder where only this user or root can replace a file of theirs: owned by one of
// them, and either nobody else may write it or it is sticky (/dev/shm, /tmp).
bool trusted_folder(const std::string& dir, std::string& why) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    why = dir + ": not a folder";
    return false;
  }
  const bool owner_ok = st.st_uid == ::geteuid() || st.st_uid == 0;
  const bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (!owner_ok || (others_write && (st.st_mode & S_ISVTX) == 0)) {
    why =
        dir + ": others may replace files in it (a folder of this user or root, sticky if others may write)";
    return false;
  }
  return true;
}

bool copy_file(const std::string& from, const std::string& to, std::string& why) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    why = from + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::fstat(in, &st) != 0 || st.st_size <= 0) {
    why = from + ": not a library file to copy";
    ::close(in);
    return false;
  }
  const std::string aside = to + ".part." + std::to_string(::getpid());
  const int out = ::open(aside.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
  if (out < 0) {
    why = aside + ": " + std::strerror(errno);
    ::close(in);
    return false;
  }
  off_t done = 0;
  bool ok = true;
  while (ok && done < st.st_size) {
    const ssize_t n = ::sendfile(out, in, &done, static_cast<std::size_t>(st.st_size - done));
    if (n <= 0) {
      why = "copying ";
      why.append(from).append(" to ").append(aside).append(": ").append(n < 0 ? std::strerror(errno)
                                                                              : "short copy");
      ok = false;
    }
  }
  ::close(in);
  if (::fchmod(out, 0755) != 0 && ok) {
    why = aside + ": " + std::strerror(errno);
    ok = false;
  }
  ::close(out);
  if (ok && ::rename(aside.c_str(), to.c_str()) != 0) {
    why = "renaming " + aside + ": " + std::strerror(errno);
    ok = false;
  }
  if (!ok) ::unlink(aside.c_str());
  return ok;
}

}  // namespace

void load_private_driver() {
  const char* setting = std::getenv("EACGM_PRIVATE_DRIVER");
  if (setting == nullptr || *setting == '\0' || std::strcmp(setting, "0") == 0) return;
  if (void* loaded = dlopen(kDriverName, RTLD_LAZY | RTLD_NOLOAD); loaded != nullptr) {
    dlclose(loaded);
    say("the program was linked against libcuda, which was loaded before the hook");
    return;
  }
  const std::string dir = std::strcmp(setting, "1") == 0 ? std::string("/dev/shm") : std::string(setting);
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    say(dir + ": " + std::strerror(errno));
    return;
  }
  std::string why;
  if (!trusted_folder(dir, why)) {
    say(why);
    return;
  }
  const std::string version =
      driver_module_version(read_small_file("/proc/driver/nvidia/version", 4096).value_or(""));
  std::string copy;
  std::string source;
  if (!version.empty()) copy = dir + "/" + driver_copy_name(version, 0, 0);
  if (copy.empty() || !is_file(copy)) {
    source = find_driver();
    if (source.empty()) {
      say("no libcuda.so.1 in LD_LIBRARY_PATH, the loader cache or the default folders");
      return;
    }
    char* real = ::realpath(source.c_str(), nullptr);
    if (real != nullptr) {
      source = real;
      std::free(real);
    }
    if (version.empty()) {
      struct stat st {};
      if (::stat(source.c_str(), &st) != 0) {
        say(source + ": " + std::strerror(errno));
        return;
      }
      copy = dir + "/" + driver_copy_name({}, st.st_size, st.st_mtime);
    } else if (!driver_of_version(source, version)) {
      // A driver library of another version than the module's would fail at cuInit anyway.
      say(source + " is not the kernel module's version " + version);
      return;
    }
  }
  if (!is_file(copy) && !copy_file(source, copy, why)) {
    say(why);
    return;
  }
  const off_t size = trusted_copy_size(copy, why);
  if (size < 0) {
    say(why);
    return;
  }
  // The folder lets nobody else replace the checked file, so its path still names it.
  void* handle = dlopen(copy.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    say(copy + ": " + (err != nullptr ? err : "dlopen failed"));
    return;
  }
  remember_library(HookLibrary::kCuda, handle);
  __atomic_store_n(&eacgm_private_driver_size, static_cast<std::uint64_t>(size), __ATOMIC_RELEASE);
}

bool private_driver_loaded() { return __atomic_load_n(&eacgm_private_driver_size, __ATOMIC_ACQUIRE) != 0; }

void report_private_driver() {
  static std::atomic<bool> said{false};
  if (g_why[0] == '\0' || said.exchange(true)) return;
  std::fprintf(stderr, "eacgm hook: private driver not used (%s); libcuda loads as usual\n", g_why);
}

namespace {

void* resolve_real_dlopen() {
  void* p = __atomic_load_n(&eacgm_real_dlopen, __ATOMIC_ACQUIRE);
  if (p != nullptr) return p;
  p = dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.34");
  if (p == nullptr) p = dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.2.5");
  __atomic_store_n(&eacgm_real_dlopen, p, __ATOMIC_RELEASE);
  return p;
}

// Before the program's own constructors and main: the runtimes open libcuda later.
__attribute__((constructor)) void private_driver_at_start() {
  resolve_real_dlopen();
  load_private_driver();
}

}  // namespace

}  // namespace eacgm::govern::hook

// The name the trampoline passes on while the copy is loaded: the soname (the copy) for
// a path to a driver file of the copy's size, else `name` as it is.
extern "C" const char* eacgm_private_driver_name(const char* name) {
  if (name == nullptr) return name;
  const char* slash = std::strrchr(name, '/');
  if (slash == nullptr || std::strncmp(slash + 1, "libcuda.so", 10) != 0) return name;
  struct stat st {};
  if (::stat(name, &st) != 0) return name;
  const std::uint64_t size = __atomic_load_n(&eacgm_private_driver_size, __ATOMIC_ACQUIRE);
  return static_cast<std::uint64_t>(st.st_size) == size ? eacgm::govern::hook::kPrivateDriverSoname : name;
}

// A dlopen before the constructor found glibc's (another preloaded library's
// constructor): found now and called from here, which is glibc's "caller" then (it
// matters only for names its RUNPATH would find).
extern "C" void* eacgm_dlopen_unresolved(const char* name, int flags) {
  void* p = eacgm::govern::hook::resolve_real_dlopen();
  if (p == nullptr) return nullptr;
  void* (*fn)(const char*, int);
  std::memcpy(&fn, &p, sizeof fn);
  return fn(eacgm_private_driver_name(name), flags);
}

// dlopen itself: glibc finds the caller's library (its RUNPATH, its namespace) by the
// return address, so the trampoline reaches glibc by a jump, the caller's return address
// still on the stack; only while the copy is loaded does it first ask for the name.
#if defined(__x86_64__)
asm(R"(
  .text
  .globl dlopen
  .type dlopen, @function
dlopen:
  cmpq $0, eacgm_private_driver_size(%rip)
  je 1f
  pushq %rdi
  pushq %rsi
  subq $8, %rsp
  call eacgm_private_driver_name
  addq $8, %rsp
  popq %rsi
  popq %rdi
  movq %rax, %rdi
1:
  movq eacgm_real_dlopen(%rip), %rax
  testq %rax, %rax
  je 2f
  jmp *%rax
2:
  jmp eacgm_dlopen_unresolved
  .size dlopen, .-dlopen
)");
#elif defined(__aarch64__)
asm(R"(
  .text
  .globl dlopen
  .type dlopen, %function
dlopen:
  adrp x16, eacgm_private_driver_size
  ldr x16, [x16, :lo12:eacgm_private_driver_size]
  cbz x16, 1f
  stp x29, x30, [sp, #-32]!
  mov x29, sp
  str x1, [sp, #16]
  bl eacgm_private_driver_name
  ldr x1, [sp, #16]
  ldp x29, x30, [sp], #32
1:
  adrp x16, eacgm_real_dlopen
  ldr x16, [x16, :lo12:eacgm_real_dlopen]
  cbz x16, 2f
  br x16
2:
  b eacgm_dlopen_unresolved
  .size dlopen, .-dlopen
)");
#else
#error "libeacgm_hook.so needs a dlopen trampoline for this architecture"
#endif
