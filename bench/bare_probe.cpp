// eacgm-bench-bare: attaches EMPTY BPF programs to one function (entry, or entry and
// exit) with the same uprobe_multi mechanism eacgm uses, and holds them until
// SIGINT/SIGTERM. The overhead benchmark subtracts this floor from eacgm's cost.
// `record` attaches the minimal one-record-per-call programs instead (bare.bpf.c) and
// drains their ring buffer on a thread of its own, as a tracer's reader would.
// `session` attaches an empty uprobe session program that declines the return (Linux
// 6.13+): the floor of the always-on mode's counted calls; `count` a session program
// that counts the call per process in a per-CPU hash map and declines the return: the
// least a count per process costs.
//
// SYMBOL may be several, comma-separated (one link; those not in LIBRARY are skipped).
// With BARE_CYCLE=F (0 < F < 1; entry, session and count only) the programs are attached
// for F of every second and detached for the rest, each switch written to BARE_SWITCHES
// in the agent's duty-cycle log format (src/agent/duty_cycle.h), so that
// bench/gpu/window_cost.py compares a traced process's steps with and without them.
//
// BARE_PID=P limits the link to process P (uprobe_multi's pid): other processes get no
// breakpoint at all.
//
// Usage: eacgm-bench-bare LIBRARY SYMBOL[,SYMBOL...] entry|entry+exit|record|session|count
#include <bpf/libbpf.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bare.skel.h"
#include "core/duty_switch_log.h"
#include "core/unique_fd.h"
#include "probe/elf_symbols.h"
#include "probe/uprobe_multi.h"

namespace {

long long monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// Waits up to `seconds` for a stop signal; true when one came.
bool stopped_within(const sigset_t& stop_signals, double seconds) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(seconds);
  ts.tv_nsec = static_cast<long>((seconds - static_cast<double>(ts.tv_sec)) * 1e9);
  return sigtimedwait(&stop_signals, nullptr, &ts) > 0;
}

// BARE_CYCLE: the links in `fds` (attached) stay for `cycle` of each second, then are
// closed for the rest and made again by `attach`, until a stop signal.
template <typename Attach>
int cycle_until_stopped(const sigset_t& stop_signals, double cycle, const char* path,
                        std::vector<eacgm::UniqueFd>& fds, Attach attach) {
  std::FILE* log = std::fopen(path, "w");
  if (!log) {
    std::fprintf(stderr, "eacgm-bench-bare: cannot write %s\n", path);
    return 1;
  }
  const long long first = monotonic_ns();
  eacgm::write_duty_switch(log, true, first, first, first, true);
  for (;;) {
    if (stopped_within(stop_signals, cycle)) break;
    const long long began = monotonic_ns();
    fds.clear();
    eacgm::write_duty_switch(log, false, began, began, monotonic_ns(), true);
    if (stopped_within(stop_signals, 1.0 - cycle)) break;
    const long long again = monotonic_ns();
    const bool ok = attach();
    const long long counting = monotonic_ns();
    eacgm::write_duty_switch(log, true, again, counting, counting, ok);
    if (!ok) break;
  }
  fds.clear();
  std::fclose(log);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s LIBRARY SYMBOL entry|entry+exit|record|session|count\n", argv[0]);
    return 2;
  }
  const bool record = std::strcmp(argv[3], "record") == 0;
  const bool count = std::strcmp(argv[3], "count") == 0;
  const bool session = count || std::strcmp(argv[3], "session") == 0;
  const bool with_exit = record || std::strcmp(argv[3], "entry+exit") == 0;
  auto elf = eacgm::probe::ElfSymbolTable::load(argv[1]);
  if (!elf) {
    std::fprintf(stderr, "eacgm-bench-bare: %s\n", elf.error().c_str());
    return 1;
  }
  std::vector<std::uint64_t> offsets, cookies;
  for (std::string_view rest = argv[2]; !rest.empty();) {
    const auto comma = rest.find(',');
    const std::string name(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto* sym = elf->find(name);
    if (!sym) {
      std::fprintf(stderr, "eacgm-bench-bare: %s not in %s (skipped)\n", name.c_str(), argv[1]);
      continue;
    }
    offsets.push_back(sym->file_offset);
    cookies.push_back(0);
  }
  if (offsets.empty()) {
    std::fprintf(stderr, "eacgm-bench-bare: none of %s is in %s\n", argv[2], argv[1]);
    return 1;
  }
  const char* pid_env = std::getenv("BARE_PID");
  const auto pid = static_cast<std::uint32_t>(pid_env ? std::strtoul(pid_env, nullptr, 10) : 0);
  const char* cycle_env = std::getenv("BARE_CYCLE");
  const double cycle = cycle_env ? std::atof(cycle_env) : 0.0;
  const char* switches_path = std::getenv("BARE_SWITCHES");
  if (cycle_env && (cycle <= 0.0 || cycle >= 1.0 || record || with_exit || !switches_path)) {
    std::fprintf(stderr,
                 "eacgm-bench-bare: BARE_CYCLE takes 0 < F < 1, with BARE_SWITCHES, for entry, "
                 "session or count\n");
    return 2;
  }
  bare_bpf* skel = bare_bpf__open();
  if (!skel) return 1;
  for (bpf_program* p :
       {skel->progs.bare_entry, skel->progs.bare_exit, skel->progs.min_entry, skel->progs.min_exit}) {
    bpf_program__set_expected_attach_type(p, static_cast<bpf_attach_type>(eacgm::probe::kAttachUprobeMulti));
  }
  // Loaded only when asked for: older kernels refuse the session attach type.
  for (bpf_program* p : {skel->progs.bare_session, skel->progs.min_count}) {
    bpf_program__set_expected_attach_type(p,
                                          static_cast<bpf_attach_type>(eacgm::probe::kAttachUprobeSession));
  }
  bpf_program__set_autoload(skel->progs.bare_session, session && !count);
  bpf_program__set_autoload(skel->progs.min_count, count);
  bpf_program* entry_prog = record    ? skel->progs.min_entry
                            : count   ? skel->progs.min_count
                            : session ? skel->progs.bare_session
                                      : skel->progs.bare_entry;
  bpf_program* exit_prog = record ? skel->progs.min_exit : skel->progs.bare_exit;
  if (bare_bpf__load(skel)) {
    std::fprintf(stderr, "eacgm-bench-bare: cannot load BPF (root needed)\n");
    return 1;
  }
  std::vector<eacgm::UniqueFd> fds;
  auto attach = [&](bpf_program* prog, bool is_return) {
    const auto kind = is_return ? eacgm::probe::MultiLinkKind::kReturn
                      : session ? eacgm::probe::MultiLinkKind::kSession
                                : eacgm::probe::MultiLinkKind::kEntry;
    auto fd = eacgm::probe::create_uprobe_multi_link(bpf_program__fd(prog), argv[1], offsets, cookies, {},
                                                     kind, pid);
    if (!fd) {
      std::fprintf(stderr, "eacgm-bench-bare: %s\n", fd.error().c_str());
      return false;
    }
    fds.push_back(std::move(*fd));
    return true;
  };
  if (with_exit && !attach(exit_prog, true)) return 1;
  if (!attach(entry_prog, false)) return 1;
  // Blocked before any thread starts, then waited for: no signal is lost between a
  // check and a sleep.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::atomic<bool> stop_reader{false};
  std::thread reader;
  if (record) {
    ring_buffer* rb = ring_buffer__new(
        bpf_map__fd(skel->maps.min_events), [](void*, void*, size_t) { return 0; }, nullptr, nullptr);
    if (!rb) {
      std::fprintf(stderr, "eacgm-bench-bare: cannot open the ring buffer\n");
      return 1;
    }
    reader = std::thread([rb, &stop_reader] {
      while (!stop_reader) ring_buffer__poll(rb, 10);  // the programs never wake it
      ring_buffer__free(rb);
    });
  }
  std::printf("attached\n");
  std::fflush(stdout);
  int rc = 0;
  if (cycle > 0.0) {
    rc = cycle_until_stopped(stop_signals, cycle, switches_path, fds,
                             [&] { return attach(entry_prog, false); });
  } else {
    int sig = 0;
    sigwait(&stop_signals, &sig);
  }
  stop_reader = true;
  if (reader.joinable()) reader.join();
  fds.clear();  // detaches before the programs go
  bare_bpf__destroy(skel);
  return rc;
}
