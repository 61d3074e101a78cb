// eacgm-bench-syscalls: counts the system calls one process (all its threads) makes
// for SECONDS and prints those made, by name, with their rate. Used to see how often a
// traced program changes its address space (bench/gpu/trap_context.sh).
//
// Usage: eacgm-bench-syscalls PID SECONDS   (root)
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "syscall_count.skel.h"

namespace {

// The x86-64 numbers of the calls that matter here; others print as numbers.
const char* syscall_name(unsigned nr) {
  switch (nr) {
    case 0:
      return "read";
    case 1:
      return "write";
    case 7:
      return "poll";
    case 9:
      return "mmap";
    case 10:
      return "mprotect";
    case 11:
      return "munmap";
    case 12:
      return "brk";
    case 16:
      return "ioctl";
    case 24:
      return "sched_yield";
    case 25:
      return "mremap";
    case 28:
      return "madvise";
    case 202:
      return "futex";
    case 228:
      return "clock_gettime";
    case 232:
      return "epoll_wait";
    case 281:
      return "epoll_pwait";
    default:
      return nullptr;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::atoi(argv[1]) <= 0 || std::atof(argv[2]) <= 0) {
    std::fprintf(stderr, "usage: %s PID SECONDS\n", argv[0]);
    return 2;
  }
  const double seconds = std::atof(argv[2]);
  syscall_count_bpf* skel = syscall_count_bpf__open();
  if (!skel) return 1;
  skel->rodata->target_tgid = static_cast<__u32>(std::atoi(argv[1]));
  if (syscall_count_bpf__load(skel) || syscall_count_bpf__attach(skel)) {
    std::fprintf(stderr, "eacgm-bench-syscalls: cannot load or attach BPF (root needed)\n");
    syscall_count_bpf__destroy(skel);
    return 1;
  }
  usleep(static_cast<useconds_t>(seconds * 1e6));
  const int fd = bpf_map__fd(skel->maps.syscall_counts);
  const int cpus = libbpf_num_possible_cpus();
  std::vector<__u64> per_cpu(static_cast<size_t>(cpus > 0 ? cpus : 1));
  std::vector<std::pair<unsigned long long, unsigned>> made;
  for (unsigned nr = 0; nr < 512; ++nr) {
    if (bpf_map_lookup_elem(fd, &nr, per_cpu.data()) != 0) continue;
    unsigned long long total = 0;
    for (__u64 v : per_cpu) total += v;
    if (total > 0) made.emplace_back(total, nr);
  }
  syscall_count_bpf__destroy(skel);
  std::sort(made.rbegin(), made.rend());
  std::printf("%-16s %12s %12s\n", "syscall", "calls", "per_second");
  for (const auto& [calls, nr] : made) {
    const char* name = syscall_name(nr);
    char number[16];
    std::snprintf(number, sizeof number, "%u", nr);
    std::printf("%-16s %12llu %12.1f\n", name ? name : number, calls, static_cast<double>(calls) / seconds);
  }
  return 0;
}
