// Deadlines are computed from the start time and the pass number, never from "now +
// interval", so the schedule does not drift by the pass's own duration.
#include "sample/sampling_loop.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>

namespace eacgm::sample {

Result<std::unique_ptr<SamplingLoop>> SamplingLoop::start(const Options& options, Pass pass, Sink sink) {
  if (options.interval <= std::chrono::nanoseconds::zero()) {
    return make_error(fmt::format("sampling interval must be positive (got {} ns): set gpu.interval_s > 0",
                                  options.interval.count()));
  }
  if (!pass || !sink) return make_error("sampling loop needs both a pass and a sink");
  std::unique_ptr<SamplingLoop> loop(new SamplingLoop(options, std::move(pass), std::move(sink)));
  loop->thread_ = std::thread([l = loop.get()] { l->run(); });
  return loop;
}

SamplingLoop::SamplingLoop(const Options& options, Pass pass, Sink sink)
    : options_(options), pass_(std::move(pass)), sink_(std::move(sink)) {}

SamplingLoop::~SamplingLoop() { stop(); }

void SamplingLoop::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

Status SamplingLoop::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return finished_ || stopping_; });
  if (!failure_.empty()) return make_error(failure_);
  return {};
}

void SamplingLoop::run() {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto interval = options_.interval;
  std::uint64_t tick = 0;
  std::string failure;
  for (;;) {
    const auto deadline = start + static_cast<std::int64_t>(tick) * interval;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (cv_.wait_until(lock, deadline, [this] { return stopping_; })) break;
    }
    try {
      GpuSnapshot snap = pass_();
      snap.sequence = passes_.load();
      sink_(std::move(snap));
    } catch (const std::exception& e) {
      failure = fmt::format("sampling pass {} failed: {}", passes_.load(), e.what());
      break;
    } catch (...) {
      failure = fmt::format("sampling pass {} failed with a non-standard exception", passes_.load());
      break;
    }
    const std::uint64_t done = passes_.fetch_add(1) + 1;
    if (options_.max_passes != 0 && done >= options_.max_passes) break;
    // Next deadline on the grid that is still ahead of us.
    const auto elapsed = Clock::now() - start;
    const auto next = static_cast<std::uint64_t>(elapsed / interval) + 1;
    if (next > tick + 1) skipped_.fetch_add(next - tick - 1);
    tick = std::max(next, tick + 1);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
    failure_ = std::move(failure);
  }
  finished_flag_.store(true);
  cv_.notify_all();
}

}  // namespace eacgm::sample
