// Trace lifecycle and discovery scheduling.
#include "ingest/trace_session.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <set>
#include <string>
#include <vector>

#include "core/agent_counters.h"
#include "core/proc_stat.h"
#include "ingest/enricher_stages.h"
#include "probe/always_on.h"
#include "probe/catalog.h"

namespace eacgm::ingest {
namespace {

// One line per state when runtime specs stand in for the driver's probes of their
// operations (one layer per operation): those already left to the driver (its probes are
// attached), and those counted at the runtime until the driver's probes attach; none when
// none stand in.
std::vector<std::string> left_to_driver_notices(const std::vector<ProbeSpec>& specs,
                                                const std::set<probe::DriverOperation>& at_driver,
                                                TraceMode mode) {
  std::vector<std::string> left, waiting;
  for (const auto& s : specs) {
    if (!s.until_driver) continue;
    const auto op = probe::driver_operation(s);
    (op && at_driver.contains(*op) ? left : waiting).push_back(s.name);
  }
  const auto names = [](const std::vector<std::string>& v) {
    const std::size_t shown = std::min<std::size_t>(v.size(), 4);
    return fmt::format("{} runtime function(s) ({}{})", v.size(),
                       fmt::join(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
                       v.size() > shown ? ", ..." : "");
  };
  const char* both = mode == TraceMode::kPerCall ? "[trace] one_layer = false traces both layers"
                                                 : "--mode per-call counts both layers";
  std::vector<std::string> out;
  if (!left.empty()) {
    out.push_back(fmt::format(
        "notice: {} are counted at the driver's probes of the same operations (one layer per operation): "
        "a runtime call that fails before reaching libcuda is not counted; {}",
        names(left), both));
  }
  if (!waiting.empty()) {
    out.push_back(fmt::format(
        "notice: {} are counted at the runtime until the driver's probes of the same operations attach (no "
        "libcuda is attached yet), then at the driver's only (one layer per operation; a call under way at "
        "the "
        "switch can be counted at both); {}",
        names(waiting), both));
  }
  return out;
}
constexpr std::size_t kMaxQueuedHints = 4096;
}  // namespace

TraceSession::TraceSession(const TraceOptions& options, Notice notice)
    : options_(options), notice_(std::move(notice)) {}

Result<std::unique_ptr<TraceSession>> TraceSession::start(const TraceOptions& options,
                                                          std::shared_ptr<Consumer> consumer,
                                                          std::function<void()> on_round, Notice notice,
                                                          CounterRegistry& registry) {
  std::unique_ptr<TraceSession> s(new TraceSession(options, std::move(notice)));
  probe::BpfOptions bo;
  bo.ringbuf_bytes = options.config.ringbuf_mib << 20;
  bo.count_keys = options.config.count_keys;
  // An eighth of the count map (4,096 at its default), at least 1,024: the keys that
  // find no room there while the reader catches up with exited processes.
  bo.count_spill_keys = std::clamp<std::uint32_t>(options.config.count_keys / 8, 1024, 65536);
  bo.wakeup_bytes = options.config.wakeup_kib << 10;
  bo.filter_pids = options.filter_pids;
  bo.scope_cgroup_fd = options.scope_cgroup_fd;
  bo.stop_on_load = options.stop_on_load;
  bo.track_in_flight = options.track_in_flight;
  bo.btf_path = options.btf_path;
  auto bpf = probe::BpfTracer::open(bo);
  if (!bpf) return std::move(bpf).take_error();
  s->bpf_ = std::move(*bpf);
  for (int pid : options.pids) {
    const bool may_stop = !options.never_stop.count(pid);
    if (auto st = s->bpf_->add_target_pid(static_cast<std::uint32_t>(pid), may_stop); !st) {
      return std::move(st).take_error();
    }
  }

  // Before consumers see a call: NCCL communicators, kernel names, and the pairing of
  // Python's records (halves of calls) into calls.
  EnricherChain chain;
  chain.add(make_nccl_comm_stage());
  chain.add(make_kernel_name_stage(s->remembered_maps_));
  chain.add(make_graph_capture_stage());
  bool python = false;
  for (const auto& spec : options.specs) {
    python = python || spec.name == probe::kPythonEntrySpec || spec.name == probe::kPythonFrameSpec;
  }
  if (python) chain.add(make_python_pairing_stage(options.python_file_filter));

  // Whole-machine traces watch the waits of the processes whose calls they see; chosen
  // processes are watched from the start, through the tracer's own pid filter.
  if (options.host_waits) s->start_host_waits();
  if (s->wait_drain_ && !s->wait_tracer_->shares_pids()) {
    auto list = std::make_shared<ConsumerList>();
    list->add(std::make_shared<HostWaitWatch>(*s->wait_drain_));
    list->add(std::move(consumer));
    consumer = std::move(list);
  }

  TraceSession* self = s.get();
  ReaderHooks hooks;
  hooks.on_hint = [self](std::uint32_t pid, bool exec, bool stopped) { self->on_hint(pid, stopped, exec); };
  hooks.on_round = std::move(on_round);
  hooks.notice = s->notice_;
  ReaderOptions ro;
  ro.poll_timeout_ms = static_cast<int>(options.config.poll_timeout_ms);
  // Always-on: counted probes where the kernel has uprobe sessions (per call elsewhere).
  const TraceMode mode = options.config.mode.value_or(TraceMode::kPerCall);
  if (mode == TraceMode::kAlwaysOn && s->bpf_->has_session()) {
    s->count_source_ = std::make_unique<BpfCountSource>(*s->bpf_);
  } else if (mode == TraceMode::kAlwaysOn) {
    s->notice_(
        "notice: this kernel has no uprobe sessions (Linux 6.13+), so always-on probes are traced per call, "
        "at about twice the cost per call");
  }
  auto reader = RingReader::create(s->bpf_->ringbuf_fd(), s->table_, std::move(chain), std::move(consumer),
                                   std::move(hooks), ro, s->count_source_.get());
  if (!reader) return std::move(reader).take_error();
  s->reader_ = std::move(*reader);
  if (options.python_hz > 0) s->start_python_sampling(*s->reader_);
  if (s->wait_drain_) s->reader_->add_host_waits(s->wait_drain_.get());
  s->inflight_source_ = std::make_unique<BpfInflightSource>(*s->bpf_);
  s->reader_->add_inflight(s->inflight_source_.get(), s->table_);
  std::function<bool(std::uint32_t)> wanted;
  if (options.filter_pids) {
    wanted = [fd = s->bpf_->target_pids_fd()](std::uint32_t pid) {
      std::uint8_t flags = 0;
      return bpf_map_lookup_elem(fd, &pid, &flags) == 0;
    };
  }
  s->gpu_rings_ = std::make_unique<GpuTimeRings>("/dev/shm", std::move(wanted));
  s->reader_->add_gpu_time(s->gpu_rings_.get());
  s->register_counters(registry);
  s->reader_->start();

  auto specs = probe::specs_for_mode(options.specs, mode, options.config.one_layer);
  s->attacher_ = std::make_unique<probe::Attacher>(*s->bpf_, s->table_, std::move(specs), s->notice_);
  s->attacher_->set_sample_shift(
      static_cast<std::uint8_t>(std::min<std::uint32_t>(options.config.sample_shift, 31)));
  s->attacher_->set_pinned({options.config.pinned.begin(), options.config.pinned.end()});
  s->attacher_->set_tally(s->count_source_ != nullptr);
  s->attacher_->scan_ld_cache();
  s->attacher_->scan_processes(options.filter_pids ? options.pids : std::vector<int>{});
  s->rescan_python(options.filter_pids ? options.pids : std::vector<int>{});
  for (const auto& line :
       left_to_driver_notices(s->attacher_->specs(), s->attacher_->driver_operations(), mode)) {
    s->notice_(line);
  }
  s->publish_attach_counts();
  s->next_rescan_ = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(static_cast<int>(options.config.rescan_interval_s * 1000));
  return s;
}

// Sampling is an addition to the trace: when the kernel refuses it, tracing goes on
// without it and says why.
void TraceSession::start_python_sampling(RingReader& reader) {
  probe::PySamplerOptions po;
  po.hz = options_.python_hz;
  po.btf_path = options_.btf_path;
  po.calls_in_flight_fd = bpf_->calls_in_flight_fd();
  auto sampler = probe::PySampler::open(po);
  if (sampler) {
    // The decoder runs on the reader thread: a lock-free view of the probe table there, and
    // the sampler's own process map for what a code object's type must be (it is the truth
    // the samples were taken by, and the attaching thread updates it at each exec).
    auto probes = [cache = probe::ProbeCache(table_)](std::uint32_t id) mutable { return cache.get(id); };
    auto code_types = [s = sampler->get()](std::uint32_t pid) { return s->code_type(pid); };
    auto st = reader.add_python_samples(
        (*sampler)->ringbuf_fd(), std::make_unique<PythonStackDecoder>(read_python_code, probes, code_types));
    if (st) {
      StuckStackOptions so;
      so.min_age_ns = static_cast<std::uint64_t>(std::max(options_.stuck_stack_min_age_s, 0.0) * 1e9);
      reader.add_stuck_stacks([s = sampler->get()](std::uint32_t pid) { return s->process(pid); }, so);
      py_sampler_ = std::move(*sampler);
      return;
    }
    notice_(
        fmt::format("no Python hot spots: {}; tracing goes on (--python-hz 0 silences this)", st.error()));
    return;
  }
  notice_(
      fmt::format("no Python hot spots: {}; tracing goes on (--python-hz 0 silences this)", sampler.error()));
}

void TraceSession::start_host_waits() {
  probe::HostWaitOptions wo;
  wo.btf_path = options_.btf_path;
  if (options_.filter_pids) wo.shared_pids_fd = bpf_->target_pids_fd();
  auto tracer = probe::HostWaitTracer::open(wo);
  if (!tracer) {
    notice_(
        fmt::format("no host waits (futex, poll): {}; tracing goes on ([trace] host_waits = false "
                    "silences this)",
                    tracer.error()));
    return;
  }
  wait_tracer_ = std::move(*tracer);
  wait_source_ = std::make_unique<BpfHostWaitSource>(*wait_tracer_);
  wait_drain_ = std::make_unique<HostWaitDrain>(*wait_source_);
}

void TraceSession::check_python(std::uint32_t pid, bool exec) {
  if (!py_sampler_) return;
  auto known = py_processes_.find(pid);
  if (exec && known != py_processes_.end()) {
    // A new image: whatever it runs now, the old interpreter's addresses are gone.
    if (known->second == PyState::kSampled) py_sampler_->remove_process(pid);
    py_processes_.erase(known);
    known = py_processes_.end();
  }
  if (known != py_processes_.end() && known->second != PyState::kNotYet) return;
  auto found = py_finder_.find(pid);
  if (!found) {
    py_processes_[pid] = PyState::kUnsupported;
    if (py_said_.insert(found.error()).second) notice_("Python stacks not sampled: " + found.error());
    return;
  }
  if (!found->has_value()) {
    py_processes_[pid] = PyState::kNotYet;  // libpython may load later: checked again at hints
    return;
  }
  if (auto st = py_sampler_->add_process(pid, (*found)->proc); !st) {
    py_processes_[pid] = PyState::kUnsupported;
    if (py_said_.insert(st.error()).second) notice_(st.error());
    return;
  }
  py_processes_[pid] = PyState::kSampled;
  py_sampled_.fetch_add(1, std::memory_order_relaxed);
}

// Candidates: the traced processes, or on the whole machine the processes whose
// executable is named python* (an interpreter embedded in another program is sampled
// when the trace follows that program).
void TraceSession::rescan_python(const std::vector<int>& targets) {
  if (!py_sampler_) return;
  std::vector<std::uint32_t> pids;
  if (options_.filter_pids) {
    for (int p : targets) pids.push_back(static_cast<std::uint32_t>(p));
  } else if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      char* end = nullptr;
      const unsigned long pid = std::strtoul(e->d_name, &end, 10);
      if (end == e->d_name || *end != '\0' || pid == static_cast<unsigned long>(getpid())) continue;
      char exe[PATH_MAX];
      const std::string link = fmt::format("/proc/{}/exe", pid);
      const ssize_t n = readlink(link.c_str(), exe, sizeof(exe) - 1);
      if (n <= 0) continue;
      exe[n] = '\0';
      if (!maybe_python_file(exe)) continue;
      if (options_.in_scope && !options_.in_scope(static_cast<std::uint32_t>(pid))) continue;
      pids.push_back(static_cast<std::uint32_t>(pid));
    }
    closedir(d);
  }
  std::set<std::uint32_t> live(pids.begin(), pids.end());
  for (auto it = py_processes_.begin(); it != py_processes_.end();) {
    const bool gone = !live.count(it->first) && !process_exists(it->first);
    if (gone) {
      if (it->second == PyState::kSampled) py_sampler_->remove_process(it->first);
      it = py_processes_.erase(it);
    } else {
      ++it;
    }
  }
  for (std::uint32_t pid : pids) check_python(pid, false);
  std::uint64_t sampled = 0;
  for (const auto& [pid, state] : py_processes_) sampled += state == PyState::kSampled;
  py_sampled_.store(sampled, std::memory_order_relaxed);  // the processes sampled now
}

void TraceSession::register_counters(CounterRegistry& registry) {
  auto bpf = [this](std::uint64_t probe::BpfCounters::*field) {
    return [this, field] { return bpf_->counters().*field; };
  };
  auto atomic = [](const std::atomic<std::uint64_t>& a) {
    return [&a] { return a.load(std::memory_order_relaxed); };
  };
  registry.add(agent_counter("events"), [this] { return reader_->counters().calls; });
  registry.add(agent_counter("drops"), bpf(&probe::BpfCounters::ringbuf_drops));
  registry.add(agent_counter("lost_exits"), [this] {
    return bpf_->counters().lost_exits +
           (stopped_.load() ? final_pending_.load(std::memory_order_relaxed) : 0);
  });
  registry.add(agent_counter("orphan_exits"), bpf(&probe::BpfCounters::orphan_exits));
  registry.add(agent_counter("exits_before_attach"), bpf(&probe::BpfCounters::exits_before_attach));
  registry.add(agent_counter("read_faults"), bpf(&probe::BpfCounters::read_faults));
  registry.add(agent_counter("probes"), atomic(probes_));
  registry.add(agent_counter("libraries"), atomic(libraries_));
  registry.add(agent_counter("attach_failures"), atomic(attach_failures_));
  registry.add(agent_counter("unresolved"), atomic(unresolved_));
  registry.add(agent_counter("files_forgotten"), atomic(files_forgotten_));
  registry.add(agent_counter("too_deep"), bpf(&probe::BpfCounters::too_deep));
  registry.add(agent_counter("count_map_full"), bpf(&probe::BpfCounters::count_map_full));
  registry.add(agent_counter("count_spilled"), bpf(&probe::BpfCounters::count_spilled));
  registry.add(agent_counter("duration_map_full"), bpf(&probe::BpfCounters::duration_map_full));
  registry.add(agent_counter("duty_switch_traps"), bpf(&probe::BpfCounters::switch_traps));
  registry.add(agent_counter("in_flight_full"), bpf(&probe::BpfCounters::in_flight_full));
  if (wait_tracer_) {
    registry.add(agent_counter("wait_map_full"), [this] { return wait_tracer_->counters().map_full; });
    registry.add(agent_counter("wait_open_full"), [this] { return wait_tracer_->counters().open_full; });
  }
  if (py_sampler_) {
    registry.add(agent_counter("py_processes"), atomic(py_sampled_));
    registry.add(agent_counter("py_sample_drops"), [this] { return py_sampler_->counters().drops; });
  }
  reader_->register_counters(registry);
  registry.add(agent_counter("unknown_probe"),
               [this] { return reader_->counters().unknown_probe + bpf_->counters().no_probe; });
}

void TraceSession::publish_attach_counts() {
  if (!attacher_) return;
  const auto& a = attacher_->stats();
  constexpr auto kRelaxed = std::memory_order_relaxed;
  probes_.store(a.probes, kRelaxed);
  libraries_.store(a.libraries, kRelaxed);
  attach_failures_.store(a.attach_failures, kRelaxed);
  unresolved_.store(a.unresolved, kRelaxed);
  files_forgotten_.store(a.files_forgotten, kRelaxed);
}

TraceSession::~TraceSession() { stop(); }

Status TraceSession::set_capture(std::uint32_t pid, bool captured) {
  return bpf_->set_capture_pid(pid, captured);
}

void TraceSession::scan_executable(const std::string& path) { attacher_->scan_file(path); }

void TraceSession::on_hint(std::uint32_t pid, bool stopped, bool exec) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // A stopped process is never dropped: it would stay stopped.
    if (hints_.size() < kMaxQueuedHints || stopped) hints_.push_back({pid, stopped, exec});
  }
  cv_.notify_one();
}

void TraceSession::resume(const std::deque<Hint>& hints) {
  for (const auto& h : hints) {
    if (h.stopped) kill(static_cast<pid_t>(h.pid), SIGCONT);
  }
}

void TraceSession::wake() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    woken_ = true;
  }
  cv_.notify_one();
}

void TraceSession::rescan() {
  if (options_.filter_pids) {
    std::vector<int> pids;
    for (auto p : bpf_->target_pids()) pids.push_back(static_cast<int>(p));
    rescan_python(pids);
    if (!pids.empty()) {
      attacher_->scan_processes(pids);
    } else {
      attacher_->scan_no_processes();  // forgets files deleted since the last process exited
    }
  } else {
    attacher_->scan_processes({});
    rescan_python({});
  }
}

void TraceSession::service(std::chrono::milliseconds budget) {
  auto deadline = std::chrono::steady_clock::now() + budget;
  while (true) {
    std::deque<Hint> hints;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      auto until = std::min(deadline, next_rescan_);
      cv_.wait_until(lock, until, [&] { return !hints_.empty() || woken_; });
      hints.swap(hints_);
      if (woken_) {
        woken_ = false;
        deadline = std::chrono::steady_clock::now();
      }
    }
    std::set<std::uint32_t> unique, execs;
    for (const auto& h : hints) {
      unique.insert(h.pid);
      if (h.exec) execs.insert(h.pid);
    }
    for (auto pid : unique) {
      check_python(pid, execs.count(pid) > 0);
      attacher_->scan_process(static_cast<int>(pid));
      // While it is surely alive (stopped, for a launched or --pid process): what naming
      // its kernels needs if it exits before its records are read.
      remembered_maps_->remember(pid);
    }
    resume(hints);
    auto now = std::chrono::steady_clock::now();
    if (now >= next_rescan_) {
      rescan();
      next_rescan_ =
          now + std::chrono::milliseconds(static_cast<int>(options_.config.rescan_interval_s * 1000));
    }
    publish_attach_counts();
    if (now >= deadline) return;
  }
}

void TraceSession::stop() {
  if (stopped_ || !reader_) return;
  stopped_ = true;
  // Detach first so nothing new arrives (no new loader stops either), then drain
  // what the kernel queued.
  publish_attach_counts();
  final_attach_ = attacher_->stats();
  attacher_.reset();
  final_pending_ = bpf_->pending_calls();
  reader_->stop();
  // No process may stay stopped at a loader hint once tracing ends.
  std::lock_guard<std::mutex> lock(mutex_);
  resume(hints_);
  hints_.clear();
}

TraceReport TraceSession::report() const {
  TraceReport r;
  auto c = bpf_->counters();
  auto d = reader_ ? reader_->counters() : DecodeCounters{};
  r.events = d.calls;
  r.ringbuf_drops = c.ringbuf_drops;
  r.lost_exits = c.lost_exits + (stopped_ ? final_pending_.load() : 0);
  r.orphan_exits = c.orphan_exits;
  r.exits_before_attach = c.exits_before_attach;
  r.too_deep = c.too_deep;
  r.read_faults = c.read_faults;
  r.malformed = d.malformed;
  r.unknown_probe = d.unknown_probe + c.no_probe;
  r.attach = attacher_ ? attacher_->stats() : final_attach_;
  return r;
}

std::map<std::uint32_t, std::uint64_t> TraceSession::probe_hits() const {
  auto hits = bpf_->probe_hits();
  // Stored entries of probes that failed to attach are cleared at once; keep only
  // probes whose ids are live (attached, or attached when the session stopped).
  std::erase_if(hits, [&](const auto& kv) { return !table_.is_live(kv.first); });
  return hits;
}

Status TraceSession::set_probe_muted(std::uint32_t probe_id, bool muted) {
  if (!attacher_) return make_error("the trace has stopped");
  return attacher_->set_muted(probe_id, muted);
}

Status TraceSession::set_probe_muted(const std::string& function, bool muted) {
  if (!attacher_) return make_error("the trace has stopped");
  return attacher_->set_muted(function, muted);
}

Status TraceSession::set_probe_sample_shift(std::uint32_t probe_id, std::uint8_t shift) {
  return bpf_->set_sample_shift(probe_id, shift);
}

std::optional<std::chrono::steady_clock::time_point> TraceSession::process_exit(std::uint32_t pid) const {
  // bpf_ktime_get_ns and steady_clock both read CLOCK_MONOTONIC.
  auto ns = bpf_->process_exit_ns(pid);
  if (!ns) return std::nullopt;
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(*ns));
}

Result<std::chrono::steady_clock::time_point> TraceSession::move_duty_window(DutyWindow state) {
  const auto at = std::chrono::steady_clock::now();
  if (auto st = bpf_->set_duty_window(state); !st) return std::move(st).take_error();
  return at;
}

Status TraceSession::set_cycled_attached(bool attached, const WindowMoved& moved) {
  if (!attacher_) return make_error("the trace has stopped");
  const auto move_to = [&](DutyWindow state) -> Status {
    auto at = move_duty_window(state);
    if (!at) return std::move(at).take_error();
    moved(*at, state);
    return {};
  };
  // Counting stops before the detach and starts after the attach, once every cycled
  // probe is in place; in between the window is "switching", so that the other probes'
  // calls of that time are told apart from those made with the probes gone. If the
  // kernel refused some, none count this period (the window stays closed and the others
  // are detached again), so that the counts and the logged time agree.
  // Work recorded into a CUDA graph is seen only through the cycled probes (the graph's
  // replays count it): while a capture is open they stay attached and counting, and the
  // detach is tried again at the window's next end.
  if (!attached && bpf_->stream_captures_open() > 0) {
    return make_error("a CUDA stream capture is open: the cycled probes stay attached");
  }
  if (auto st = move_to(DutyWindow::kSwitching); !st) return st;
  if (!attached) {
    if (auto st = attacher_->set_cycled_attached(false); !st) return st;
    return move_to(DutyWindow::kOff);
  }
  if (auto st = attacher_->set_cycled_attached(true); !st) {
    (void)attacher_->set_cycled_attached(false);
    (void)move_to(DutyWindow::kOff);
    return st;
  }
  return move_to(DutyWindow::kOpen);
}

Result<std::chrono::steady_clock::time_point> TraceSession::close_duty_window() {
  return move_duty_window(DutyWindow::kSwitching);
}

Status TraceSession::detach_library(const std::string& path) {
  if (!attacher_) return make_error("the trace has stopped");
  return attacher_->detach_file(path);
}

std::vector<probe::AttachedFileInfo> TraceSession::libraries() const {
  return attacher_ ? attacher_->files() : std::vector<probe::AttachedFileInfo>{};
}

}  // namespace eacgm::ingest
