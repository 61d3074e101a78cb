// Ring-buffer consumption loop: decode, enrich, batch, hand on.
#include "ingest/ring_reader.h"

#include <bpf/libbpf.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "bpf/events.h"
#include "core/agent_counters.h"
#include "core/proc_stat.h"

namespace eacgm::ingest {

RingReader::RingReader(const probe::ProbeTable& table, EnricherChain chain,
                       std::shared_ptr<Consumer> consumer, ReaderHooks hooks, ReaderOptions options)
    : batcher_(table, std::move(chain), std::move(consumer)), hooks_(std::move(hooks)), options_(options) {}

Result<std::unique_ptr<RingReader>> RingReader::create(int ringbuf_fd, const probe::ProbeTable& table,
                                                       EnricherChain chain,
                                                       std::shared_ptr<Consumer> consumer, ReaderHooks hooks,
                                                       ReaderOptions options, CountSource* counts) {
  if (!consumer) consumer = std::make_shared<ConsumerList>();
  std::unique_ptr<RingReader> r(
      new RingReader(table, std::move(chain), std::move(consumer), std::move(hooks), options));
  if (counts) r->counts_ = std::make_unique<CountDrain>(*counts, table, r->batcher_.chain());
  r->rb_ = ring_buffer__new(ringbuf_fd, &RingReader::on_record, r.get(), nullptr);
  if (!r->rb_) {
    const int err = errno;
    return make_errno_error(err, fmt::format("cannot map the BPF ring buffer: {}", std::strerror(err)));
  }
  return r;
}

RingReader::~RingReader() {
  stop();
  if (rb_) ring_buffer__free(rb_);
}

void RingReader::register_counters(CounterRegistry& registry) {
  // Only the reader's own counts that the accounting line does not already show from
  // the session; the session declares `events` first to keep the line's order.
  registry_ = &registry;
  batcher_.chain().register_counters(registry);
  registry.add(agent_counter("malformed"), [this] { return malformed_.load(std::memory_order_relaxed); });
  registry.add(agent_counter("poll_errors"), [this] { return poll_errors_.load(std::memory_order_relaxed); });
  registry.add(agent_counter("hints"), [this] { return hints_.load(std::memory_order_relaxed); });
  if (counts_) {
    registry.add(agent_counter("counted_calls"),
                 [this] { return counted_calls_.load(std::memory_order_relaxed); });
    registry.add(agent_counter("sampled_calls"),
                 [this] { return sampled_calls_.load(std::memory_order_relaxed); });
    registry.add(agent_counter("sampled_held_calls"),
                 [this] { return sampled_held_calls_.load(std::memory_order_relaxed); });
    registry.add(agent_counter("count_keys"), [this] { return count_keys_.load(std::memory_order_relaxed); });
  }
  if (waits_) {
    registry.add(agent_counter("host_waits"), [this] { return host_waits_.load(std::memory_order_relaxed); });
    registry.add(agent_counter("wait_processes"),
                 [this] { return wait_processes_.load(std::memory_order_relaxed); });
  }
  if (inflight_) {
    registry.add(agent_counter("calls_in_flight"),
                 [this] { return in_flight_.load(std::memory_order_relaxed); });
  }
  if (python_) {
    registry.add(agent_counter("py_samples"),
                 [this] { return python_samples_.load(std::memory_order_relaxed); });
    registry.add(agent_counter("py_in_calls"),
                 [this] { return python_in_calls_.load(std::memory_order_relaxed); });
    registry.add(agent_counter("py_codes_unnamed"),
                 [this] { return python_unnamed_.load(std::memory_order_relaxed); });
    registry.add(agent_counter("py_codes_reread"),
                 [this] { return python_reread_.load(std::memory_order_relaxed); });
  }
  if (stuck_) {
    registry.add(agent_counter("py_stuck_stacks"),
                 [this] { return stuck_read_.load(std::memory_order_relaxed); });
    registry.add(agent_counter("py_stuck_unknown"),
                 [this] { return stuck_unknown_.load(std::memory_order_relaxed); });
    registry.add(agent_counter("py_stuck_unreadable"),
                 [this] { return stuck_unreadable_.load(std::memory_order_relaxed); });
  }
  registry.add(agent_counter("forgotten_pids"),
               [this] { return forgotten_pids_.load(std::memory_order_relaxed); });
}

void RingReader::add_inflight(InflightSource* source, const probe::ProbeTable& table) {
  inflight_ = std::make_unique<InflightDrain>(*source, table, batcher_.chain());
}

void RingReader::add_stuck_stacks(PythonProcessLookup processes, StuckStackOptions options) {
  if (python_) stuck_ = std::make_unique<StuckStacks>(*python_, std::move(processes), options);
}

Status RingReader::add_python_samples(int ringbuf_fd, std::unique_ptr<PythonStackDecoder> decoder) {
  if (ring_buffer__add(rb_, ringbuf_fd, &RingReader::on_python_sample, this) != 0) {
    const int err = errno;
    return make_errno_error(
        err, fmt::format("cannot map the Python sampler's ring buffer: {}", std::strerror(err)));
  }
  // Kept only when samples will come: the decoder may use the sampler, which the caller
  // drops on failure.
  python_ = std::move(decoder);
  return {};
}

int RingReader::on_python_sample(void* ctx, void* data, std::size_t size) {
  auto* self = static_cast<RingReader*>(ctx);
  if (self->python_count_ == self->python_batch_.size()) self->python_batch_.emplace_back();
  if (self->python_->decode(data, size, self->python_batch_[self->python_count_])) ++self->python_count_;
  return 0;
}

void RingReader::deliver_python_stacks() {
  if (!python_) return;
  if (python_count_ > 0) {
    batcher_.consumer().on_python_stacks(std::span<const PythonStack>(python_batch_.data(), python_count_));
  }
  python_count_ = 0;
  const auto& c = python_->counters();
  python_samples_.store(c.samples, std::memory_order_relaxed);
  python_unnamed_.store(c.unnamed, std::memory_order_relaxed);
  python_reread_.store(c.reread, std::memory_order_relaxed);
  python_in_calls_.store(c.in_calls, std::memory_order_relaxed);
}

int RingReader::on_record(void* ctx, void* data, std::size_t size) {
  auto* self = static_cast<RingReader*>(ctx);
  switch (self->batcher_.add(data, size)) {
    case RecordKind::kCall:
      break;
    case RecordKind::kExecHint: {
      const auto pid = self->batcher_.last().pid;
      self->batcher_.chain().forget(pid);  // a new image: old handles mean nothing
      if (self->python_) {
        self->deliver_python_stacks();  // samples of the old image are named by it
        self->python_->forget(pid);
      }
      if (self->hooks_.on_hint) self->hooks_.on_hint(pid, true, false);
      break;
    }
    case RecordKind::kLibraryHint: {
      // decode() checked the size, so the flags can be read from the record itself.
      bool stopped = (static_cast<const eacgm_record*>(data)->flags & EACGM_REC_STOPPED) != 0;
      if (self->hooks_.on_hint) self->hooks_.on_hint(self->batcher_.last().pid, false, stopped);
      break;
    }
    default:
      break;
  }
  return 0;
}

void RingReader::start() {
  auto now = std::chrono::steady_clock::now();
  next_tick_ = now + options_.tick;
  next_sweep_ = now + options_.sweep;
  thread_ = std::thread([this] { loop(); });
}

void RingReader::loop() {
  while (!stop_.load(std::memory_order_relaxed)) {
    // The kernel wakes us only past a fill threshold; after a timeout, take what
    // is there so no record waits longer than the poll timeout.
    int n = ring_buffer__poll(rb_, options_.poll_timeout_ms);
    if (n == 0) {
      ring_buffer__consume(rb_);
    } else if (n < 0 && n != -EINTR) {
      poll_errors_.fetch_add(1, std::memory_order_relaxed);
      if (!poll_error_noticed_ && hooks_.notice) {
        hooks_.notice(fmt::format("reading the BPF ring buffer failed: {} (counted as poll_errors)",
                                  std::strerror(-n)));
      }
      poll_error_noticed_ = true;
    }
    end_round();
  }
  ring_buffer__consume(rb_);
  end_round();
  drain_counts();  // the last counts, after the probes were detached
  drain_waits();
  drain_inflight();  // the calls still in flight when tracing ended
  drain_gpu_time();
  batcher_.consumer().flush();
}

void RingReader::drain_counts(bool forget_gone) {
  if (!counts_) return;
  count_batch_.clear();
  timing_batch_.clear();
  // A launch's handle is named by a call made before it (cuLibraryGetKernel,
  // cuModuleGetFunction) whose record may still wait in the ring while the launch is
  // already counted in the maps: the records written before the maps were read go
  // through the chain (and on to the consumers) before the counts are named.
  // Keys of exited processes go at every drain, not at the sweep: under churn hundreds
  // of processes end a second, and the kernel's map must keep room for the new ones.
  std::function<bool(std::uint32_t)> alive;
  if (forget_gone) alive = [](std::uint32_t pid) { return process_exists(pid); };
  counts_->drain(
      count_batch_, timing_batch_,
      [this] {
        ring_buffer__consume(rb_);
        batcher_.flush();
      },
      alive);
  if (!count_batch_.empty() || !timing_batch_.empty())
    batcher_.consumer().on_counts(count_batch_, timing_batch_);
  const auto& c = counts_->counters();
  counted_calls_.store(c.counted_calls, std::memory_order_relaxed);
  sampled_calls_.store(c.sampled_calls, std::memory_order_relaxed);
  sampled_held_calls_.store(c.sampled_held_calls, std::memory_order_relaxed);
  count_keys_.store(c.keys, std::memory_order_relaxed);
}

void RingReader::drain_waits() {
  if (!waits_) return;
  wait_process_batch_.clear();
  wait_batch_.clear();
  waits_->drain(wait_process_batch_, wait_batch_);
  if (!wait_process_batch_.empty() || !wait_batch_.empty()) {
    batcher_.consumer().on_host_waits(wait_process_batch_, wait_batch_);
  }
  const auto& c = waits_->counters();
  host_waits_.store(c.waits, std::memory_order_relaxed);
  wait_processes_.store(c.processes, std::memory_order_relaxed);
}

void RingReader::drain_inflight() {
  if (!inflight_) return;
  inflight_batch_.clear();
  const std::uint64_t scanned = inflight_->drain(inflight_batch_);
  if (stuck_) {
    stuck_->attach(inflight_batch_, scanned);
    const auto& c = stuck_->counters();
    stuck_read_.store(c.read, std::memory_order_relaxed);
    stuck_unknown_.store(c.unknown, std::memory_order_relaxed);
    stuck_unreadable_.store(c.unreadable, std::memory_order_relaxed);
  }
  batcher_.consumer().on_inflight(inflight_batch_, scanned);
  in_flight_.store(inflight_->counters().in_flight, std::memory_order_relaxed);
}

void RingReader::drain_gpu_time() {
  if (!gpu_rings_) return;
  gpu_batch_.clear();
  gpu_rings_->drain(gpu_batch_);
  if (gpu_batch_.empty()) return;
  batcher_.consumer().on_gpu_time(gpu_batch_);
  // A private-driver process's calls and host waits, which only its hook counted and
  // timed: as the probes' counts and sampled durations; its allocations and frees, one by
  // one: as the probes' calls.
  hook_counts_.clear();
  hook_timings_.clear();
  hook_calls_.deltas(gpu_batch_, hook_counts_, hook_timings_);
  if (!hook_counts_.empty() || !hook_timings_.empty())
    batcher_.consumer().on_counts(hook_counts_, hook_timings_);
  hook_events_.clear();
  hook_calls_.events(gpu_batch_, hook_events_);
  if (!hook_events_.empty()) batcher_.consumer().on_calls(hook_events_);
}

void RingReader::end_round() {
  batcher_.flush();
  deliver_python_stacks();
  publish_counters();
  if (hooks_.on_round) hooks_.on_round();
  auto now = std::chrono::steady_clock::now();
  if (gpu_rings_ && now >= next_gpu_scan_) {
    gpu_rings_->scan();  // at most every 100 ms: a process found lives on until drained
    next_gpu_scan_ = now + std::chrono::milliseconds(100);
  }
  drain_gpu_time();
  const bool tick = now >= next_tick_;
  const bool sweep = now >= next_sweep_;
  // Counts and waits before the tick (so its snapshot has them) and before a sweep
  // deletes an exited process's keys (so its last counts are read first).
  if (tick || sweep) {
    drain_counts(true);
    drain_waits();
  }
  if (tick) {
    drain_inflight();
    batcher_.consumer().on_tick(now, registry_ ? registry_->read() : CounterValues{});
    next_tick_ = now + options_.tick;
  }
  if (sweep) {
    // Exit is not announced for every process, so per-process state of the enrichers
    // is checked against the living ones (until it is reaped).
    auto alive = [](std::uint32_t pid) { return process_exists(pid); };
    auto gone = batcher_.chain().forget_unless(alive);
    if (waits_) waits_->forget_unless(alive);
    if (python_) python_->forget_unless(alive);
    forgotten_pids_.fetch_add(gone, std::memory_order_relaxed);
    next_sweep_ = now + options_.sweep;
  }
  batcher_.consumer().flush();
}

// Relaxed: readers want a recent value, and stop()'s join orders the final one.
void RingReader::publish_counters() {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const auto& c = batcher_.counters();
  calls_.store(c.calls, kRelaxed);
  hints_.store(c.hints, kRelaxed);
  malformed_.store(c.malformed, kRelaxed);
  unknown_.store(c.unknown_probe, kRelaxed);
}

void RingReader::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  thread_.join();
}

DecodeCounters RingReader::counters() const {
  DecodeCounters c;
  c.calls = calls_.load();
  c.hints = hints_.load();
  c.malformed = malformed_.load();
  c.unknown_probe = unknown_.load();
  return c;
}

}  // namespace eacgm::ingest
