// Loads the generic uprobe programs and turns libbpf's errors into words.
#include "probe/bpf_tracer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <span>
#include <string_view>
#include <tuple>
#include <utility>

#include "probe/always_on.h"
#include "probe/percpu_maps.h"
#include "probe/uprobe_multi.h"
#include "trace.skel.h"

namespace eacgm::probe {

Result<std::unique_ptr<BpfTracer>> BpfTracer::open_and_load(const BpfOptions& options, bool multi,
                                                            bool session) {
  LibbpfLogCapture log;
  std::unique_ptr<BpfTracer> t(new BpfTracer());
  LIBBPF_OPTS(bpf_object_open_opts, open_opts);
  if (!options.btf_path.empty()) open_opts.btf_custom_path = options.btf_path.c_str();
  t->skel_ = trace_bpf__open_opts(&open_opts);
  if (!t->skel_) {
    const int err = errno;
    return make_errno_error(
        err, fmt::format("cannot open the BPF object: {}{}", errno_text(err), log.last_lines()));
  }
  if (auto st = check_abi_version(t->skel_->rodata->abi_version); !st) return std::move(st).take_error();
  t->skel_->rodata->filter_pids = options.filter_pids ? 1 : 0;
  t->skel_->rodata->self_tgid = static_cast<std::uint32_t>(getpid());
  t->skel_->rodata->wakeup_bytes = options.wakeup_bytes;
  t->skel_->rodata->stop_on_load = options.stop_on_load ? 1 : 0;
  t->skel_->rodata->track_in_flight = options.track_in_flight ? 1 : 0;
  t->skel_->rodata->filter_cgroup = options.scope_cgroup_fd >= 0 ? 1 : 0;
  if (int err = bpf_map__set_max_entries(t->skel_->maps.events, options.ringbuf_bytes)) {
    return make_errno_error(err, fmt::format("ring buffer of {} bytes rejected: {} (use a power of two)",
                                             options.ringbuf_bytes, errno_text(err)));
  }
  for (auto [map, keys] : {std::pair{t->skel_->maps.call_counts, options.count_keys},
                           std::pair{t->skel_->maps.call_counts_spill, options.count_spill_keys},
                           std::pair{t->skel_->maps.call_durations, options.duration_keys}}) {
    if (int err = bpf_map__set_max_entries(map, keys)) {
      return make_errno_error(err,
                              fmt::format("always-on map of {} keys rejected: {}", keys, errno_text(err)));
    }
  }
  if (!options.filter_pids) {
    // The process-tree programs only matter when following a command or pid set.
    bpf_program__set_autoload(t->skel_->progs.eacgm_fork, false);
    bpf_program__set_autoload(t->skel_->progs.eacgm_exit_process, false);
  }
  t->multi_ = multi;
  t->session_ = multi && session;
  for (bpf_program* p : {t->skel_->progs.eacgm_count_session, t->skel_->progs.eacgm_call_session}) {
    if (t->session_) {
      bpf_program__set_expected_attach_type(p, static_cast<bpf_attach_type>(kAttachUprobeSession));
    } else {
      bpf_program__set_autoload(p, false);
    }
  }
  for (bpf_program* p : {t->skel_->progs.eacgm_entry_multi, t->skel_->progs.eacgm_exit_multi}) {
    if (multi) {
      bpf_program__set_expected_attach_type(p, static_cast<bpf_attach_type>(kAttachUprobeMulti));
    } else {
      bpf_program__set_autoload(p, false);
    }
  }
  if (int err = trace_bpf__load(t->skel_)) {
    if (err == -EPERM || err == -EACCES) {
      return make_errno_error(
          err, fmt::format("the kernel refused to load eacgm's BPF programs ({}): run as root, and check "
                           "kernel.unprivileged_bpf_disabled and lockdown settings{}",
                           errno_text(err), log.last_lines()));
    }
    return make_errno_error(
        err, fmt::format("cannot load eacgm's BPF programs: {}{}", errno_text(err), log.last_lines()));
  }
  if (options.scope_cgroup_fd >= 0) {
    const std::uint32_t key = 0;
    const std::uint32_t fd = static_cast<std::uint32_t>(options.scope_cgroup_fd);
    if (bpf_map__update_elem(t->skel_->maps.scope_cgroup, &key, sizeof(key), &fd, sizeof(fd), BPF_ANY) != 0) {
      const int err = errno;
      return make_errno_error(
          err, fmt::format("cannot limit the trace to the cgroup ([trace] cgroup): {}", errno_text(err)));
    }
  }
  // Cycled probes count from the start: the window is closed only by a duty cycle (and
  // this is no move of it: the pace's gaps are taken only once a duty cycle runs).
  if (auto st = t->write_duty_state(DutyWindow::kOpen); !st) return std::move(st).take_error();
  return t;
}

Result<std::unique_ptr<BpfTracer>> BpfTracer::open(const BpfOptions& options) {
  if (auto st = check_bpf_privileges(); !st) return std::move(st).take_error();
  if (auto st = check_kernel_btf(options.btf_path); !st) return std::move(st).take_error();
  route_libbpf_messages();

  // First with uprobe sessions (Linux 6.13+: the always-on mode) and uprobe_multi
  // programs; older kernels reject them, and the programs they take serve alone.
  auto loaded = open_and_load(options, true, true);
  if (!loaded) loaded = open_and_load(options, true, false);
  if (!loaded) loaded = open_and_load(options, false, false);
  if (!loaded) return std::move(loaded).take_error();
  auto t = std::move(*loaded);
  LibbpfLogCapture log;
  if (options.filter_pids) {
    for (bpf_program* prog : {t->skel_->progs.eacgm_fork, t->skel_->progs.eacgm_exit_process}) {
      BpfLink link(bpf_program__attach(prog));
      if (!link) {
        const int err = errno;
        return make_errno_error(err, fmt::format("cannot follow child processes (sched tracepoints): {}{}",
                                                 errno_text(err), log.last_lines()));
      }
      t->tp_links_.push_back(std::move(link));
    }
  }
  BpfLink exec(bpf_program__attach(t->skel_->progs.eacgm_exec));
  if (!exec) {
    const int err = errno;
    return make_errno_error(err, fmt::format("cannot watch exec (sched_process_exec tracepoint): {}{}",
                                             errno_text(err), log.last_lines()));
  }
  t->tp_links_.push_back(std::move(exec));
  BpfLink thread_exit(bpf_program__attach(t->skel_->progs.eacgm_thread_exit));
  if (!thread_exit) {
    const int err = errno;
    return make_errno_error(
        err, fmt::format("cannot watch thread exits (sched_process_exit tracepoint): {}{}", errno_text(err),
                         log.last_lines()));
  }
  t->tp_links_.push_back(std::move(thread_exit));
  return t;
}

BpfTracer::~BpfTracer() {
  tp_links_.clear();
  if (skel_) trace_bpf__destroy(skel_);
}

Status BpfTracer::set_probe(std::uint32_t id, const ProbeSpec& spec, bool counted, std::uint8_t sample_shift,
                            bool cycled, bool tally) {
  if (id >= EACGM_MAX_PROBES) {
    return make_error(
        fmt::format("too many probes (limit {}): narrow --probes or symbol patterns", EACGM_MAX_PROBES));
  }
  std::lock_guard<std::mutex> lock(ids_mutex_);
  // A reused id starts from zero hits; zeroed before the entry exists, so none are lost.
  if (auto st = reset_hits(id); !st) return st;
  eacgm_probe p = encode_probe(spec, counted, sample_shift, cycled, tally);
  if (bpf_map__update_elem(skel_->maps.probes, &id, sizeof(id), &p, sizeof(p), BPF_ANY)) {
    const int err = errno;
    return make_errno_error(err,
                            fmt::format("cannot store probe {} ({}): {}", id, spec.name, errno_text(err)));
  }
  stored_.insert(id);
  return {};
}

Status BpfTracer::set_probe_enabled(std::uint32_t id, bool enabled) {
  // Serialised with set_probe/clear_probe, so the flag change cannot undo a newer entry.
  std::lock_guard<std::mutex> lock(ids_mutex_);
  if (!stored_.contains(id)) return make_error(fmt::format("no probe with id {}", id));
  eacgm_probe p{};
  if (bpf_map__lookup_elem(skel_->maps.probes, &id, sizeof(id), &p, sizeof(p), 0)) {
    const int err = errno;
    return make_errno_error(err, fmt::format("cannot read probe {}: {}", id, errno_text(err)));
  }
  const std::uint32_t flags = enabled ? p.flags | EACGM_PROBE_ENABLED : p.flags & ~EACGM_PROBE_ENABLED;
  if (flags == p.flags) return {};
  // The programs read flags as one aligned 32-bit word: a single store of the new word
  // would do, but the map update copies the whole entry; the other fields are unchanged.
  p.flags = flags;
  if (bpf_map__update_elem(skel_->maps.probes, &id, sizeof(id), &p, sizeof(p), BPF_EXIST)) {
    const int err = errno;
    return make_errno_error(
        err, fmt::format("cannot {} probe {}: {}", enabled ? "unmute" : "mute", id, errno_text(err)));
  }
  return {};
}

Status BpfTracer::set_sample_shift(std::uint32_t id, std::uint8_t shift) {
  std::lock_guard<std::mutex> lock(ids_mutex_);
  if (!stored_.contains(id)) return make_error(fmt::format("no probe with id {}", id));
  eacgm_probe p{};
  if (bpf_map__lookup_elem(skel_->maps.probes, &id, sizeof(id), &p, sizeof(p), 0)) {
    const int err = errno;
    return make_errno_error(err, fmt::format("cannot read probe {}: {}", id, errno_text(err)));
  }
  if (p.count.sample_shift == shift) return {};
  p.count.sample_shift = shift;
  if (bpf_map__update_elem(skel_->maps.probes, &id, sizeof(id), &p, sizeof(p), BPF_EXIST)) {
    const int err = errno;
    return make_errno_error(err,
                            fmt::format("cannot set the sample rate of probe {}: {}", id, errno_text(err)));
  }
  return {};
}

std::int64_t BpfTracer::stream_captures_open() const {
  // The object's .bss, mapped into this process by libbpf: read in place.
  return skel_->bss == nullptr ? 0 : __atomic_load_n(&skel_->bss->captures_open, __ATOMIC_RELAXED);
}

Status BpfTracer::set_duty_window(DutyWindow state) {
  static_assert(static_cast<std::uint32_t>(DutyWindow::kOff) == EACGM_DUTY_OFF &&
                static_cast<std::uint32_t>(DutyWindow::kOpen) == EACGM_DUTY_OPEN &&
                static_cast<std::uint32_t>(DutyWindow::kSwitching) == EACGM_DUTY_SWITCHING);
  // The moves first: a call that sees the new state sees the new count too.
  const std::uint32_t one = 1, moves = ++duty_moves_;
  if (bpf_map__update_elem(skel_->maps.duty_window, &one, sizeof(one), &moves, sizeof(moves), BPF_ANY)) {
    const int err = errno;
    return make_errno_error(err, fmt::format("cannot count the duty window's moves: {}", errno_text(err)));
  }
  return write_duty_state(state);
}

Status BpfTracer::write_duty_state(DutyWindow state) {
  const std::uint32_t zero = 0, value = static_cast<std::uint32_t>(state);
  if (bpf_map__update_elem(skel_->maps.duty_window, &zero, sizeof(zero), &value, sizeof(value), BPF_ANY)) {
    const int err = errno;
    return make_errno_error(err, fmt::format("cannot set the duty window to {}: {}", value, errno_text(err)));
  }
  return {};
}

std::optional<std::uint64_t> BpfTracer::process_exit_ns(std::uint32_t pid) const {
  std::uint64_t ns = 0;
  if (bpf_map__lookup_elem(skel_->maps.process_exits, &pid, sizeof(pid), &ns, sizeof(ns), 0))
    return std::nullopt;
  return ns;
}

Status BpfTracer::clear_probe(std::uint32_t id) {
  std::lock_guard<std::mutex> lock(ids_mutex_);
  if (stored_.erase(id) == 0) return make_error(fmt::format("no probe with id {}", id));
  eacgm_probe none{};
  if (bpf_map__update_elem(skel_->maps.probes, &id, sizeof(id), &none, sizeof(none), BPF_EXIST)) {
    const int err = errno;
    return make_errno_error(err, fmt::format("cannot clear probe {}: {}", id, errno_text(err)));
  }
  return reset_hits(id);
}

Status BpfTracer::reset_hits(std::uint32_t id) {
  auto cpus = possible_cpus();
  if (!cpus) return std::move(cpus).take_error();
  std::vector<std::uint64_t> zeros(*cpus, 0);
  if (bpf_map__update_elem(skel_->maps.probe_hits, &id, sizeof(id), zeros.data(),
                           zeros.size() * sizeof(std::uint64_t), BPF_ANY)) {
    const int err = errno;
    return make_errno_error(err,
                            fmt::format("cannot reset the hit count of probe {}: {}", id, errno_text(err)));
  }
  return {};
}

std::map<std::uint32_t, std::uint64_t> BpfTracer::probe_hits() const {
  std::map<std::uint32_t, std::uint64_t> out;
  std::vector<std::uint32_t> ids;
  {
    std::lock_guard<std::mutex> lock(ids_mutex_);
    ids.assign(stored_.begin(), stored_.end());
  }
  auto possible = possible_cpus();
  if (ids.empty() || !possible) return out;
  const std::size_t cpus = *possible;
  // One batch over [0, highest id] (ids are dense); per-id lookups where the kernel
  // lacks batch operations on arrays.
  const std::uint32_t count = ids.back() + 1;
  std::vector<std::uint32_t> keys(count);
  std::vector<std::uint64_t> values(static_cast<std::size_t>(count) * cpus);
  std::uint32_t n = count;
  std::uint32_t out_batch = 0;
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  int fd = bpf_map__fd(skel_->maps.probe_hits);
  int err = bpf_map_lookup_batch(fd, nullptr, &out_batch, keys.data(), values.data(), &n, &opts);
  if ((err == 0 || errno == ENOENT) && n == count) {
    for (std::uint32_t id : ids) {
      const auto first = values.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(id) * cpus);
      out[id] = std::accumulate(first, first + static_cast<std::ptrdiff_t>(cpus), std::uint64_t{0});
    }
    return out;
  }
  for (std::uint32_t id : ids) {
    if (auto hits = sum_percpu(skel_->maps.probe_hits, id)) out[id] = *hits;
  }
  return out;
}

Status BpfTracer::add_target_pid(std::uint32_t pid, bool may_stop) {
  std::uint8_t flags = EACGM_TARGET_TRACED | (may_stop ? 0 : EACGM_TARGET_NO_STOP);
  if (bpf_map__update_elem(skel_->maps.target_pids, &pid, sizeof(pid), &flags, sizeof(flags), BPF_ANY)) {
    const int err = errno;
    return make_errno_error(err, fmt::format("cannot add pid {} to the filter: {}", pid, errno_text(err)));
  }
  return {};
}

Status BpfTracer::set_capture_pid(std::uint32_t pid, bool captured) {
  const std::uint8_t on = 1;
  const int rc =
      captured ? bpf_map__update_elem(skel_->maps.capture_pids, &pid, sizeof(pid), &on, sizeof(on), BPF_ANY)
               : bpf_map__delete_elem(skel_->maps.capture_pids, &pid, sizeof(pid), 0);
  if (rc != 0 && !(rc == -ENOENT && !captured)) {
    const int err = -rc;
    return make_errno_error(err, fmt::format("cannot {} the capture of pid {}: {}",
                                             captured ? "start" : "end", pid, errno_text(err)));
  }
  return {};
}

std::vector<std::uint32_t> BpfTracer::target_pids() const {
  std::vector<std::uint32_t> out;
  int fd = bpf_map__fd(skel_->maps.target_pids);
  std::uint32_t key = 0, next = 0;
  std::uint32_t* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    out.push_back(next);
    key = next;
    prev = &key;
  }
  return out;
}

Result<UprobeLink> BpfTracer::attach(const std::string& path, std::uint64_t file_offset,
                                     std::uint32_t probe_id, bool exit, std::uint64_t ref_ctr_offset) {
  LibbpfLogCapture log;
  LIBBPF_OPTS(bpf_uprobe_opts, opts);
  opts.bpf_cookie = probe_id;
  opts.retprobe = exit;
  opts.ref_ctr_offset = ref_ctr_offset;
  bpf_program* prog = exit ? skel_->progs.eacgm_exit : skel_->progs.eacgm_entry;
  BpfLink link(bpf_program__attach_uprobe_opts(prog, -1, path.c_str(), file_offset, &opts));
  if (!link) {
    const int err = errno;
    return make_errno_error(err, fmt::format("{} at offset {:#x} of {}: {}{}", exit ? "uretprobe" : "uprobe",
                                             file_offset, path, errno_text(err), log.last_lines(1)));
  }
  return UprobeLink(std::move(link));
}

namespace {
// One uprobe_multi link of prog at every point of path; the points' USDT semaphores are
// raised while it is attached, so the program's `if (probe enabled)` guard lets the
// probe site run.
Result<UprobeLink> link_points(bpf_program* prog, const std::string& path,
                               const std::vector<ProbePoint>& points, MultiLinkKind kind) {
  std::vector<std::uint64_t> offsets, cookies, ref_ctr_offsets;
  offsets.reserve(points.size());
  cookies.reserve(points.size());
  bool any_ref_ctr = false;
  for (const auto& p : points) {
    offsets.push_back(p.file_offset);
    cookies.push_back(p.probe_id);
    ref_ctr_offsets.push_back(p.ref_ctr_offset);
    any_ref_ctr = any_ref_ctr || p.ref_ctr_offset != 0;
  }
  auto fd = create_uprobe_multi_link(
      bpf_program__fd(prog), path, offsets, cookies,
      any_ref_ctr ? std::span<const std::uint64_t>(ref_ctr_offsets) : std::span<const std::uint64_t>(), kind);
  if (!fd) return std::move(fd).take_error();
  return UprobeLink(std::move(*fd));
}

constexpr const char* kNoSessions = "uprobe sessions are not supported by this kernel (Linux 6.13+ has them)";
}  // namespace

Result<UprobeLink> BpfTracer::attach_multi(const std::string& path, const std::vector<ProbePoint>& points,
                                           bool exit) {
  if (!multi_) return make_error("uprobe_multi links are not supported by this kernel");
  return link_points(exit ? skel_->progs.eacgm_exit_multi : skel_->progs.eacgm_entry_multi, path, points,
                     exit ? MultiLinkKind::kReturn : MultiLinkKind::kEntry);
}

Result<UprobeLink> BpfTracer::attach_session(const std::string& path, const std::vector<ProbePoint>& points) {
  if (!session_) return make_error(kNoSessions);
  return link_points(skel_->progs.eacgm_count_session, path, points, MultiLinkKind::kSession);
}

Result<UprobeLink> BpfTracer::attach_calls(const std::string& path, const std::vector<ProbePoint>& points) {
  if (!session_) return make_error(kNoSessions);
  return link_points(skel_->progs.eacgm_call_session, path, points, MultiLinkKind::kSession);
}

namespace {

void add_value(CountEntry& e, const eacgm_count_value& c) {
  e.calls += c.calls;
  e.bytes += c.bytes;
  e.windowed += c.windowed;
  e.switching += c.switching;
  e.gaps += PaceGaps{c.in_gap_ns, c.in_gaps, c.out_gap_ns, c.out_gaps};
}

auto key_tuple(const eacgm_count_key& k) { return std::tuple(k.pid, k.probe_id, k.handle, k.stream); }

}  // namespace

std::vector<CountEntry> BpfTracer::read_counts() const {
  std::vector<CountEntry> out;
  last_read_complete_ = read_percpu_hash<eacgm_count_key, eacgm_count_value>(
      bpf_map__fd(skel_->maps.call_counts),
      [&](const eacgm_count_key& k, std::span<const eacgm_count_value> v) {
        CountEntry e{};
        e.key = k;
        for (const auto& c : v) add_value(e, c);
        out.push_back(e);
      });
  // The spill is read after the per-CPU map: both only grow while a process lives, so
  // their sum read in this order never falls below an earlier one's.
  std::vector<std::pair<eacgm_count_key, eacgm_count_value>> spilled;
  last_read_complete_ &= read_hash<eacgm_count_key, eacgm_count_value>(
      bpf_map__fd(skel_->maps.call_counts_spill),
      [&](const eacgm_count_key& k, const eacgm_count_value& v) { spilled.emplace_back(k, v); });
  if (spilled.empty()) return out;
  std::map<decltype(key_tuple(eacgm_count_key{})), std::size_t> at;
  for (std::size_t i = 0; i < out.size(); ++i) at.emplace(key_tuple(out[i].key), i);
  for (const auto& [k, v] : spilled) {
    auto it = at.find(key_tuple(k));
    if (it == at.end()) {
      it = at.emplace(key_tuple(k), out.size()).first;
      out.push_back(CountEntry{k});
    }
    add_value(out[it->second], v);
  }
  return out;
}

std::vector<DurationEntry> BpfTracer::read_durations() const {
  std::vector<DurationEntry> out;
  last_read_complete_ &= read_percpu_hash<eacgm_duration_key, eacgm_duration_value>(
      bpf_map__fd(skel_->maps.call_durations),
      [&](const eacgm_duration_key& k, std::span<const eacgm_duration_value> v) {
        DurationEntry e{k};
        for (const auto& d : v) {
          e.count += d.count;
          e.sum_ns += d.sum_ns;
          e.errors += d.errors;
          e.held += d.held;
          e.held_sum_ns += d.held_sum_ns;
          e.held_delay_ns += d.held_delay_ns;
        }
        out.push_back(e);
      });
  return out;
}

std::vector<eacgm_call_in_flight> BpfTracer::read_calls_in_flight() const {
  std::vector<eacgm_call_in_flight> out;
  read_hash<std::uint32_t, eacgm_call_in_flight>(
      bpf_map__fd(skel_->maps.calls_in_flight),
      [&](std::uint32_t, const eacgm_call_in_flight& call) { out.push_back(call); });
  return out;
}

int BpfTracer::calls_in_flight_fd() const { return bpf_map__fd(skel_->maps.calls_in_flight); }

void BpfTracer::forget_counts(const std::vector<eacgm_count_key>& counts,
                              const std::vector<eacgm_duration_key>& durations) {
  delete_keys(bpf_map__fd(skel_->maps.call_counts), counts);
  delete_keys(bpf_map__fd(skel_->maps.call_durations), durations);
  // The spill holds few keys, or none: those of these it holds, found in one read (a
  // batch delete of keys it lacks would stop at each).
  std::vector<eacgm_count_key> spilled;
  read_hash<eacgm_count_key, eacgm_count_value>(
      bpf_map__fd(skel_->maps.call_counts_spill),
      [&](const eacgm_count_key& k, const eacgm_count_value&) { spilled.push_back(k); });
  if (spilled.empty()) return;
  std::set<decltype(key_tuple(eacgm_count_key{}))> doomed;
  for (const eacgm_count_key& k : counts) doomed.insert(key_tuple(k));
  std::erase_if(spilled, [&](const eacgm_count_key& k) { return !doomed.contains(key_tuple(k)); });
  delete_keys(bpf_map__fd(skel_->maps.call_counts_spill), spilled);
}

Result<UprobeLink> BpfTracer::attach_semaphore_hold(const std::string& path, std::uint64_t file_offset,
                                                    std::uint64_t ref_ctr_offset) {
  LibbpfLogCapture log;
  LIBBPF_OPTS(bpf_uprobe_opts, opts);
  opts.ref_ctr_offset = ref_ctr_offset;
  BpfLink link(bpf_program__attach_uprobe_opts(skel_->progs.eacgm_semaphore_hold, -1, path.c_str(),
                                               file_offset, &opts));
  if (!link) {
    const int err = errno;
    return make_errno_error(
        err, fmt::format("uprobe at offset {:#x} of {} (holding the USDT semaphore at {:#x}): {}{}",
                         file_offset, path, ref_ctr_offset, errno_text(err), log.last_lines(1)));
  }
  return UprobeLink(std::move(link));
}

Result<UprobeLink> BpfTracer::attach_loader_hint(const std::string& path, std::uint64_t file_offset) {
  LibbpfLogCapture log;
  LIBBPF_OPTS(bpf_uprobe_opts, opts);
  BpfLink link(
      bpf_program__attach_uprobe_opts(skel_->progs.eacgm_lib_loaded, -1, path.c_str(), file_offset, &opts));
  if (!link) {
    const int err = errno;
    return make_errno_error(
        err, fmt::format("uprobe on the dynamic loader {}: {}{}", path, errno_text(err), log.last_lines(1)));
  }
  return UprobeLink(std::move(link));
}

int BpfTracer::ringbuf_fd() const { return bpf_map__fd(skel_->maps.events); }

int BpfTracer::target_pids_fd() const { return bpf_map__fd(skel_->maps.target_pids); }

BpfCounters BpfTracer::counters() const {
  BpfCounters c;
  // A counter that cannot be read counts as 0.
  auto sum = [&](std::uint32_t key) {
    auto total = sum_percpu(skel_->maps.counters, key);
    return total ? *total : 0;
  };
  c.ringbuf_drops = sum(EACGM_CNT_RINGBUF_DROPS);
  c.lost_exits = sum(EACGM_CNT_LOST_EXITS);
  c.orphan_exits = sum(EACGM_CNT_ORPHAN_EXITS);
  c.read_faults = sum(EACGM_CNT_READ_FAULTS);
  c.no_probe = sum(EACGM_CNT_NO_PROBE);
  c.calls_opened = sum(EACGM_CNT_CALLS_OPENED);
  c.calls_closed = sum(EACGM_CNT_CALLS_CLOSED);
  c.too_deep = sum(EACGM_CNT_TOO_DEEP);
  c.exits_before_attach = sum(EACGM_CNT_EXITS_BEFORE_ATTACH);
  c.count_map_full = sum(EACGM_CNT_COUNT_MAP_FULL);
  c.count_spilled = sum(EACGM_CNT_COUNT_SPILLED);
  c.duration_map_full = sum(EACGM_CNT_DURATION_MAP_FULL);
  c.switch_traps = sum(EACGM_CNT_SWITCH_TRAPS);
  c.in_flight_full = sum(EACGM_CNT_IN_FLIGHT_FULL);
  return c;
}

std::uint64_t BpfTracer::pending_calls() const {
  BpfCounters c = counters();
  return c.calls_opened > c.calls_closed ? c.calls_opened - c.calls_closed : 0;
}

}  // namespace eacgm::probe
