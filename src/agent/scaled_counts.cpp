// Scaling of duty-cycled counts and the variance of each estimate.
#include "agent/scaled_counts.h"

#include <algorithm>
#include <cmath>

namespace eacgm::agent {
namespace {

constexpr double kExact = 0.999;                // attached this share of an interval: counts are exact
constexpr double kMinAttachedNs = 1e6;          // below, the window is taken as this long
constexpr double kChangeWeight = 0.2;           // weight of the newest rate change
constexpr std::uint64_t kForgetIntervals = 10;  // a (process, probe) unseen this long is dropped
constexpr double kMinSpeedup = 0.5;             // a pace outside these bounds is taken as the bound
constexpr double kMaxSpeedup = 2.0;

std::uint64_t scaled(std::uint64_t n, double factor) {
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(n) * factor));
}

}  // namespace

std::vector<CallCount> ScaledCounts::release(double wall_ns, double attached_ns,
                                             const std::map<std::uint32_t, double>& speedup,
                                             const std::map<std::uint32_t, std::optional<Span>>& ended) {
  ++interval_;
  std::vector<CallCount> out;
  out.swap(held_);
  std::erase_if(rates_,
                [this](const auto& r) { return r.second.last_interval + kForgetIntervals < interval_; });
  if (out.empty() || wall_ns <= 0) return out;

  // Per process: the span it lived in the interval, and how it is scaled.
  struct Scale {
    bool exact = false;
    double f = 1;              // the seen share of its span
    double seen_s = 0;         // seconds seen
    double unseen_s = 0;       // seconds not seen
    double speedup = 1;        // 1 / (1 - slowdown): how much faster unseen calls were made
    double unseen_weight = 1;  // 0.5 for a process that ended at a moment not known
  };
  std::map<std::uint32_t, Scale> scales;
  auto scale_of = [&](std::uint32_t pid) -> const Scale& {
    auto [it, added] = scales.try_emplace(pid);
    if (!added) return it->second;
    Scale& sc = it->second;
    Span span{wall_ns, attached_ns};
    if (auto e = ended.find(pid); e != ended.end()) {
      if (e->second) {
        span = *e->second;
      } else {
        sc.unseen_weight = 0.5;
      }
    }
    if (span.wall_ns <= 0 || span.attached_ns >= kExact * span.wall_ns) {
      sc.exact = true;
      return sc;
    }
    const double seen_ns = std::max(span.attached_ns, kMinAttachedNs);
    sc.f = std::min(1.0, seen_ns / span.wall_ns);
    sc.seen_s = seen_ns / 1e9;
    sc.unseen_s = std::max(0.0, span.wall_ns - seen_ns) / 1e9;
    const auto fast = speedup.find(pid);
    sc.speedup = fast == speedup.end() ? 1.0 : std::clamp(fast->second, kMinSpeedup, kMaxSpeedup);
    return sc;
  };

  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> totals;
  for (const CallCount& c : out) {
    if (!scale_of(c.pid).exact) totals[{c.pid, c.probe ? c.probe->id : 0}] += c.calls;
  }
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> variance;
  for (const auto& [key, n] : totals) {
    const Scale& sc = scale_of(key.first);
    Rate& r = rates_[key];
    const double rate = static_cast<double>(n) / sc.seen_s * sc.speedup;  // while detached
    if (r.windows > 0 && r.last_interval + 1 == interval_) {
      const double change = (rate - r.last) * (rate - r.last);
      r.mean_square_change =
          r.windows == 1 ? change : (1 - kChangeWeight) * r.mean_square_change + kChangeWeight * change;
    }
    r.last = rate;
    ++r.windows;
    r.last_interval = interval_;
    const double thinning = static_cast<double>(n) * (1 - sc.f) / (sc.f * sc.f) * sc.speedup * sc.speedup;
    const double drift = r.mean_square_change / 2 * sc.unseen_s * sc.unseen_s;
    variance[key] = std::max(thinning, drift);
  }
  for (CallCount& c : out) {
    const Scale& sc = scale_of(c.pid);
    if (sc.exact) continue;
    const auto key = std::make_pair(c.pid, c.probe ? c.probe->id : 0u);
    const double n = static_cast<double>(totals[key]);
    const double share = n > 0 ? static_cast<double>(c.calls) / n : 0.0;
    c.variance = variance[key] * share * share;
    // What one call seen stands for: itself, and its share of the unseen time's calls.
    const double unseen = (1 - sc.f) / sc.f * sc.speedup;
    if (sc.unseen_weight < 1) c.variance += std::pow(unseen * static_cast<double>(c.calls), 2) / 12;
    const double factor = 1 + unseen * sc.unseen_weight;
    c.calls = scaled(c.calls, factor);
    c.bytes = scaled(c.bytes, factor);
    c.estimated = true;
  }
  return out;
}

}  // namespace eacgm::agent
