// eacgm-bench-bare: attaches EMPTY BPF programs to one function (entry, or entry and
// exit) with the same uprobe_multi mechanism eacgm uses, and holds them until
// SIGINT/SIGTERM. The overhead benchmark subtracts this floor from eacgm's cost.
//
// Usage: eacgm-bench-bare LIBRARY SYMBOL entry|entry+exit
#include <bpf/libbpf.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "bare.skel.h"
#include "probe/elf_symbols.h"
#include "probe/uprobe_multi.h"

static volatile sig_atomic_t g_stop = 0;
static void on_signal(int) { g_stop = 1; }

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s LIBRARY SYMBOL entry|entry+exit\n", argv[0]);
    return 2;
  }
  bool with_exit = std::strcmp(argv[3], "entry+exit") == 0;
  auto elf = eacgm::probe::ElfSymbolTable::load(argv[1]);
  if (!elf) {
    std::fprintf(stderr, "eacgm-bench-bare: %s\n", elf.error().c_str());
    return 1;
  }
  const auto* sym = elf->find(argv[2]);
  if (!sym) {
    std::fprintf(stderr, "eacgm-bench-bare: %s not in %s\n", argv[2], argv[1]);
    return 1;
  }
  bare_bpf* skel = bare_bpf__open();
  if (!skel) return 1;
  bpf_program__set_expected_attach_type(skel->progs.bare_entry,
                                        static_cast<bpf_attach_type>(eacgm::probe::kAttachUprobeMulti));
  bpf_program__set_expected_attach_type(skel->progs.bare_exit,
                                        static_cast<bpf_attach_type>(eacgm::probe::kAttachUprobeMulti));
  if (bare_bpf__load(skel)) {
    std::fprintf(stderr, "eacgm-bench-bare: cannot load BPF (root needed)\n");
    return 1;
  }
  std::vector<std::uint64_t> offsets{sym->file_offset}, cookies{0};
  std::vector<int> fds;
  if (with_exit) {
    auto fd = eacgm::probe::create_uprobe_multi_link(bpf_program__fd(skel->progs.bare_exit), argv[1],
                                                     offsets, cookies, {}, true);
    if (!fd) {
      std::fprintf(stderr, "eacgm-bench-bare: %s\n", fd.error().c_str());
      return 1;
    }
    fds.push_back(*fd);
  }
  auto fd = eacgm::probe::create_uprobe_multi_link(bpf_program__fd(skel->progs.bare_entry), argv[1],
                                                   offsets, cookies, {}, false);
  if (!fd) {
    std::fprintf(stderr, "eacgm-bench-bare: %s\n", fd.error().c_str());
    return 1;
  }
  fds.push_back(*fd);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  std::printf("attached\n");
  std::fflush(stdout);
  while (!g_stop) pause();
  for (int f : fds) close(f);
  bare_bpf__destroy(skel);
  return 0;
}
