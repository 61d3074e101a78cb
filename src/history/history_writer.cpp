// The history writer's thread: poll each second, flush each interval, maintain the store.
#include "history/history_writer.h"

#include <algorithm>

#include "analysis/analysis_snapshot.h"
#include "core/gpu_sample.h"

namespace eacgm::history {
namespace {

std::size_t rows_of(const IntervalBatch& b) {
  return b.processes.size() + b.functions.size() + b.kernels.size() + b.gpus.size() + b.gpu_processes.size() +
         b.anomalies.size() + b.leaks.size();
}

constexpr std::int64_t kMaxBackoffNs = 300'000'000'000;  // 5 minutes
constexpr std::int64_t kFirstBackoffNs = 1'000'000'000;

}  // namespace

HistoryWriter::HistoryWriter(std::unique_ptr<Store> store, Source source, IntervalBuilder builder,
                             HistoryOptions options, Log log)
    : store_(std::move(store)),
      source_(std::move(source)),
      builder_(std::move(builder)),
      options_(std::move(options)),
      log_(std::move(log)),
      description_(store_ ? store_->description() : std::string()) {
  interval_start_ns_ = options_.now_ns();
  last_maintain_ns_ = interval_start_ns_;
}

HistoryWriter::~HistoryWriter() {
  try {
    stop();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw; stop() logs its failures
  }
}

void HistoryWriter::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void HistoryWriter::flush_soon() {
  std::lock_guard<std::mutex> lock(mutex_);
  flush_requested_ = true;
  wake_.notify_all();
}

void HistoryWriter::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_) return;
    stop_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  // The last interval (the final snapshot, once the trace has ended) and the spool.
  retry_at_ns_ = 0;
  flush_once(false);
}

StoreStats HistoryWriter::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void HistoryWriter::run() {
  const auto interval_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.interval).count();
  const auto maintain_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(options_.maintain_every).count();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_ || flush_requested_; });
    if (stop_) break;
    const bool requested = std::exchange(flush_requested_, false);
    lock.unlock();
    poll_once();
    const std::int64_t now = options_.now_ns();
    if (requested || now - interval_start_ns_ >= interval_ns)
      flush_once(now - last_maintain_ns_ >= maintain_ns);
    lock.lock();
  }
}

void HistoryWriter::poll_once() {
  auto snap = source_();
  if (const GpuSnapshot* pass = snap ? snap->find<GpuSnapshot>() : nullptr) builder_.observe_gpu(*pass);
}

void HistoryWriter::flush_once(bool maintain) {
  const std::int64_t now = options_.now_ns();
  if (auto snap = source_()) {
    IntervalBatch batch = builder_.build(*snap, interval_start_ns_, now);
    batch.mode = mode_ ? mode_() : std::string();
    interval_start_ns_ = now;
    // An empty interval marks the agent alive in it; while the store is away it would
    // only push real rows out of the spool.
    if (!failing_ || !batch.empty()) spool_.push_back(std::move(batch));
    while (spool_.size() > options_.spool_batches) {
      const std::size_t rows = rows_of(spool_.front());
      spool_.pop_front();
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.batches_dropped;
      stats_.rows_dropped += rows;
    }
  }
  write_spool();
  if (!size_read_ && !failing_) {
    size_read_ = true;
    maintain = true;  // the first flush maintains: the size is known from the start
  }
  if (maintain && !failing_) {
    last_maintain_ns_ = now;
    if (auto st = store_->maintain(options_.node, now, options_.retention); !st) {
      if (log_) log_("store " + description_ + ": maintenance failed: " + st.error());
    } else if (after_maintain_) {
      after_maintain_();
    }
    if (auto size = store_->size_bytes()) {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.size_bytes = *size;
    }
  }
}

void HistoryWriter::write_spool() {
  const std::int64_t now = options_.now_ns();
  if (failing_ && now < retry_at_ns_) {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.spooled_batches = spool_.size();
    return;
  }
  while (!spool_.empty()) {
    const IntervalBatch& batch = spool_.front();
    auto st = store_->write(options_.node, batch);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!st) {
      ++stats_.write_failures;
      stats_.healthy = false;
      if (!failing_ && log_)
        log_("store " + description_ + ": write failed (kept for a retry): " + st.error());
      failing_ = true;
      backoff_ns_ = backoff_ns_ == 0 ? kFirstBackoffNs : std::min(backoff_ns_ * 2, kMaxBackoffNs);
      retry_at_ns_ = now + backoff_ns_;
      break;
    }
    if (failing_ && log_) log_("store " + description_ + ": writing again");
    failing_ = false;
    backoff_ns_ = 0;
    ++stats_.batches_written;
    stats_.rows_written += rows_of(batch);
    stats_.healthy = true;
    stats_.last_write_unix = static_cast<double>(now) / 1e9;
    if (auto clock = store_->clock()) {
      stats_.clock_offset_seconds = static_cast<double>(clock->offset_ns) / 1e9;
      stats_.clock_uncertainty_seconds = static_cast<double>(clock->uncertainty_ns) / 1e9;
    }
    spool_.pop_front();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.spooled_batches = spool_.size();
}

}  // namespace eacgm::history
