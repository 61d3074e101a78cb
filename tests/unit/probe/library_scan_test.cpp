// Library discovery: /proc/<pid>/maps of real child processes and the loader's cache.
#include "probe/library_scan.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>

namespace eacgm::probe {
namespace {

using ::testing::HasSubstr;

// The parent process never dlopens the stripped copy, so finding it in a child's maps proves
// the child's own dlopen was seen (a fork would inherit anything the parent had mapped).
const std::string kChildLib = EACGM_FX_ELF_STRIPPED;

// A forked child that dlopens a library (optionally in its own mount namespace) and waits
// until the test is done with it.
class ChildWithLibrary {
 public:
  enum class Ready : char { kOk = 'o', kDlopenFailed = 'd', kUnshareFailed = 'u' };

  explicit ChildWithLibrary(const std::string& lib, bool own_mount_ns = false) {
    int up[2];
    int down[2];
    if (::pipe2(up, O_CLOEXEC) != 0 || ::pipe2(down, O_CLOEXEC) != 0) {
      return;
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(up[0]);
      ::close(down[1]);
      Ready r = Ready::kOk;
      if (own_mount_ns && ::unshare(CLONE_NEWNS) != 0) {
        r = Ready::kUnshareFailed;
      } else if (::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) {
        r = Ready::kDlopenFailed;
      }
      const char c = static_cast<char>(r);
      (void)!::write(up[1], &c, 1);
      char ignored = 0;
      (void)!::read(down[0], &ignored, 1);  // returns at EOF when the parent closes its end
      ::_exit(0);
    }
    ::close(up[1]);
    ::close(down[0]);
    release_ = down[1];
    char c = 0;
    if (pid_ > 0 && ::read(up[0], &c, 1) == 1) {
      ready_ = static_cast<Ready>(c);
      started_ = true;
    }
    ::close(up[0]);
  }
  ChildWithLibrary(const ChildWithLibrary&) = delete;
  ChildWithLibrary& operator=(const ChildWithLibrary&) = delete;
  ~ChildWithLibrary() {
    if (release_ >= 0) {
      ::close(release_);
    }
    if (pid_ > 0) {
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  int pid() const { return pid_; }
  bool started() const { return started_; }
  Ready ready() const { return ready_; }

 private:
  int pid_ = -1;
  int release_ = -1;
  bool started_ = false;
  Ready ready_ = Ready::kOk;
};

const MappedFile* find_path(const std::vector<MappedFile>& files, const std::string& path) {
  for (const MappedFile& f : files) {
    if (f.path == path) {
      return &f;
    }
  }
  return nullptr;
}

std::string canonical(const std::string& p) { return std::filesystem::canonical(p).string(); }

TEST(ScanMaps, ChildThatDlopensTheFixtureMapsIt) {
  ChildWithLibrary child(kChildLib);
  ASSERT_TRUE(child.started());
  ASSERT_EQ(child.ready(), ChildWithLibrary::Ready::kOk);
  const auto id = file_identity(kChildLib);
  ASSERT_TRUE(id.ok()) << id.error();

  const std::vector<MappedFile> files = scan_pid_maps(child.pid());
  const MappedFile* f = find_path(files, canonical(kChildLib));
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->dev, id->first);
  EXPECT_EQ(f->inode, id->second);
  EXPECT_EQ(f->open_path, f->path);  // same mount namespace
  EXPECT_THAT(f->pids, ::testing::ElementsAre(child.pid()));

  // Negative control: this process never mapped it.
  EXPECT_EQ(find_path(scan_pid_maps(::getpid()), canonical(kChildLib)), nullptr);

  // Each (dev, inode) once, and only real files.
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  for (const MappedFile& m : files) {
    EXPECT_TRUE(seen.emplace(m.dev, m.inode).second) << m.path;
    EXPECT_EQ(m.path.front(), '/') << m.path;
    EXPECT_THAT(m.path, ::testing::Not(HasSubstr("(deleted)")));
  }
}

TEST(ScanMaps, FilesSharedByProcessesListEveryPid) {
  ChildWithLibrary a(kChildLib);
  ChildWithLibrary b(kChildLib);
  ASSERT_TRUE(a.started() && b.started());
  const MapsScan scan = scan_maps({a.pid(), b.pid()});
  const MappedFile* f = find_path(scan.files, canonical(kChildLib));
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->pids, ::testing::ElementsAre(a.pid(), b.pid()));

  // The whole-system scan sees it too, under both pids.
  const MapsScan all = scan_maps();
  const MappedFile* g = find_path(all.files, canonical(kChildLib));
  ASSERT_NE(g, nullptr);
  EXPECT_THAT(g->pids, ::testing::IsSupersetOf({a.pid(), b.pid()}));
}

TEST(ScanMaps, VanishedProcessIsSkippedSilently) {
  const MapsScan scan = scan_maps({INT_MAX - 1});
  EXPECT_TRUE(scan.files.empty());
  EXPECT_TRUE(scan.warnings.empty());
}

TEST(ScanMaps, PermissionErrorsAreReportedOnce) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root to drop to another user in a child";
  }
  // The child becomes nobody: every root process's maps are then unreadable to it.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) {
      ::_exit(2);
    }
    const MapsScan scan = scan_maps({::getppid(), 1});
    const bool one_warning = scan.warnings.size() == 1 &&
                             scan.warnings[0].find("2 process(es)") != std::string::npos &&
                             scan.warnings[0].find("CAP_SYS_PTRACE") != std::string::npos;
    ::_exit(one_warning && scan.files.empty() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 2) {
    GTEST_SKIP() << "cannot switch to uid 65534 here";
  }
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// What refused the read, not "run as root" to someone who is root: the errno text, the
// ptrace access check and CAP_SYS_PTRACE for root, and the pid's other explanations.
TEST(ScanMaps, DeniedWarningSaysWhatFailed) {
  const std::string root = maps_denied_warning(1, 1, EACCES, true);
  EXPECT_NE(root.find("of 1 process(es) (first: pid 1)"), std::string::npos) << root;
  EXPECT_NE(root.find(std::strerror(EACCES)), std::string::npos) << root;
  EXPECT_NE(root.find("EACCES"), std::string::npos) << root;
  EXPECT_EQ(root.find("run as root"), std::string::npos) << root;
  EXPECT_NE(root.find("ptrace access check"), std::string::npos) << root;
  EXPECT_LT(root.size(), 320u) << "one line a person reads";
  EXPECT_NE(root.find("--cap-add SYS_PTRACE"), std::string::npos) << root;
  EXPECT_NE(root.find("another PID namespace"), std::string::npos) << root;
  EXPECT_NE(root.find("kernel thread"), std::string::npos) << root;
  EXPECT_NE(root.find("exited"), std::string::npos) << root;

  const std::string user = maps_denied_warning(3, 77, EPERM, false);
  EXPECT_NE(user.find("of 3 process(es) (first: pid 77)"), std::string::npos) << user;
  EXPECT_NE(user.find(std::strerror(EPERM)), std::string::npos) << user;
  EXPECT_NE(user.find("EPERM"), std::string::npos) << user;
  EXPECT_NE(user.find("run as root or with CAP_SYS_PTRACE"), std::string::npos) << user;
  EXPECT_LT(user.size(), 320u);
  EXPECT_NE(user.find("another PID namespace"), std::string::npos) << user;
}

TEST(ScanMaps, OtherMountNamespaceIsReachedThroughProcRoot) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "unshare(CLONE_NEWNS) needs CAP_SYS_ADMIN";
  }
  ChildWithLibrary child(kChildLib, /*own_mount_ns=*/true);
  ASSERT_TRUE(child.started());
  if (child.ready() == ChildWithLibrary::Ready::kUnshareFailed) {
    GTEST_SKIP() << "unshare(CLONE_NEWNS) not permitted here";
  }
  ASSERT_EQ(child.ready(), ChildWithLibrary::Ready::kOk);
  const std::vector<MappedFile> files = scan_pid_maps(child.pid());
  const MappedFile* f = find_path(files, canonical(kChildLib));
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->open_path, "/proc/" + std::to_string(child.pid()) + "/root" + f->path);
  const auto id = file_identity(f->open_path);
  ASSERT_TRUE(id.ok()) << id.error();
  EXPECT_EQ(id->first, f->dev);
  EXPECT_EQ(id->second, f->inode);
}

TEST(FileIdentity, MissingFileIsAnError) {
  const auto id = file_identity("/nonexistent/lib.so");
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error(), "cannot stat /nonexistent/lib.so: No such file or directory");
}

// --- ld.so.cache ----------------------------------------------------------------------------

const CachedLibrary* find_name(const std::vector<CachedLibrary>& libs, const std::string& name) {
  for (const CachedLibrary& l : libs) {
    if (l.name == name) {
      return &l;
    }
  }
  return nullptr;
}

// "N libs found in cache" from `ldconfig -p`, an independent count of the same file.
long ldconfig_count() {
  const std::unique_ptr<FILE, int (*)(FILE*)> p(
      ::popen("PATH=\"$PATH:/sbin:/usr/sbin\" ldconfig -p 2>/dev/null", "r"), &::pclose);
  long n = -1;
  if (p && std::fscanf(p.get(), "%ld libs found", &n) != 1) {
    n = -1;
  }
  return n;
}

TEST(LdCache, SystemCacheHasLibcAndCudaRuntime) {
  const auto libs = ld_cache_libraries();
  ASSERT_TRUE(libs.ok()) << libs.error();
  const CachedLibrary* libc = find_name(*libs, "libc.so.6");
  ASSERT_NE(libc, nullptr);
  EXPECT_TRUE(std::filesystem::exists(libc->path)) << libc->path;
  EXPECT_NE(libc->flags, -1) << "parsed by the ldconfig fallback, not directly";
  for (const CachedLibrary& l : *libs) {
    EXPECT_EQ(l.path.front(), '/') << l.name;
  }
  const long expected = ldconfig_count();
  if (expected >= 0) {
    EXPECT_EQ(static_cast<long>(libs->size()), expected);
  }
  const std::string cudart = "/usr/local/cuda-13.0/lib/libcudart.so.13";
  if (std::filesystem::exists(cudart)) {
    const CachedLibrary* c = find_name(*libs, "libcudart.so.13");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->path, cudart);
  }
}

// A cache in the new format, optionally behind an old-format table, built by hand.
std::vector<unsigned char> make_cache(bool with_old_table) {
  std::vector<unsigned char> out;
  auto put = [&](const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    out.insert(out.end(), b, b + n);
  };
  auto put32 = [&](std::uint32_t v) { put(&v, 4); };
  if (with_old_table) {
    put("ld.so-1.7.0", 12);  // magic plus the padding before nlibs
    put32(1);
    put32(0x0303);
    put32(0);
    put32(0);
    while (out.size() % 8 != 0) {
      out.push_back(0);
    }
  }
  const std::size_t start = out.size();
  put("glibc-ld.so.cache1.1", 20);
  put32(2);          // nlibs
  put32(64);         // len_strings
  out.push_back(2);  // little endian
  out.insert(out.end(), 3, 0);
  put32(0);  // extension offset
  out.insert(out.end(), 12, 0);
  const std::uint32_t strings = 48 + 2 * 24;  // relative to the new header
  const char text[] = "libfoo.so.1\0/lib/libfoo.so.1\0libbar.so\0/opt/libbar.so";
  const std::uint32_t offs[] = {0, 12, 29, 39};
  for (int i = 0; i < 2; ++i) {
    put32(0x0303);
    put32(strings + offs[2 * i]);
    put32(strings + offs[2 * i + 1]);
    put32(0);
    const std::uint64_t hwcap = 0;
    put(&hwcap, 8);
  }
  EXPECT_EQ(out.size() - start, strings);
  put(text, sizeof text);
  return out;
}

TEST(LdCache, ParsesNewFormatAloneAndBehindTheOldTable) {
  for (const bool old : {false, true}) {
    SCOPED_TRACE(old ? "old+new" : "new");
    const std::vector<unsigned char> bytes = make_cache(old);
    const auto libs = parse_ld_cache(bytes);
    ASSERT_TRUE(libs.ok()) << libs.error();
    ASSERT_EQ(libs->size(), 2U);
    EXPECT_EQ((*libs)[0].name, "libfoo.so.1");
    EXPECT_EQ((*libs)[0].path, "/lib/libfoo.so.1");
    EXPECT_EQ((*libs)[1].name, "libbar.so");
    EXPECT_EQ((*libs)[1].path, "/opt/libbar.so");
    EXPECT_EQ((*libs)[1].flags, 0x0303);
  }
}

TEST(LdCache, CorruptCachesAreErrors) {
  std::vector<unsigned char> bytes = make_cache(false);
  const std::vector<unsigned char> truncated(bytes.begin(), bytes.begin() + 60);
  EXPECT_THAT(parse_ld_cache(truncated).error(), HasSubstr("truncated"));

  std::vector<unsigned char> no_nul = bytes;
  no_nul.pop_back();  // the last path loses its terminator
  EXPECT_THAT(parse_ld_cache(no_nul).error(), HasSubstr("entry 1 points outside"));

  std::vector<unsigned char> garbage(100, 'x');
  EXPECT_THAT(parse_ld_cache(garbage).error(), HasSubstr("unknown magic"));

  std::vector<unsigned char> big_endian = bytes;
  big_endian[28] = 3;
  EXPECT_THAT(parse_ld_cache(big_endian).error(), HasSubstr("byte order"));
}

TEST(LdCache, UnreadableCacheFallsBackToLdconfig) {
  const auto libs = ld_cache_libraries("/nonexistent/ld.so.cache");
  if (!libs.ok()) {
    EXPECT_THAT(libs.error(), HasSubstr("cannot read /nonexistent/ld.so.cache"));
    return;
  }
  ASSERT_NE(find_name(*libs, "libc.so.6"), nullptr);
  EXPECT_EQ(find_name(*libs, "libc.so.6")->flags, -1);
}

}  // namespace
}  // namespace eacgm::probe
