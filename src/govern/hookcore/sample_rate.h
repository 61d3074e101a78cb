// How often the hook times a launch: 1 in N per function (NCCL kernels always), which ones
// (sample_launch), and N per function planned every period from the budget left over the
// run so far, shared out between the functions that launched (SamplePlanner), so that a
// kernel launched once a step is timed as often as one launched a thousand times. The cost
// counted is the launching threads' time spent recording events plus an allowance for the
// GPU time each event pair takes on the stream.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace eacgm::govern {

struct SampleRateConfig {
  std::uint32_t initial = 16;
  std::uint32_t min_every = 1;
  std::uint32_t max_every = 1u << 16;
  double budget = 0.002;  // the share of wall time timing may cost (0.2%)
  // Allowance per timed launch for its two events on the GPU: what a pair delays a stream
  // that is kept busy (the GPU drains the kernel before each timestamp), 4.3 us on the H200
  // (bench/programs/event_pair_cost, 20 us kernels back to back).
  std::uint64_t gpu_cost_ns = 4300;
  // Kernels at least this long get a full share of the timed launches, shorter ones a share
  // in proportion down to 1/8 once they have min_samples: their time matters less, and
  // timing costs them as much.
  std::uint64_t long_kernel_ns = 20'000;
  // Until a kernel has this many steady samples (its first launch left out) it gets a full
  // share whatever its length, so that a run of a few seconds gives every kernel a figure.
  std::uint64_t min_samples = 10;
  // What the periods with too little to time (a warm-up, the program paused) may save of
  // their budget, in periods' budgets, and the most of its budget one period may then spend:
  // a short run whose warm-up took a second or two still spends its budget over the run.
  double saved_periods = 8;
  double most_periods_at_once = 3;
};

// Whether a function's launch number `n` (0 first) is timed at 1 in `every`: one launch
// in each block of `every` consecutive launches, at an offset drawn from the block's
// number and the function (the first launch is always timed). Exactly the rate, and never
// in step with a program's own period: a fixed 1 in 16 would time the same one of a
// kernel's four shapes in every step.
inline bool sample_launch(std::uint64_t n, std::uint64_t function, std::uint32_t every) {
  if (every <= 1 || n == 0) return true;
  const std::uint64_t block = n / every;
  if (block == 0) return false;
  std::uint64_t z = block * 0x9e3779b97f4a7c15ull ^ function;  // splitmix64
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return n % every == z % every;
}

// The launching thread's time counted for one timed launch: its time in the hook before the
// launch and after it (two event records, a query, a lock), each part at most
// kMaxCountedPartNs. The work takes 1 to 3 us a part (3.4 to 4.8 us a launch on the H200); a
// part far longer is the thread descheduled there by a busy host, which would have stopped
// the program as long wherever it was: counted whole, one such wait of a few milliseconds
// weighed as much as a thousand timed launches and stopped the timing for periods after it.
inline constexpr std::uint64_t kMaxCountedPartNs = 25'000;
inline std::uint64_t counted_host_cost(std::uint64_t before_ns, std::uint64_t after_ns) {
  return (before_ns < kMaxCountedPartNs ? before_ns : kMaxCountedPartNs) +
         (after_ns < kMaxCountedPartNs ? after_ns : kMaxCountedPartNs);
}

// The timing thread's plan for one period, per function. `quota` caps the launches timed in
// the period (NCCL kernels and first launches aside) when the function launches far more
// often than it did in the last one.
struct FunctionPlan {
  std::uint32_t every = 0;
  std::int32_t quota = 0;
  // Of the launches planned, those given first to a kernel short of min_samples.
  double first = 0;
};

// What one function did in the last period, for planning the next.
struct FunctionDemand {
  std::uint64_t launches = 0;  // in the last period
  double mean_ns = 0;          // its timed launches' mean so far; 0: none yet
  bool nccl = false;           // every launch timed: its cost comes off the top
  // Launch shapes seen among its timed launches (at most kMaxPlannedShapes): the shapes
  // share its timed launches, so it gets a share for each.
  std::uint32_t shapes = 1;
  // Its samples so far as the agent counts them (figure_samples), the first launch left out.
  std::uint64_t samples = 0;
  // Its timed launches read back so far, the first left out: with `samples`, the share of
  // them that become samples (the rest found the stream idle).
  std::uint64_t timed = 0;
};

// The samples a kernel's figures rest on, of `timed` launches read back (the first left
// out), `queued` of them queued behind earlier work, as the agent counts them: the queued
// spans, which are the kernel's own time; only when there is none, the spans that started
// on an idle stream, which also hold the launch's latency (upper bounds). A kernel launched
// first after each synchronisation, or on a host slowed by CPU pressure, finds the stream
// idle most of the time: counted by its timed launches it would leave the full share with
// fewer than min_samples figures behind it.
inline std::uint64_t figure_samples(std::uint64_t timed, std::uint64_t queued) {
  return queued > 0 ? queued : timed;
}
inline constexpr std::uint32_t kMaxPlannedShapes = 8;

// The first plan comes soon after the first launch, so that a warm-up is timed at the
// default rate briefly; the next ones each quarter second: short enough that a run of a few
// seconds is planned from its own launches, long enough that a kernel launched once a step
// is seen in each.
inline constexpr std::uint64_t kFirstPlanNs = 100'000'000;
inline constexpr std::uint64_t kPlanEveryNs = 250'000'000;

// Spreads the budget over the functions. The budget is accounted over the run so far: each
// period adds its share of the budget to a balance and takes off what timing cost, and the
// next period spends the balance. A debt is bounded to one period's budget, so a costly
// warm-up (every first launch is timed, events are made) delays timing by at most one
// period instead of starving it for the rest of a short run; savings to saved_periods of
// them, spent at most_periods_at_once a period at most, so that the budget of a warm-up
// with little to time is spent after it, and a run never spends more than its budget plus
// one period's. What a period may time is shared out by
// weighted water-filling: each function is given min(its launches, weight x L), with L the
// level at which the total is the launches the period can afford; so every function that
// launched gets the same number of timed launches (by weight: its duration, its shapes)
// unless it launched fewer. Before that, the functions short of min_samples are given what
// they lack (water-filled alike, out of half of what the period affords), as
// timed launches at the rate its timed launches became samples so far (a kernel that finds
// the stream idle two times in three needs three launches a sample): a kernel of many
// shapes or a long one does not take the launches that would give a rare one its first
// figures.
class SamplePlanner {
 public:
  explicit SamplePlanner(SampleRateConfig c = {}) : c_(c) {}
  // After a period of `period_ns` in which the timed launches cost `spent_ns` in all (the
  // GPU allowance included) over `timed` launches: what the next period may spend, in ns.
  double settle(std::uint64_t period_ns, std::uint64_t timed, double spent_ns);
  // Plans the next period for `n` functions; `scratch` holds n indices.
  void plan(const FunctionDemand* demand, FunctionPlan* out, std::uint32_t* scratch, std::size_t n) const;
  double allowance_ns() const { return allowance_ns_; }
  double cost_per_timed_ns() const { return cost_per_timed_ns_; }
  const SampleRateConfig& config() const { return c_; }

 private:
  SampleRateConfig c_;
  double balance_ns_ = 0;
  double allowance_ns_ = 0;
  double cost_per_timed_ns_ = 0;  // 0: no launch timed yet
};

// How launch `n` of a function is timed (choose_launch): not at all, as chosen by its plan,
// or in place of an earlier chosen launch that found its stream idle.
enum class LaunchTiming : std::uint8_t { kUntimed, kChosen, kInPlace };

// The launches after a chosen one left untimed on an idle stream that may be timed in its
// place, the first that finds work queued. A kernel launched first after each
// synchronisation finds the stream idle most times it is chosen: left untimed, its planned
// samples were lost with its idle starts, and a short run gave it a handful.
inline constexpr std::int32_t kIdleRetries = 4;

// Whether the hook times launch `n` (0 first) of a function: its first launch always (the
// agent keeps it apart: it runs cold), an NCCL kernel's always, any other at the function's
// planned 1 in N (`planned`; 0: not planned yet, the process's `fallback`) while the
// period's cap `left` lasts (taken here); and else one in place of a chosen launch left
// untimed (`in_place`: the launches that may still take its place, set to kIdleRetries by
// the hook when it leaves a chosen launch untimed, cleared when one in its place is timed),
// within the cap too.
inline LaunchTiming choose_launch(std::uint64_t n, std::uint64_t function, bool nccl, std::uint32_t planned,
                                  std::uint32_t fallback, std::atomic<std::int32_t>& left,
                                  std::atomic<std::int32_t>& in_place) {
  if (n == 0 || nccl) return LaunchTiming::kChosen;
  if (sample_launch(n, function, planned != 0 ? planned : fallback))
    return left.fetch_sub(1, std::memory_order_relaxed) > 0 ? LaunchTiming::kChosen : LaunchTiming::kUntimed;
  if (in_place.load(std::memory_order_relaxed) <= 0 || in_place.fetch_sub(1, std::memory_order_relaxed) <= 0)
    return LaunchTiming::kUntimed;
  return left.fetch_sub(1, std::memory_order_relaxed) > 0 ? LaunchTiming::kInPlace : LaunchTiming::kUntimed;
}

class SampleRate {
 public:
  explicit SampleRate(SampleRateConfig c = {}) : c_(c), every_(clamp(c.initial)) {}
  std::uint32_t every() const { return every_; }
  // One adaptation step over `wall_ns` of time in which `timed` launches were timed and
  // the launching threads spent `cost_ns` timing them. Over the budget, multiplies `every`
  // by the power of two (2 to 64) that would have kept it within; under a quarter of it,
  // halves `every`.
  std::uint32_t adapt(std::uint64_t wall_ns, std::uint64_t timed, std::uint64_t cost_ns);

 private:
  std::uint32_t clamp(std::uint32_t v) const;
  SampleRateConfig c_;
  std::uint32_t every_;
};

}  // namespace eacgm::govern
