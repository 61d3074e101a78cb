// A window split into the finest tier's edges and the rolled minutes and hours between.
#include "history/tier_ranges.h"

#include <algorithm>
#include <functional>

namespace eacgm::history {
namespace {

constexpr std::int64_t kMinuteNs = 60'000'000'000;
constexpr std::int64_t kHourNs = 60 * kMinuteNs;

std::int64_t floor_to(std::int64_t t, std::int64_t step) { return t - ((t % step) + step) % step; }
std::int64_t ceil_to(std::int64_t t, std::int64_t step) {
  const std::int64_t f = floor_to(t, step);
  return f == t ? t : f + step;
}

}  // namespace

std::vector<TierRange> tier_ranges(const NodeRollups& n, Tier tier, std::int64_t from_ns,
                                   std::int64_t to_ns) {
  std::vector<TierRange> out;
  const int asked = static_cast<int>(tier);
  auto add = [&](int t, std::int64_t lo, std::int64_t hi) {
    if (lo < hi) out.push_back({n.node, t, lo, hi});
  };
  // A node whose rows come rolled up has none finer to stand for: its rollups answer
  // from the window's start (the edges below a minute are its own agent's to tell).
  const std::optional<std::int64_t> first = n.rollups_only ? std::optional<std::int64_t>(from_ns) : n.oldest;
  if (tier == Tier::kHour || !first) {
    add(asked, from_ns, to_ns);
    return out;
  }
  const std::int64_t oldest = *first;
  // [s, e) from the coarser tier where it holds whole spans already rolled, `finer`
  // before and after.
  auto split = [&](std::int64_t s, std::int64_t e, int coarse, std::int64_t span, std::int64_t mark,
                   const std::function<void(std::int64_t, std::int64_t)>& finer) {
    const std::int64_t a = std::max(ceil_to(s, span), ceil_to(oldest, span));
    const std::int64_t b = std::min(floor_to(e, span), mark);
    if (b <= a) {
      finer(s, e);
      return;
    }
    finer(s, a);
    add(coarse, a, b);
    finer(b, e);
  };
  auto asked_tier = [&](std::int64_t s, std::int64_t e) { add(asked, s, e); };
  if (tier == Tier::kMinute) {
    split(from_ns, to_ns, 2, kHourNs, n.rolled_1h, asked_tier);
    return out;
  }
  auto minutes = [&](std::int64_t s, std::int64_t e) { split(s, e, 1, kMinuteNs, n.rolled_1m, asked_tier); };
  split(from_ns, to_ns, 2, kHourNs, n.rolled_1h, minutes);
  return out;
}

}  // namespace eacgm::history
