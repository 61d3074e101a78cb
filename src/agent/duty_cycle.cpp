// The duty cycle's thread: attach, wait fraction × period, detach, wait the rest.
#include "agent/duty_cycle.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

#include "core/duty_switch_log.h"

namespace eacgm::agent {
namespace {

// The log covers at least this much of the past: longer than any interval asked about.
constexpr auto kLogSpan = std::chrono::seconds(120);
// A short window is made longer by falling in at most every this many periods.
constexpr int kMaxPeriodsPerWindow = 10;

// Nanoseconds of the steady clock: CLOCK_MONOTONIC, as a traced program's own
// clock_gettime (Python's time.monotonic_ns) reads it.
long long monotonic_ns(DutyCycle::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

std::function<void(const DutyCycle::SwitchDone&)> DutyCycle::switch_logger(std::shared_ptr<std::FILE> file) {
  return [file = std::move(file)](const SwitchDone& s) {
    write_duty_switch(file.get(), s.attached, monotonic_ns(s.began), monotonic_ns(s.counting),
                      monotonic_ns(s.ended), s.ok);
  };
}

DutyCycle::DutyCycle(Switch attach, Options options)
    : attach_(std::move(attach)), options_(std::move(options)) {
  options_.min_fraction = std::clamp(options_.min_fraction, 0.001, 1.0);
  if (options_.period <= std::chrono::milliseconds(0)) options_.period = std::chrono::milliseconds(1000);
  if (options_.fixed_fraction) fraction_ = std::clamp(*options_.fixed_fraction, options_.min_fraction, 1.0);
  log_.push_back({Clock::now(), DutyWindow::kOpen});
  thread_ = std::thread([this] { loop(); });
}

DutyCycle::~DutyCycle() { stop(); }

void DutyCycle::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Left attached: the trace's last counts cover the time up to its end.
  std::unique_lock lock(mutex_);
  switch_to(lock, true);
}

void DutyCycle::mark(Clock::time_point at, DutyWindow state) {
  std::lock_guard lock(mutex_);
  log_counting(at, state);
}

void DutyCycle::set_fraction(double fraction) {
  if (options_.fixed_fraction) return;
  {
    std::lock_guard lock(mutex_);
    fraction_ = std::clamp(fraction, options_.min_fraction, 1.0);
  }
  wake_.notify_all();
}

double DutyCycle::fraction() const {
  std::lock_guard lock(mutex_);
  return fraction_;
}

std::uint64_t DutyCycle::switches() const {
  std::lock_guard lock(mutex_);
  return switches_;
}

std::uint64_t DutyCycle::failures() const {
  std::lock_guard lock(mutex_);
  return failures_;
}

DutyControl::SwitchTimes DutyCycle::switch_times() const {
  std::lock_guard lock(mutex_);
  const auto mean_ms = [this](int i) {
    return switch_n_[i] > 0 ? switch_ns_[i] / static_cast<double>(switch_n_[i]) / 1e6 : 0.0;
  };
  return {mean_ms(1), mean_ms(0)};
}

double DutyCycle::attached_ns(Clock::time_point from, Clock::time_point to) const {
  std::lock_guard lock(mutex_);
  return ns_in(DutyWindow::kOpen, from, to);
}

double DutyCycle::switching_ns(Clock::time_point from, Clock::time_point to) const {
  std::lock_guard lock(mutex_);
  return ns_in(DutyWindow::kSwitching, from, to);
}

double DutyCycle::switching_share() const {
  const SwitchTimes t = switch_times();
  const double period_ms = std::chrono::duration<double, std::milli>(options_.period).count();
  return std::min(1.0, (t.attach_ms + t.detach_ms) / (period_ms * periods_per_window(fraction())));
}

int DutyCycle::periods_per_window(double fraction) const {
  // A short window falls in every K-th period, K times as long (at most 90% of it).
  const double whole = static_cast<double>(options_.period.count()) * fraction;
  if (whole <= 0 || whole >= static_cast<double>(options_.min_window.count())) return 1;
  return std::min(kMaxPeriodsPerWindow,
                  static_cast<int>(std::ceil(static_cast<double>(options_.min_window.count()) / whole)));
}

double DutyCycle::ns_in(DutyWindow state, Clock::time_point from, Clock::time_point to) const {
  if (to <= from) return 0;
  double ns = 0;
  for (std::size_t i = 0; i < log_.size(); ++i) {
    if (log_[i].state != state) continue;
    const Clock::time_point begin = std::max(log_[i].at, from);
    const Clock::time_point end = i + 1 < log_.size() ? std::min(log_[i + 1].at, to) : to;
    if (end > begin) ns += std::chrono::duration<double, std::nano>(end - begin).count();
  }
  return ns;
}

void DutyCycle::prune(Clock::time_point now) {
  while (log_.size() > 1 && log_[1].at < now - kLogSpan) log_.pop_front();
}

void DutyCycle::log_counting(Clock::time_point at, DutyWindow state) {
  if (log_.back().state == state) return;
  log_.push_back({std::max(at, log_.back().at), state});
  prune(at);
}

void DutyCycle::switch_to(std::unique_lock<std::mutex>& lock, bool attached) {
  if (attached_ == attached) return;
  lock.unlock();
  const auto began = Clock::now();
  Clock::time_point counting = began;
  const Status done = attach_(attached, [this, attached, &counting](Clock::time_point at, DutyWindow state) {
    // Counting starts as the window opens, and stops as it leaves open for a detach.
    if (state == (attached ? DutyWindow::kOpen : DutyWindow::kSwitching)) counting = at;
    std::lock_guard counting_lock(mutex_);
    log_counting(at, state);
  });
  if (options_.on_switch) options_.on_switch({attached, began, counting, Clock::now(), done.ok()});
  lock.lock();
  ++switches_;
  switch_ns_[attached ? 1 : 0] += std::chrono::duration<double, std::nano>(Clock::now() - began).count();
  ++switch_n_[attached ? 1 : 0];
  // A refused attach leaves the probes detached and not counting; the next period
  // tries again. A failed detach leaves them attached (counting or not, as logged) and
  // is tried again.
  if (!done) {
    ++failures_;
    return;
  }
  attached_ = attached;
}

void DutyCycle::on_tick(Clock::time_point now) {
  {
    std::lock_guard lock(mutex_);
    period_start_ = now;
    ticked_ = true;
  }
  wake_.notify_all();
}

void DutyCycle::loop() {
  std::unique_lock lock(mutex_);
  const auto changed = [this] { return stopping_ || fraction_ >= 1.0; };
  while (!stopping_) {
    if (fraction_ >= 1.0) {
      switch_to(lock, true);
      wake_.wait(lock, [this] { return stopping_ || fraction_ < 1.0; });
      continue;
    }
    // Attached until the first tick (even at a fraction fixed below 1): the interval
    // before it has no beginning the controller knows, so nothing could scale its counts.
    if (!ticked_) {
      switch_to(lock, true);
      wake_.wait(lock, [this] { return stopping_ || ticked_; });
      continue;
    }
    // Detached until a tick begins a period; the window then falls anywhere in its
    // first 90% (were it always at the start, work that starts or stops within seconds
    // would be seen more, or less, than its share), in every period or every K-th.
    switch_to(lock, false);
    wake_.wait(lock, [this] { return stopping_ || fraction_ >= 1.0 || period_start_.has_value(); });
    if (changed()) continue;
    const Clock::time_point start = *period_start_;
    period_start_.reset();
    const int every = periods_per_window(fraction_);
    if (periods_to_skip_ > 0) {
      --periods_to_skip_;
      continue;
    }
    periods_to_skip_ = every - 1;
    const auto on =
        std::chrono::duration_cast<Clock::duration>(options_.period * std::min(fraction_ * every, 0.9));
    const auto room = std::max(Clock::duration::zero(),
                               std::chrono::duration_cast<Clock::duration>(options_.period * 0.9) - on);
    const auto lead = std::chrono::duration_cast<Clock::duration>(
        room * std::uniform_real_distribution<double>(0.0, 1.0)(random_));
    if (wake_.wait_until(lock, start + lead, changed)) continue;
    switch_to(lock, true);
    if (wake_.wait_until(lock, Clock::now() + on, changed)) continue;
    switch_to(lock, false);
  }
}

}  // namespace eacgm::agent
