// Trap calibration: a forked child runs two tiny functions of this binary in rounds
// while the parent attaches the agent's own BPF programs to them in each mode.
#include "probe/trap_calibration.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/proc_file.h"
#include "core/proc_maps.h"
#include "core/unique_fd.h"
#include "probe/bpf_tracer.h"

#if defined(__x86_64__)
// The kernel emulates `push %rbp` (one trap per entry, as on every probed entry of
// libcuda, libcudart and libnccl seen so far); `mov %rdi,%rax` it must single-step.
asm(R"(
  .text
  .p2align 4
  .globl eacgm_calibration_emulated
  .type eacgm_calibration_emulated, @function
eacgm_calibration_emulated:
  push %rbp
  pop %rbp
  ret
  .size eacgm_calibration_emulated, .-eacgm_calibration_emulated
  .p2align 4
  .globl eacgm_calibration_stepped
  .type eacgm_calibration_stepped, @function
eacgm_calibration_stepped:
  mov %rdi, %rax
  ret
  .size eacgm_calibration_stepped, .-eacgm_calibration_stepped
)");
extern "C" void eacgm_calibration_emulated();
extern "C" void eacgm_calibration_stepped();
#endif

namespace eacgm::probe {
namespace {

// The file and offset that hold `address` (from /proc/self/maps).
Result<std::pair<std::string, std::uint64_t>> file_offset_of(const void* address) {
  std::string maps;
  read_file_into("/proc/self/maps", maps);  // what it could read: a failure finds nothing below
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  for (std::string_view rest = maps; !rest.empty();) {
    const auto m = parse_maps_line(next_line(rest));
    if (!m || a < m->start || a >= m->end) continue;
    if (m->path.empty() || m->path[0] != '/' || m->path.find(" (deleted)") != std::string_view::npos)
      return make_error(
          fmt::format("calibration: the program's own file is not mapped by a path ({})", m->path));
    return std::pair<std::string, std::uint64_t>{std::string(m->path), a - m->start + m->offset};
  }
  return make_error("calibration: the calibration functions are not in /proc/self/maps");
}

// The child: on each command byte ('e' emulated, 's' stepped) runs `rounds` rounds of
// `calls` calls and writes each round's nanoseconds; 'q' or EOF ends it. Only
// async-signal-safe calls: the parent may have threads.
[[noreturn]] void child_loop(int in, int out, std::uint32_t calls, std::uint32_t rounds) {
  using Fn = void (*)();
  for (;;) {
    char cmd = 0;
    if (read(in, &cmd, 1) != 1 || cmd == 'q') _exit(0);
#if defined(__x86_64__)
    Fn volatile fn = cmd == 's' ? eacgm_calibration_stepped : eacgm_calibration_emulated;
#else
    Fn volatile fn = nullptr;
#endif
    for (std::uint32_t r = 0; r < rounds; ++r) {
      timespec t0{}, t1{};
      clock_gettime(CLOCK_MONOTONIC, &t0);
      for (std::uint32_t i = 0; i < calls; ++i) fn();
      clock_gettime(CLOCK_MONOTONIC, &t1);
      std::uint64_t ns = static_cast<std::uint64_t>(t1.tv_sec - t0.tv_sec) * 1000000000ull +
                         static_cast<std::uint64_t>(t1.tv_nsec) - static_cast<std::uint64_t>(t0.tv_nsec);
      if (write(out, &ns, sizeof ns) != sizeof ns) _exit(1);
    }
  }
}

class Child {
 public:
  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (to_) {
      (void)!write(to_.get(), "q", 1);
      to_.reset();
    }
    from_.reset();
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }

  Status start(std::uint32_t calls, std::uint32_t rounds) {
    int down[2], up[2];
    if (pipe2(down, O_CLOEXEC) != 0) {
      const int err = errno;
      return make_errno_error(err, "calibration: pipe: " + errno_text(err));
    }
    UniqueFd down_read(down[0]), down_write(down[1]);
    if (pipe2(up, O_CLOEXEC) != 0) {
      const int err = errno;
      return make_errno_error(err, "calibration: pipe: " + errno_text(err));
    }
    UniqueFd up_read(up[0]), up_write(up[1]);
    pid_ = fork();
    if (pid_ < 0) {
      const int err = errno;
      return make_errno_error(err, "calibration: fork: " + errno_text(err));
    }
    if (pid_ == 0) {
      // Async-signal-safe calls only (child_loop); it ends in _exit, which runs no destructors.
      close(down[1]);
      close(up[0]);
      child_loop(down[0], up[1], calls, rounds);
    }
    to_ = std::move(down_write);
    from_ = std::move(up_read);
    rounds_ = rounds;
    calls_ = calls;
    return {};
  }
  int pid() const { return pid_; }

  // The fastest round's nanoseconds per call.
  Result<double> measure(char target) {
    if (write(to_.get(), &target, 1) != 1) return make_error("calibration: the child is gone");
    std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
    for (std::uint32_t r = 0; r < rounds_; ++r) {
      std::uint64_t ns = 0;
      if (read(from_.get(), &ns, sizeof ns) != sizeof ns)
        return make_error("calibration: the child stopped answering");
      best = std::min(best, ns);
    }
    return static_cast<double>(best) / calls_;
  }

 private:
  int pid_ = -1;
  UniqueFd to_;
  UniqueFd from_;
  std::uint32_t rounds_ = 0;
  std::uint32_t calls_ = 0;
};

ProbeSpec calibration_spec(const char* symbol) {
  ProbeSpec s;
  s.name = symbol;
  s.domain = "calibration";
  s.library = "*";
  s.symbol = symbol;
  s.with_exit = true;
  return s;
}

}  // namespace

Result<TrapCosts> calibrate_traps(const CalibrationOptions& options) {
#if !defined(__x86_64__)
  (void)options;
  return make_error("calibration: only on x86-64");
#else
  if (options.calls_per_round == 0 || options.rounds == 0) return make_error("calibration: no calls to time");
  auto emulated_at = file_offset_of(reinterpret_cast<const void*>(&eacgm_calibration_emulated));
  if (!emulated_at) return std::move(emulated_at).take_error();
  auto stepped_at = file_offset_of(reinterpret_cast<const void*>(&eacgm_calibration_stepped));
  if (!stepped_at) return std::move(stepped_at).take_error();
  const std::string& path = emulated_at->first;

  BpfOptions bo;
  bo.ringbuf_bytes = 4u << 20;  // per-call records of the last phase, never read
  bo.filter_pids = true;        // the child only
  bo.count_keys = 16;
  bo.count_spill_keys = 16;
  bo.duration_keys = 256;
  auto opened = BpfTracer::open(bo);
  if (!opened) return std::move(opened).take_error();
  BpfTracer& bpf = **opened;

  Child child;
  if (auto st = child.start(options.calls_per_round, options.rounds); !st) return std::move(st).take_error();
  if (auto st = bpf.add_target_pid(static_cast<std::uint32_t>(child.pid()), false); !st)
    return std::move(st).take_error();

  constexpr std::uint32_t kEmulated = 1, kStepped = 2, kPerCall = 3;
  constexpr std::uint8_t kNoReturns = 30;  // one call in 2^30 asks for its return
  const ProbeSpec emulated = calibration_spec("eacgm_calibration_emulated");
  const ProbeSpec stepped = calibration_spec("eacgm_calibration_stepped");
  TrapCosts c;
  c.session = bpf.has_session();

  auto bare_e = child.measure('e');
  if (!bare_e) return std::move(bare_e).take_error();
  auto bare_s = child.measure('s');
  if (!bare_s) return std::move(bare_s).take_error();

  if (c.session) {
    if (auto st = bpf.set_probe(kEmulated, emulated, true, kNoReturns); !st)
      return std::move(st).take_error();
    if (auto st = bpf.set_probe(kStepped, stepped, true, kNoReturns); !st) return std::move(st).take_error();
    auto le = bpf.attach_session(path, {{emulated_at->second, kEmulated, 0}});
    if (!le) return std::move(le).take_error();
    auto ls = bpf.attach_session(stepped_at->first, {{stepped_at->second, kStepped, 0}});
    if (!ls) return std::move(ls).take_error();
    auto entry = child.measure('e');
    if (!entry) return std::move(entry).take_error();
    auto step = child.measure('s');
    if (!step) return std::move(step).take_error();
    if (auto st = bpf.set_sample_shift(kEmulated, 0); !st) return std::move(st).take_error();
    auto both = child.measure('e');
    if (!both) return std::move(both).take_error();
    c.entry_ns = std::max(0.0, *entry - *bare_e);
    c.stepped_entry_ns = std::max(0.0, *step - *bare_s);
    c.entry_return_ns = std::max(0.0, *both - *bare_e);
  }  // the session links detach here

  // Per call as the attacher links it: one session link where the kernel has them.
  if (auto st = bpf.set_probe(kPerCall, emulated, false); !st) return std::move(st).take_error();
  std::vector<UprobeLink> links;
  if (c.session) {
    auto both = bpf.attach_calls(path, {{emulated_at->second, kPerCall, 0}});
    if (!both) return std::move(both).take_error();
    links.push_back(std::move(*both));
  } else {
    for (bool exit : {false, true}) {
      auto link = bpf.attach(path, emulated_at->second, kPerCall, exit);
      if (!link) return std::move(link).take_error();
      links.push_back(std::move(*link));
    }
  }
  auto paired = child.measure('e');
  if (!paired) return std::move(paired).take_error();
  c.per_call_ns = std::max(0.0, *paired - *bare_e);
  if (!c.session) {
    // Without sessions the always-on mode is the per-call one.
    c.entry_ns = c.entry_return_ns = c.per_call_ns;
  }
  c.measured = true;
  return c;
#endif
}

}  // namespace eacgm::probe
