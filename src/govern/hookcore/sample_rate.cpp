#include "govern/hookcore/sample_rate.h"

#include <algorithm>
#include <cmath>

namespace eacgm::govern {
namespace {
constexpr std::uint64_t kMaxStep = 64;
// The launching threads' time per timed launch before any was measured: two event records
// and a query take 2 to 3 us on the H200.
constexpr double kFirstCpuCostNs = 3000;
constexpr double kMinWeight = 1.0 / 8;
// A function that did not launch in the last period: what it may time before the next plan.
constexpr std::int32_t kIdleQuota = 2;
// What the functions short of min_samples may take of a period first, and the fewest timed
// launches read back before the share of them that became samples is believed (at least 1
// in 8 of them counted).
constexpr double kShortShare = 0.5;
constexpr std::uint64_t kYieldAfter = 4;
constexpr double kMinYield = 1.0 / 8;

// The timed launches a function short of min_samples needs for each sample it lacks.
double launches_per_sample(const FunctionDemand& d) {
  if (d.timed < kYieldAfter) return 1;
  const double yield = static_cast<double>(d.samples) / static_cast<double>(d.timed);
  return 1 / std::clamp(yield, kMinYield, 1.0);
}

double weight_of(const FunctionDemand& d, const SampleRateConfig& c) {
  const double shapes = std::clamp<std::uint32_t>(d.shapes, 1, kMaxPlannedShapes);
  if (d.mean_ns <= 0 || c.long_kernel_ns == 0 || d.samples < c.min_samples) return shapes;
  return shapes * std::clamp(d.mean_ns / static_cast<double>(c.long_kernel_ns), kMinWeight, 1.0);
}

}  // namespace

double SamplePlanner::settle(std::uint64_t period_ns, std::uint64_t timed, double spent_ns) {
  const double share = c_.budget * static_cast<double>(period_ns);
  if (timed > 0) {
    const double per = spent_ns / static_cast<double>(timed);
    cost_per_timed_ns_ = cost_per_timed_ns_ == 0 ? per : (cost_per_timed_ns_ + per) / 2;
  }
  balance_ns_ = std::clamp(balance_ns_ + share - spent_ns, -share, c_.saved_periods * share);
  allowance_ns_ = std::clamp(share + balance_ns_, 0.0, c_.most_periods_at_once * share);
  return allowance_ns_;
}

void SamplePlanner::plan(const FunctionDemand* demand, FunctionPlan* out, std::uint32_t* scratch,
                         std::size_t n) const {
  const double per =
      cost_per_timed_ns_ > 0 ? cost_per_timed_ns_ : kFirstCpuCostNs + static_cast<double>(c_.gpu_cost_ns);
  double left = allowance_ns_ / per;  // launches the period can afford
  double weights = 0;
  std::size_t m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const FunctionDemand& d = demand[i];
    if (d.nccl) {
      left -= static_cast<double>(d.launches);  // all timed
      out[i] = FunctionPlan{1, 0};
    } else if (d.launches == 0) {
      out[i].quota = kIdleQuota;  // its 1 in N as it was
    } else {
      scratch[m++] = static_cast<std::uint32_t>(i);
      weights += weight_of(d, c_);
    }
  }
  left = std::max(0.0, left);
  // First what the functions short of min_samples lack, equally (the smallest wants whole
  // while under the share the rest would get), out of kShortShare of what the period
  // affords.
  std::size_t short_of = 0;
  for (std::size_t k = 0; k < m; ++k) {
    const FunctionDemand& d = demand[scratch[k]];
    out[scratch[k]].first = 0;
    if (d.samples < c_.min_samples) std::swap(scratch[short_of++], scratch[k]);
  }
  const auto want = [&](std::uint32_t i) {
    return std::min(static_cast<double>(demand[i].launches),
                    static_cast<double>(c_.min_samples - demand[i].samples) * launches_per_sample(demand[i]));
  };
  std::sort(scratch, scratch + short_of, [&](std::uint32_t a, std::uint32_t b) { return want(a) < want(b); });
  // At most kShortShare of the period: the rest is shared as below, so a warm-up of many
  // new kernels does not stop the timing of the others.
  double first_left = left * kShortShare;
  for (std::size_t k = 0; k < short_of; ++k) {
    const double q = std::min(want(scratch[k]), first_left / static_cast<double>(short_of - k));
    out[scratch[k]].first = q;
    first_left -= q;
    left -= q;
  }
  left = std::max(0.0, left);
  // Water-filling: the functions that launched least (by weight) take all their launches
  // while that is under the level the rest would get; the others get the level.
  const auto rest = [&](std::uint32_t i) { return static_cast<double>(demand[i].launches) - out[i].first; };
  std::sort(scratch, scratch + m, [&](std::uint32_t a, std::uint32_t b) {
    return rest(a) / weight_of(demand[a], c_) < rest(b) / weight_of(demand[b], c_);
  });
  for (std::size_t k = 0; k < m; ++k) {
    const FunctionDemand& d = demand[scratch[k]];
    FunctionPlan& p = out[scratch[k]];
    const double w = weight_of(d, c_);
    const double launches = static_cast<double>(d.launches);
    const double more = std::min(rest(scratch[k]), weights > 0 ? w * left / weights : 0.0);
    left = std::max(0.0, left - more);
    weights -= w;
    const double q = p.first + more;
    const double every = q >= launches ? 1
                         : q > 0       ? std::round(launches / q)
                                       : static_cast<double>(c_.max_every);
    p.every = static_cast<std::uint32_t>(
        std::clamp(every, static_cast<double>(std::max<std::uint32_t>(c_.min_every, 1)),
                   static_cast<double>(c_.max_every)));
    p.quota = q > 0 ? static_cast<std::int32_t>(std::ceil(2 * q)) + 1 : 0;
  }
}

std::uint32_t SampleRate::clamp(std::uint32_t v) const {
  if (v < c_.min_every) v = c_.min_every;
  if (v > c_.max_every) v = c_.max_every;
  return v == 0 ? 1 : v;
}

std::uint32_t SampleRate::adapt(std::uint64_t wall_ns, std::uint64_t timed, std::uint64_t cost_ns) {
  if (wall_ns == 0) return every_;
  const double spent = static_cast<double>(cost_ns + timed * c_.gpu_cost_ns);
  const double share = spent / static_cast<double>(wall_ns);
  if (share > c_.budget) {
    // Over: straight to the power-of-two multiple that brings the cost back within the
    // budget (at most x64 a step), so a start at 1 in 16 costs one second, not five.
    std::uint64_t factor = 2;
    while (static_cast<double>(factor) * c_.budget < share && factor < kMaxStep) factor *= 2;
    every_ = clamp(static_cast<std::uint32_t>(std::min<std::uint64_t>(every_ * factor, c_.max_every)));
  } else if (share < c_.budget / 4 && every_ > c_.min_every) {
    every_ = clamp(every_ / 2);
  }
  return every_;
}

}  // namespace eacgm::govern
