// The pace pooled over the last intervals, with its error from their spread.
#include "agent/pace.h"

#include <algorithm>
#include <cmath>

namespace eacgm::agent {
namespace {

constexpr double kMinCalls = 30;          // pooled calls inside and outside before a pace counts
constexpr std::size_t kMinIntervals = 3;  // intervals pooled before a pace counts
constexpr double kMinSeconds = 0.01;      // an interval with less time seen (or unseen) adds none
// Intervals with calls inside and outside from which their spread is the error; before,
// the pooled counts' Poisson error.
constexpr std::size_t kSpreadIntervals = 5;
constexpr std::uint64_t kMinGaps = 3;  // gaps inside and outside for an interval's pace from them

}  // namespace

void Pace::add_calls(std::uint64_t calls, std::uint64_t windowed, std::uint64_t switching) {
  calls_ += calls;
  windowed_ += windowed;
  switching_ += switching;
}

void Pace::add_gaps(const PaceGaps& gaps) { gaps_ += gaps; }

void Pace::end_interval(double in_s, double out_s) {
  if (gaps_.in >= kMinGaps && gaps_.out >= kMinGaps) {
    // Gaps per second of gap time: one over the mean gap, inside and outside.
    intervals_.push_back({static_cast<double>(gaps_.in), static_cast<double>(gaps_.in_ns) / 1e9,
                          static_cast<double>(gaps_.out), static_cast<double>(gaps_.out_ns) / 1e9});
    while (intervals_.size() > kIntervals) intervals_.pop_front();
  } else if (in_s >= kMinSeconds && out_s >= kMinSeconds) {
    const std::uint64_t in = std::min(windowed_, calls_);
    const std::uint64_t out = calls_ - in - std::min(switching_, calls_ - in);
    intervals_.push_back({static_cast<double>(in), in_s, static_cast<double>(out), out_s});
    while (intervals_.size() > kIntervals) intervals_.pop_front();
  }
  calls_ = windowed_ = switching_ = 0;
  gaps_ = {};
}

std::optional<double> Pace::speedup() const {
  double in = 0, in_s = 0, out = 0, out_s = 0;
  for (const Interval& i : intervals_) {
    in += i.in_calls;
    in_s += i.in_s;
    out += i.out_calls;
    out_s += i.out_s;
  }
  if (intervals_.size() < kMinIntervals || in < kMinCalls || out < kMinCalls) return std::nullopt;
  return (out / out_s) / (in / in_s);
}

bool Pace::spread_known() const {
  return static_cast<std::size_t>(std::count_if(intervals_.begin(), intervals_.end(), [](const Interval& i) {
           return i.in_calls > 0 && i.out_calls > 0;
         })) >= kSpreadIntervals;
}

double Pace::relative_variance() const {
  double in = 0, out = 0;
  for (const Interval& i : intervals_) {
    in += i.in_calls;
    out += i.out_calls;
  }
  const double poisson = in > 0 && out > 0 ? 1 / in + 1 / out : 0.0;
  // Steps are not Poisson arrivals: past a few intervals their spread is the measure.
  if (!spread_known()) return poisson;
  // The spread of the intervals' own (log) speedups, over how many there are.
  double n = 0, sum = 0, sum2 = 0;
  for (const Interval& i : intervals_) {
    if (i.in_calls <= 0 || i.out_calls <= 0) continue;
    const double l = std::log((i.out_calls / i.out_s) / (i.in_calls / i.in_s));
    n += 1;
    sum += l;
    sum2 += l * l;
  }
  return std::max(0.0, (sum2 - sum * sum / n) / (n - 1)) / n;
}

std::optional<double> Pace::cautious_speedup(double z) const {
  const auto s = speedup();
  if (!s) return std::nullopt;
  return *s * std::exp(z * std::sqrt(relative_variance()));
}

}  // namespace eacgm::agent
