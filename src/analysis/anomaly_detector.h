// AnomalyDetector: an online detector of unusually slow calls and intervals.
//
// The model: per (domain, function, size class) the log of a call's duration is taken as
// normally distributed (durations as log-normal), with a mean and variance learnt online
// (Welford's exact statistics during the warm-up, then an exponentially weighted update
// with a horizon of `horizon` calls, so that slow drift is followed). Calls that move
// bytes are split into size classes (a factor of 4 apart), so a large copy is compared
// with copies of its size. Flagged calls are not learnt and other updates are winsorized
// at 4 standard deviations, so an outlier does not widen the distribution that judges
// the next one.
//
// - A call is anomalous when, after `warmup` calls of its key, its log-duration z-score
//   exceeds `z_threshold`, its duration is at least `ratio` times the model's median,
//   exp(mean), and at least `tail_ratio` times the 99.9th percentile of the durations
//   learnt (a decayed log-bucket histogram per key; the percentile leaves out at most
//   two calls, so that one outlier learnt in the warm-up does not shield the next). The standard deviation
//   has a floor
//   (`min_log_sd`), so that a very steady function is not flagged for jitter; the
//   percentile keeps a rare but regular slow mode (one call in 60 that waits for the GPU
//   while the others return at once) from being flagged each time: one normal
//   distribution cannot describe two modes, the histogram does. For the same reason a
//   call at least `extreme_ratio` times that percentile is flagged whatever its z-score:
//   two modes far apart (two ranks' synchronisations, one waiting for the other) widen
//   the normal so much that no z-score reaches the threshold, while a call 20 times
//   beyond 99.9% of all is as rare as a 6-sigma one of a log-normal of sigma 1. It must
//   also last at least `min_excess_ns` more than the median: on a loaded machine a 2 us
//   call often takes 30 us or 300 us (an interrupt), which is no news.
// - Such a slow call is reported (counted in `total`, kept) at once when it lasts at least
//   `alone_excess_ns` more than the median. Otherwise it is held: a loaded virtual machine
//   delays single calls by milliseconds that no run delay shows (the hypervisor's steal,
//   interrupts), so one slow call alone says little. It is reported, with the held slow
//   calls of its key, when the slow calls of the key within `cluster_ns` (held or
//   reported) are more than the key's own rate of them explains: as many as a Poisson
//   count of that rate's mean reaches with a chance under `cluster_alpha`, and at least
//   `cluster_min`. The rate is the key's slow calls that left the window, over the time
//   since its first call, with a prior of six a minute worth a minute (a busy machine's,
//   until the key shows its own). Held calls that leave the window are let go.
// - An interval (the time between two ticks) is anomalous for a key when at least
//   `interval_calls` calls came in it, their mean log-duration lies more than
//   `interval_z` of its standard errors above the model's mean, and their geometric mean
//   duration is at least `interval_ratio` times the median: a sustained slowdown whose
//   single calls stay below `ratio`. Both are taken against the model as it was at the
//   interval's first call. The standard error is not the calls' own, sd / sqrt(calls):
//   load on the machine slows all the calls of an interval together, so their means
//   swing from interval to interval by far more than independent calls would (a 2-core
//   machine under load: 1.2-1.5x). It is sqrt(sd^2 / calls + tau^2), tau^2 the learnt
//   variance of interval means beyond the calls' own (per key, an exponentially weighted
//   mean of mean^2 - sd^2 / calls over `interval_horizon` intervals not flagged,
//   winsorized like the calls; not the interval in which the model's warm-up ended,
//   whose mean is partly the model's own), with a floor `min_interval_sd` that is also
//   the prior (worth 8 intervals) and so judges the first intervals. With tau = 0 this is the plain sum of
//   the calls' z-scores over sqrt(calls). Each call's share of the mean is capped at 10 standard deviations,
//   so one outlier alone does not make a slow interval. Such an interval is reported alone
//   when its ratio is at least `interval_alone_ratio`; one of less (within what a loaded
//   machine's seconds swing by) only when the key's next interval is slow too, against
//   the model as it was at the first (the model learns part of a slowdown while it
//   lasts), and then both are; each further slow interval of the slowdown is judged against that same model.
// - `shift_run` slow calls in a row mean the function's level changed: its model is
//   learnt again from the next call (counted in `level_shifts`), instead of flagging
//   every call of the new level.
//
// A call is judged by its duration less its run delay (CallEvent::run_delay_ns: the time its
// thread waited runnable for a CPU inside it), learnt and flagged alike: on a loaded
// machine any call may be held off the CPU for milliseconds, which says nothing of the
// call; time it blocked (a sleep, a wait for the GPU) is its own and stays. A call held
// off the CPU for at least half its duration is learnt and judged apart from the others
// of its key (a class of its own, like a size class): it resumes cold, after the switches
// and with caches another task filled, so a sub-microsecond call's own time is then tens
// of microseconds. Sampled buckets do the same by count: the kernel splits each bucket's
// calls held off the CPU for half their time or more (CallTimings::held, their durations
// and waits summed) from the others, and the two parts are judged apart, the held ones at
// their mean time less their mean wait.
//
// Calls come one by one (per-call records, with their args) or, in always-on mode, as
// the sampled durations' log buckets per (process, probe): a bucket's calls are judged
// together at the bucket's mean duration, and an anomaly found there is marked `sampled`
// (its time is the delivery's, its args unknown).
//
// The context of an anomaly: the innermost traced PyTorch op or Python function that
// enclosed it on its thread (per-call records only; an op's record arrives at its exit,
// after the calls inside it, so the anomaly is completed when it does).
//
// Repeats are coalesced: a flagged call (or sampled bucket) of the same process, function
// and kind (per call or sampled) as a kept anomaly whose last repeat is at most
// `coalesce_ns` older is merged into that anomaly (`repeats`, `last_ts_ns`, `max_dur_ns`,
// `calls`) instead of being kept apart, so a loop that stays slow on a busy machine, or a
// key that keeps being an outlier, is one entry per window, not hundreds. `total` still
// counts every flagged call; `coalesced` those merged.
//
// Memory is bounded: at most `max_functions` keys (calls of further ones are counted as
// untracked), the last `keep` anomalies and `keep` intervals, and the coalescing index
// (the newest anomaly of each key among the kept ones: at most 2 x `keep` entries).
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/call_bytes.h"
#include "core/call_counts.h"
#include "core/call_event.h"

namespace eacgm::analysis {

struct Anomaly {
  std::uint64_t ts_ns = 0;
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::string domain;
  std::string name;
  std::uint64_t dur_ns = 0;         // the call's duration (a sampled bucket: its calls' mean)
  std::uint64_t run_delay_ns = 0;   // of dur_ns, the waits for a CPU (judged without them)
  std::uint64_t bytes = 0;          // what the call moved, when its function moves bytes
  double score = 0;                 // the log-duration z-score
  double median_ns = 0;             // the model's median for the call's key when it was flagged
  std::string comm;                 // the process's name at the call
  std::vector<std::uint64_t> args;  // the call's raw argument values
  // The flagged call itself (its arguments with their names and formats); null for a
  // sampled bucket.
  std::shared_ptr<const CallEvent> call;
  std::string op;           // the enclosing traced op or Python function, "" when none seen
  bool sampled = false;     // from always-on sampled durations (see above)
  std::uint64_t calls = 1;  // the calls it stands for: a sampled bucket's, summed over repeats
  // Coalesced repeats (see above): the fields above are the first flagged call's.
  std::uint64_t repeats = 1;     // flagged calls (or sampled buckets) merged into this entry
  std::uint64_t last_ts_ns = 0;  // the last one's time (ts_ns when alone)
  std::uint64_t max_dur_ns = 0;  // the slowest one's duration
};

struct IntervalAnomaly {
  std::uint64_t start_ns = 0;  // the interval, ns since the Unix epoch
  std::uint64_t end_ns = 0;
  std::string domain;
  std::string name;
  std::uint64_t bytes_class = 0;  // the size class's lower bound in bytes, 0 when none
  std::uint64_t calls = 0;        // timed calls of the key in the interval
  // Like a slow call's duration and median, a value and its baseline in ns: the calls'
  // geometric mean duration (not the interval's length, end_ns - start_ns) and the model's
  // median at the interval's first call; `ratio` is their quotient.
  double mean_ns = 0;
  double median_ns = 0;
  double ratio = 0;
  double score = 0;  // the calls' mean log-duration excess over its standard error (above)
};

struct AnomalySummary {
  std::deque<Anomaly> recent;             // oldest first
  std::deque<IntervalAnomaly> intervals;  // oldest first
  std::uint64_t total = 0;
  std::uint64_t interval_total = 0;
  std::uint64_t level_shifts = 0;
  std::size_t functions = 0;          // keys tracked (function and size class)
  std::uint64_t untracked_calls = 0;  // timed calls past max_functions
  std::uint64_t context_updates = 0;  // anomalies whose op was found after they were flagged
  std::uint64_t coalesced = 0;        // flagged calls merged into an earlier anomaly (repeats)
  // Entries ever kept in `recent` (its last is the kept-th): a held call reported with its
  // group is kept after newer ones of other keys, so the order of keeping is not of ts_ns.
  std::uint64_t kept = 0;
};

class AnomalyDetector {
 public:
  struct Options {
    std::uint64_t warmup = 200;
    double z_threshold = 6;
    double ratio = 10;
    double interval_z = 5;
    double interval_ratio = 1.5;
    std::uint64_t interval_calls = 16;
    std::uint64_t interval_horizon = 64;  // intervals the spread of interval means is learnt over
    double min_interval_sd = 0.12;        // floor of that spread (log units: about 12%)
    std::uint64_t horizon = 2048;
    std::uint64_t shift_run = 16;
    double min_log_sd = 0.05;
    double tail_ratio = 2;
    double extreme_ratio = 20;
    // A slow call's reporting (header): its least excess over the median, the excess that
    // is news alone, and the group of slow calls within `cluster_ns` that is.
    std::uint64_t min_excess_ns = 1'000'000;
    std::uint64_t alone_excess_ns = 100'000'000;
    std::uint64_t cluster_ns = 10'000'000'000;
    std::uint64_t cluster_min = 3;
    double cluster_alpha = 1e-4;
    // A slow interval of at least this ratio is reported alone; one of less only when the
    // next interval of its key is slow too.
    double interval_alone_ratio = 2;
    std::size_t keep = 256;
    std::uint64_t coalesce_ns = 60'000'000'000;  // repeats within this long merge (0: never)
    std::size_t max_functions = 4096;
  };
  AnomalyDetector() : AnomalyDetector(Options{}) {}
  explicit AnomalyDetector(Options options) : options_(options), log_ratio_(std::log(options.ratio)) {}

  // True when the call was flagged. Calls without a duration are ignored; an exited
  // `torch` or `python` call completes the context of the anomalies it enclosed.
  bool add(const CallEvent& event);
  // Always-on: sampled durations of one (process, probe) bucket, delivered at `now_ns`.
  // True when the bucket was flagged.
  bool add(const CallTimings& timings, std::uint64_t now_ns);
  // Ends the interval that began at the last call (or construction) at `now_ns`: judges
  // each key that had calls in it.
  void close_interval(std::uint64_t now_ns);

  const AnomalySummary& summary() const { return summary_; }
  std::size_t functions() const { return stats_.size(); }

 private:
  static constexpr std::size_t kClasses = 34;  // none, then [4^k, 4^(k+1)) bytes
  static constexpr std::size_t kBuckets = 64;  // [2^(b/2), 2^((b+1)/2)) ns; the last open
  struct Stats {
    std::uint64_t n = 0;  // calls learnt since the model (re)started
    double mean = 0;
    double m2 = 0;          // warm-up: Welford's sum of squares
    double var = 0;         // after the warm-up: the weighted variance
    std::uint64_t run = 0;  // flagged calls in a row
    // The learnt durations, halved each time they reach 2 x horizon calls.
    std::array<float, kBuckets> hist{};
    double hist_total = 0;
    // The open interval.
    std::uint64_t k = 0;
    double z_sum = 0;
    double dx_sum = 0;
    double median_ns = 0;  // exp(mean) when a call was last flagged
    // The model at the open interval's first call, which judges the interval.
    double interval_mean = 0;
    double interval_sd = 0;
    // The model's warm-up ended in the open interval: it learnt from the interval's own
    // first calls, so the interval's mean is no fair sample of the spread of means.
    bool interval_fresh = false;
    // The learnt variance of interval means beyond the calls' own (tau^2 above), and the
    // intervals it was learnt from.
    double between_var = 0;
    std::uint64_t intervals = 0;
    bool touched = false;
    // Slow calls: those within `cluster_ns` (weight, in `slow_`), and those before it since
    // `first_ns` (the key's own rate of them).
    std::uint64_t recent = 0;
    std::uint64_t first_ns = 0;
    double lone = 0;
    std::string_view domain;
    std::string_view name;
    std::size_t size_class = 0;
  };
  struct ProbeEntry {
    BytesRule bytes;
    std::array<Stats*, 2 * kClasses> by_class{};  // then the same, held off the CPU (above)
    bool context = false;                         // a torch op or Python function: encloses anomalies
    bool ignored = false;                         // not judged (load-time registrations)
  };
  struct Pending {  // an anomaly still without its op
    std::uint64_t seq = 0;
    std::uint32_t pid = 0;
    std::uint32_t tid = 0;
    std::uint64_t start = 0;
    std::uint64_t end = 0;
  };
  struct Slow {  // a slow call within `cluster_ns`: held (alone so far) or reported
    Stats* key = nullptr;
    std::uint64_t ts_ns = 0;
    std::uint64_t weight = 0;
    bool held = false;
    Anomaly anomaly;  // while held
  };
  // A slow interval waiting for the next of its key to confirm it, or a confirmed one whose
  // slowdown goes on: the next is judged against the same model, as it was at the first.
  struct SlowInterval {
    Stats* key = nullptr;
    IntervalAnomaly interval;
    double base = 0;  // the model's mean log duration then
    double se = 0;    // and the standard error of an interval's mean
    bool recorded = false;
  };
  using Key = std::tuple<std::string, std::string, std::size_t>;
  using RepeatKey = std::tuple<std::uint32_t, std::string, std::string, bool>;  // pid, domain, name, sampled

  ProbeEntry* entry_for(const std::shared_ptr<const ProbeInfo>& probe);
  Stats* stats_for(const std::shared_ptr<const ProbeInfo>& probe, ProbeEntry& entry, std::size_t size_class);
  // One part of a sampled bucket: `count` calls of `sum_ns` in all, of which `delay_ns`
  // waits for a CPU, judged in class `cls` at their mean time less their mean wait.
  bool add_bucket(const CallTimings& t, ProbeEntry* entry, std::size_t cls, std::uint64_t count,
                  std::uint64_t sum_ns, std::uint64_t delay_ns, std::uint64_t now_ns);
  // Judges `weight` calls of mean log-duration `x` and learns them unless flagged; the
  // z-score when they were flagged, else a negative value.
  double judge(Stats& s, double x, std::uint64_t weight);
  void learn(Stats& s, double x, std::uint64_t weight) const;
  // Learns an interval's mean log-duration excess `dx` into the spread of interval means,
  // `within` being the variance the calls' own spread alone gives it.
  void learn_interval(Stats& s, double dx, double within) const;
  // The upper edge of the bucket holding the learnt durations' 99.9th percentile (ns).
  static double tail_ns(const Stats& s);
  // Reports a slow call (`weight` calls) now, holds it, or reports it with the held ones of
  // its key (header); true when reported.
  bool report(Stats& s, Anomaly a, std::uint64_t weight, std::uint64_t excess_ns);
  // The slow calls within `cluster_ns` that make a group for `s` at `ts_ns`.
  std::uint64_t group_size(const Stats& s, std::uint64_t ts_ns) const;
  // Lets go of the slow calls older than `cluster_ns` at `now_ns` (held ones stayed alone):
  // they join the key's rate.
  void release(std::uint64_t now_ns);
  // Keeps a flagged call, or merges it into the kept anomaly it repeats; true when merged.
  bool keep(Anomaly a);
  void complete_context(const CallEvent& op);

  Options options_;
  double log_ratio_;  // log(options_.ratio)
  std::map<Key, Stats> stats_;
  std::unordered_map<const ProbeInfo*, ProbeEntry> by_probe_;
  std::vector<std::shared_ptr<const ProbeInfo>> pinned_;  // keeps by_probe_'s keys unique
  std::vector<Stats*> touched_;
  std::uint64_t interval_start_ns_ = 0;
  std::deque<Pending> pending_;
  std::deque<Slow> slow_;                      // oldest first
  std::vector<SlowInterval> slow_intervals_;   // of the last interval
  std::map<RepeatKey, std::uint64_t> newest_;  // the sequence number of each key's newest kept anomaly
  std::uint64_t next_seq_ = 0;                 // the sequence number of the next kept anomaly
  AnomalySummary summary_;
};

}  // namespace eacgm::analysis
