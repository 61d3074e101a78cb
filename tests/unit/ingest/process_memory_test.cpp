// Strings read from a process's memory (this one's): up to the NUL, across pages, up
// to an unreadable page, cut at the limit; nothing from a gone process or a bad
// address; and through /proc/<pid>/mem where process_vm_readv is refused.
#include "ingest/process_memory.h"

#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace eacgm::ingest {
namespace {

std::uint32_t self() { return static_cast<std::uint32_t>(getpid()); }
std::uint64_t address(const void* p) { return reinterpret_cast<std::uint64_t>(p); }

// Two pages, the second made unreadable on request.
class Pages {
 public:
  Pages() {
    void* p = mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    base_ = static_cast<char*>(p);
  }
  ~Pages() { munmap(base_, 2 * page_); }
  Pages(const Pages&) = delete;
  Pages& operator=(const Pages&) = delete;
  // `s` (with its NUL when `nul`) placed to end `before_end` bytes into the second page
  // (negative: before the first page ends).
  char* place(const char* s, std::ptrdiff_t before_end, bool nul = true) {
    std::size_t n = std::strlen(s) + (nul ? 1 : 0);
    char* at = base_ + page_ + before_end - static_cast<std::ptrdiff_t>(n);
    std::memcpy(at, s, n);
    return at;
  }
  void protect_second() { mprotect(base_ + page_, page_, PROT_NONE); }

 private:
  std::size_t page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  char* base_ = nullptr;
};

TEST(ProcessMemory, ReadsAStringUpToItsNul) {
  static const char kName[] = "_Z12probe_kernelPi";
  EXPECT_EQ(read_process_string(self(), address(kName)), kName);
  static const char kEmpty[] = "";
  EXPECT_EQ(read_process_string(self(), address(kEmpty)), "");
}

TEST(ProcessMemory, ReadsAcrossAPageBoundary) {
  Pages pages;
  const char* s = pages.place("_Z20straddling_the_pagesv", 10);
  EXPECT_EQ(read_process_string(self(), address(s)), "_Z20straddling_the_pagesv");
}

TEST(ProcessMemory, AStringEndingBeforeAnUnreadablePageReadsWhole) {
  Pages pages;
  const char* s = pages.place("_Z10at_the_endv", 0);
  pages.protect_second();
  EXPECT_EQ(read_process_string(self(), address(s)), "_Z10at_the_endv");
}

TEST(ProcessMemory, AStringRunningIntoAnUnreadablePageIsNotRead) {
  Pages pages;
  const char* s = pages.place("_Z10no_nul_here", 0, /*nul=*/false);
  pages.protect_second();
  EXPECT_EQ(read_process_string(self(), address(s)), std::nullopt);
}

TEST(ProcessMemory, CutAtTheLimit) {
  static const char kName[] = "_Z15a_rather_long_namev";
  EXPECT_EQ(read_process_string(self(), address(kName), 6), "_Z15a_");
  EXPECT_EQ(read_process_string(self(), address(kName), 0), "");
}

TEST(ProcessMemory, NothingFromABadAddressOrAGoneProcess) {
  EXPECT_EQ(read_process_string(self(), 0), std::nullopt);
  EXPECT_EQ(read_process_string(self(), 0x10), std::nullopt) << "below any mapping";
  EXPECT_EQ(read_process_string(self(), ~0ull - 3), std::nullopt) << "not user space";
  pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  static const char kName[] = "_Z1av";
  EXPECT_EQ(read_process_string(static_cast<std::uint32_t>(child), address(kName)), std::nullopt);
  EXPECT_EQ(read_process_string(0, address(kName)), std::nullopt);
}

TEST(ProcessMemory, FallsBackToProcMemWhereProcessVmReadvIsRefused) {
  static const char kName[] = "_Z13through_procv";
  pid_t child = fork();
  if (child == 0) {
    // As a container's seccomp profile may: process_vm_readv fails with EPERM.
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(10);
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) _exit(11);
    char buf[8];
    iovec local{buf, sizeof(buf)};
    iovec remote{const_cast<char*>(kName), sizeof(buf)};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != -1 || errno != EPERM) _exit(12);
    auto got = read_process_string(static_cast<std::uint32_t>(getpid()), address(kName));
    _exit(got == kName ? 0 : 13);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10/11: no seccomp; 12: not refused; 13: not read";
}

}  // namespace
}  // namespace eacgm::ingest
