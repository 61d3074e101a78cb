// Loads the Python stack sampler and attaches it to a CPU-clock perf event on each CPU.
#include "probe/py_sampler.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <utility>

#include "core/unique_fd.h"
#include "probe/bpf_tracer.h"
#include "probe/percpu_maps.h"
#include "py_sample.skel.h"

namespace eacgm::probe {
namespace {

// The record layout the reader decodes (bpf/py_sample.h).
static_assert(sizeof(eacgm_py_frame) == 24);
static_assert(offsetof(eacgm_py_sample, frames) == EACGM_PY_SAMPLE_HEADER);
static_assert(sizeof(eacgm_py_sample) == EACGM_PY_SAMPLE_SIZE(EACGM_PY_MAX_DEPTH));
static_assert(offsetof(eacgm_py_sample, call_probe) == 40);
static_assert(sizeof(eacgm_py_layout) == 32);
static_assert(sizeof(eacgm_py_proc) == 48);

int open_cpu_clock(int cpu, std::uint32_t hz) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = hz;
  // Every task on the CPU (pid -1): the program itself keeps only registered processes.
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

Result<std::unique_ptr<PySampler>> PySampler::open(const PySamplerOptions& options) {
  if (options.hz == 0 || options.hz > 10000) {
    return make_error(fmt::format("Python sampling rate {} Hz is out of range (1 to 10000)", options.hz));
  }
  if (auto st = check_bpf_privileges(); !st) return std::move(st).take_error();
  if (auto st = check_kernel_btf(options.btf_path); !st) return std::move(st).take_error();
  LibbpfLogCapture log;
  std::unique_ptr<PySampler> s(new PySampler());
  LIBBPF_OPTS(bpf_object_open_opts, open_opts);
  if (!options.btf_path.empty()) open_opts.btf_custom_path = options.btf_path.c_str();
  s->skel_ = py_sample_bpf__open_opts(&open_opts);
  if (!s->skel_) {
    const int err = errno;
    return make_errno_error(err, fmt::format("cannot open the Python sampler's BPF object: {}{}",
                                             errno_text(err), log.last_lines()));
  }
  if (s->skel_->rodata->py_abi_version != EACGM_PY_ABI_VERSION) {
    return make_error(
        fmt::format("the Python sampler's BPF object is stale (ABI {} here, {} expected): rebuild eacgm",
                    s->skel_->rodata->py_abi_version, EACGM_PY_ABI_VERSION));
  }
  if (int err = bpf_map__set_max_entries(s->skel_->maps.py_samples, options.ringbuf_bytes)) {
    return make_errno_error(
        err, fmt::format("Python sample ring buffer of {} bytes rejected: {} (use a power of two)",
                         options.ringbuf_bytes, errno_text(err)));
  }
  if (options.calls_in_flight_fd >= 0) {
    if (int err = bpf_map__reuse_fd(s->skel_->maps.calls_in_flight, options.calls_in_flight_fd)) {
      return make_errno_error(
          err, fmt::format("cannot share the tracer's waiting-call map with the Python sampler: {}",
                           errno_text(err)));
    }
  }
  if (int err = py_sample_bpf__load(s->skel_)) {
    return make_errno_error(err, fmt::format("cannot load the Python sampler's BPF program: {}{}",
                                             errno_text(err), log.last_lines()));
  }
  auto cpus = possible_cpus();
  if (!cpus) {
    return make_errno_error(cpus.error_errno(), cpus.error() + " (/sys/devices/system/cpu/possible)");
  }
  const int ncpu = static_cast<int>(*cpus);
  for (int cpu = 0; cpu < ncpu; ++cpu) {
    UniqueFd event(open_cpu_clock(cpu, options.hz));
    if (!event) {
      if (errno == ENODEV) continue;  // a possible CPU that is not online
      const int err = errno;
      return make_errno_error(err, fmt::format("cannot open a CPU-clock perf event on CPU {}: {} (check "
                                               "kernel.perf_event_paranoid, or run without Python sampling: "
                                               "--python-hz 0)",
                                               cpu, errno_text(err)));
    }
    BpfLink link(bpf_program__attach_perf_event(s->skel_->progs.eacgm_py_sample, event.get()));
    if (!link) {
      const int err = errno;
      return make_errno_error(err, fmt::format("cannot attach the Python sampler to CPU {}: {}{}", cpu,
                                               errno_text(err), log.last_lines(1)));
    }
    // The link owns the event from here: destroying it disables and closes the event.
    (void)event.release();
    s->links_.push_back(std::move(link));
  }
  s->hz_ = options.hz;
  return s;
}

PySampler::~PySampler() {
  links_.clear();  // before the program they attach
  if (skel_) py_sample_bpf__destroy(skel_);
}

Status PySampler::add_process(std::uint32_t pid, const eacgm_py_proc& proc) {
  if (bpf_map__update_elem(skel_->maps.py_procs, &pid, sizeof(pid), &proc, sizeof(proc), BPF_ANY)) {
    const int err = errno;
    return make_errno_error(err,
                            fmt::format("cannot sample Python process {}: {}{}", pid, errno_text(err),
                                        err == E2BIG ? " (too many Python processes: 4096 at most)" : ""));
  }
  return {};
}

void PySampler::remove_process(std::uint32_t pid) {
  bpf_map__delete_elem(skel_->maps.py_procs, &pid, sizeof(pid), 0);
}

std::uint64_t PySampler::code_type(std::uint32_t pid) const {
  const auto proc = process(pid);
  return proc ? proc->code_type : 0;
}

std::optional<eacgm_py_proc> PySampler::process(std::uint32_t pid) const {
  eacgm_py_proc proc{};
  if (bpf_map__lookup_elem(skel_->maps.py_procs, &pid, sizeof(pid), &proc, sizeof(proc), 0) != 0) {
    return std::nullopt;
  }
  return proc;
}

int PySampler::ringbuf_fd() const { return bpf_map__fd(skel_->maps.py_samples); }

PySamplerCounters PySampler::counters() const {
  PySamplerCounters c;
  // A counter that cannot be read counts as 0.
  auto sum = [&](std::uint32_t key) {
    auto total = sum_percpu(skel_->maps.py_counters, key);
    return total ? *total : 0;
  };
  c.samples = sum(EACGM_PY_CNT_SAMPLES);
  c.drops = sum(EACGM_PY_CNT_DROPS);
  c.no_thread = sum(EACGM_PY_CNT_NO_THREAD);
  c.thread_walks = sum(EACGM_PY_CNT_THREAD_WALKS);
  return c;
}

}  // namespace eacgm::probe
