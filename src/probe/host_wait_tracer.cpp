// Loads the host-wait tracer and attaches it to the raw syscall tracepoints.
#include "probe/host_wait_tracer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <utility>

#include "host_waits.skel.h"
#include "probe/bpf_tracer.h"
#include "probe/percpu_maps.h"

namespace eacgm::probe {
namespace {

// The layout the drain decodes (bpf/host_waits.h).
static_assert(sizeof(eacgm_wait_key) == 16);
static_assert(sizeof(eacgm_wait_value) == 16);
static_assert(sizeof(eacgm_wait_proc) == 32);

}  // namespace

Result<std::unique_ptr<HostWaitTracer>> HostWaitTracer::open(const HostWaitOptions& options) {
  if (auto st = check_bpf_privileges(); !st) return std::move(st).take_error();
  if (auto st = check_kernel_btf(options.btf_path); !st) return std::move(st).take_error();
  LibbpfLogCapture log;
  std::unique_ptr<HostWaitTracer> t(new HostWaitTracer());
  LIBBPF_OPTS(bpf_object_open_opts, open_opts);
  if (!options.btf_path.empty()) open_opts.btf_custom_path = options.btf_path.c_str();
  t->skel_ = host_waits_bpf__open_opts(&open_opts);
  if (!t->skel_) {
    const int err = errno;
    return make_errno_error(
        err, fmt::format("cannot open the host-wait BPF object: {}{}", errno_text(err), log.last_lines()));
  }
  if (t->skel_->rodata->wait_abi_version != EACGM_WAIT_ABI_VERSION) {
    return make_error(
        fmt::format("the host-wait BPF object is stale (ABI {} here, {} expected): rebuild eacgm",
                    t->skel_->rodata->wait_abi_version, EACGM_WAIT_ABI_VERSION));
  }
  if (int err = bpf_map__set_max_entries(t->skel_->maps.wait_hist, options.hist_keys)) {
    return make_errno_error(
        err, fmt::format("host-wait histogram of {} keys rejected: {}", options.hist_keys, errno_text(err)));
  }
  if (options.shared_pids_fd >= 0) {
    if (int err = bpf_map__reuse_fd(t->skel_->maps.wait_pids, options.shared_pids_fd)) {
      return make_errno_error(err, fmt::format("cannot share the pid filter with the host-wait tracer: {}{}",
                                               errno_text(err), log.last_lines()));
    }
    t->shared_ = true;
  }
  if (int err = host_waits_bpf__load(t->skel_)) {
    return make_errno_error(
        err, fmt::format("cannot load the host-wait BPF program: {}{}", errno_text(err), log.last_lines()));
  }
  for (bpf_program* prog : {t->skel_->progs.eacgm_wait_enter, t->skel_->progs.eacgm_wait_exit,
                            t->skel_->progs.eacgm_wait_proc_exit, t->skel_->progs.eacgm_wait_proc_exec}) {
    BpfLink link(bpf_program__attach(prog));
    if (!link) {
      const int err = errno;
      return make_errno_error(err, fmt::format("cannot attach the host-wait program {}: {}{}",
                                               bpf_program__name(prog), errno_text(err), log.last_lines(1)));
    }
    t->links_.push_back(std::move(link));
  }
  return t;
}

HostWaitTracer::~HostWaitTracer() {
  links_.clear();  // before the programs they attach
  if (skel_) host_waits_bpf__destroy(skel_);
}

Status HostWaitTracer::watch(std::uint32_t pid) {
  if (shared_ || watched_.contains(pid)) return {};
  if (watched_.size() >= kMaxWatched) {
    return make_error(
        fmt::format("cannot watch the waits of process {}: {} processes watched already", pid, kMaxWatched));
  }
  const std::uint8_t one = 1;
  if (bpf_map__update_elem(skel_->maps.wait_pids, &pid, sizeof(pid), &one, sizeof(one), BPF_ANY)) {
    const int err = errno;
    return make_errno_error(err,
                            fmt::format("cannot watch the waits of process {}: {}", pid, errno_text(err)));
  }
  watched_.insert(pid);
  return {};
}

std::vector<std::uint32_t> HostWaitTracer::watched() const { return {watched_.begin(), watched_.end()}; }

std::vector<HostWaitEntry> HostWaitTracer::read() const {
  std::vector<HostWaitEntry> out;
  read_percpu_hash<eacgm_wait_key, eacgm_wait_value>(
      bpf_map__fd(skel_->maps.wait_hist), [&](const eacgm_wait_key& k, std::span<const eacgm_wait_value> v) {
        HostWaitEntry e{k, 0, 0};
        for (const auto& w : v) {
          e.count += w.count;
          e.sum_ns += w.sum_ns;
        }
        out.push_back(e);
      });
  return out;
}

std::vector<std::pair<std::uint32_t, eacgm_wait_proc>> HostWaitTracer::read_processes() const {
  std::vector<std::pair<std::uint32_t, eacgm_wait_proc>> out;
  const int fd = bpf_map__fd(skel_->maps.wait_procs);
  std::uint32_t key = 0, next = 0;
  std::uint32_t* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    eacgm_wait_proc p{};
    if (bpf_map_lookup_elem(fd, &next, &p) == 0) out.emplace_back(next, p);
    key = next;
    prev = &key;
  }
  return out;
}

void HostWaitTracer::forget(const std::vector<std::uint32_t>& pids) {
  if (pids.empty()) return;
  const std::set<std::uint32_t> gone(pids.begin(), pids.end());
  delete_keys_of<eacgm_wait_key>(bpf_map__fd(skel_->maps.wait_hist), gone);
  for (std::uint32_t pid : gone) {
    bpf_map__delete_elem(skel_->maps.wait_procs, &pid, sizeof(pid), 0);
    if (!shared_ && watched_.erase(pid) > 0)
      bpf_map__delete_elem(skel_->maps.wait_pids, &pid, sizeof(pid), 0);
  }
}

HostWaitCounters HostWaitTracer::counters() const {
  HostWaitCounters c;
  // A counter that cannot be read counts as 0.
  auto sum = [&](std::uint32_t key) {
    auto total = sum_percpu(skel_->maps.wait_counters, key);
    return total ? *total : 0;
  };
  c.map_full = sum(EACGM_WAIT_CNT_MAP_FULL);
  c.open_full = sum(EACGM_WAIT_CNT_OPEN_FULL);
  return c;
}

}  // namespace eacgm::probe
